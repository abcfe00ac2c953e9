//===- Json.cpp - strict JSON parser of the gpuopt runtime ----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A recursive-descent parser over a bounded byte range. Every read checks the
// remaining length first, and recursion is bounded by the nesting limit, so
// that hostile input can only produce an error.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <locale>
#include <set>
#include <sstream>

namespace gpuopt {
namespace runtime {
namespace json {

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Integer:
    return "integer";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "value";
}

bool Value::getUInt64(uint64_t &out) const {
  if (kind != Kind::Integer || negative)
    return false;
  out = magnitude;
  return true;
}

bool Value::getInt64(int64_t &out) const {
  constexpr uint64_t maxPositive = std::numeric_limits<int64_t>::max();
  if (kind != Kind::Integer || magnitude > maxPositive + negative)
    return false;
  // Negating in uint64 and converting back avoids overflowing on INT64_MIN.
  out = negative ? static_cast<int64_t>(0 - magnitude)
                 : static_cast<int64_t>(magnitude);
  return true;
}

const Value *Value::find(const std::string &key) const {
  for (const Member &member : members)
    if (member.key == key)
      return &member.value;
  return nullptr;
}

/// Decodes the UTF-8 sequence at `p` (of `n` available bytes) into `cp`.
/// Returns its length, or 0 if it is malformed, overlong, a surrogate or
/// beyond U+10FFFF.
static size_t decodeUtf8(const unsigned char *p, size_t n, uint32_t &cp) {
  if (n == 0)
    return 0;
  unsigned char lead = p[0];
  size_t len;
  uint32_t min;
  if (lead < 0x80) {
    cp = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    len = 2;
    min = 0x80;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    len = 3;
    min = 0x800;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    len = 4;
    min = 0x10000;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

static void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool isValidUtf8(const std::string &text) {
  const auto *p = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  uint32_t cp;
  for (size_t i = 0; i < n;) {
    size_t len = decodeUtf8(p + i, n - i, cp);
    if (len == 0)
      return false;
    i += len;
  }
  return true;
}

void appendQuoted(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof(escape), "\\u%04x",
                      static_cast<unsigned>(c));
        out += escape;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

namespace {

class Parser {
public:
  Parser(const char *input, size_t inputSize, unsigned depthLimit)
      : text(reinterpret_cast<const unsigned char *>(input)), size(inputSize),
        maxDepth(depthLimit) {}

  Status run(Value &out) {
    skipWhitespace();
    if (parseValue(out, 0)) {
      skipWhitespace();
      if (pos == size)
        return Status::ok();
      fail(pos, "unexpected " + describe(pos) + " after the value");
    }
    return Status::error(error + " at byte " + std::to_string(errorPos));
  }

private:
  const unsigned char *text;
  size_t size;
  unsigned maxDepth;
  size_t pos = 0;
  std::string error;
  size_t errorPos = 0;

  bool fail(size_t at, std::string message) {
    errorPos = at;
    error = std::move(message);
    return false;
  }

  /// Names the byte at `at` for a message.
  std::string describe(size_t at) const {
    if (at >= size)
      return "end of input";
    char buffer[16];
    unsigned char c = text[at];
    if (c >= 0x20 && c < 0x7F)
      std::snprintf(buffer, sizeof(buffer), "'%c'", c);
    else
      std::snprintf(buffer, sizeof(buffer), "byte 0x%02x", c);
    return buffer;
  }

  void skipWhitespace() {
    while (pos < size && (text[pos] == ' ' || text[pos] == '\t' ||
                          text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consumeWord(const char *word) {
    size_t len = std::strlen(word);
    if (size - pos < len || std::memcmp(text + pos, word, len) != 0)
      return fail(pos, "invalid literal");
    pos += len;
    return true;
  }

  bool parseValue(Value &out, unsigned depth) {
    if (pos >= size)
      return fail(pos, "expected a value, found end of input");
    switch (text[pos]) {
    case '{':
    case '[':
      if (depth >= maxDepth)
        return fail(pos, "nesting deeper than " + std::to_string(maxDepth) +
                             " levels");
      return text[pos] == '{' ? parseObject(out, depth + 1)
                              : parseArray(out, depth + 1);
    case '"':
      out.kind = Kind::String;
      return parseString(out.string);
    case 't':
    case 'f':
      out.kind = Kind::Bool;
      out.boolean = text[pos] == 't';
      return consumeWord(out.boolean ? "true" : "false");
    case 'n':
      out.kind = Kind::Null;
      return consumeWord("null");
    default:
      if (text[pos] == '-' || (text[pos] >= '0' && text[pos] <= '9'))
        return parseNumber(out);
      return fail(pos, "expected a value, found " + describe(pos));
    }
  }

  bool parseObject(Value &out, unsigned depth) {
    out.kind = Kind::Object;
    ++pos;
    skipWhitespace();
    if (pos < size && text[pos] == '}') {
      ++pos;
      return true;
    }
    std::set<std::string> seen;
    while (true) {
      if (pos >= size || text[pos] != '"')
        return fail(pos, "expected a string key, found " + describe(pos));
      size_t keyPos = pos;
      Member member;
      if (!parseString(member.key))
        return false;
      if (!seen.insert(member.key).second)
        return fail(keyPos, "duplicate key '" + member.key + "'");
      skipWhitespace();
      if (pos >= size || text[pos] != ':')
        return fail(pos, "expected ':', found " + describe(pos));
      ++pos;
      skipWhitespace();
      if (!parseValue(member.value, depth))
        return false;
      out.members.push_back(std::move(member));
      skipWhitespace();
      if (pos < size && text[pos] == '}') {
        ++pos;
        return true;
      }
      if (pos >= size || text[pos] != ',')
        return fail(pos, "expected ',' or '}', found " + describe(pos));
      ++pos;
      skipWhitespace();
    }
  }

  bool parseArray(Value &out, unsigned depth) {
    out.kind = Kind::Array;
    ++pos;
    skipWhitespace();
    if (pos < size && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      out.elements.emplace_back();
      if (!parseValue(out.elements.back(), depth))
        return false;
      skipWhitespace();
      if (pos < size && text[pos] == ']') {
        ++pos;
        return true;
      }
      if (pos >= size || text[pos] != ',')
        return fail(pos, "expected ',' or ']', found " + describe(pos));
      ++pos;
      skipWhitespace();
    }
  }

  /// Reads the 4 hex digits of a \u escape at `pos`.
  bool parseHex4(uint32_t &out) {
    if (size - pos < 4)
      return fail(pos, "truncated \\u escape");
    out = 0;
    for (size_t i = 0; i < 4; ++i) {
      unsigned char c = text[pos + i];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        return fail(pos + i, "invalid hex digit in \\u escape");
      out = out * 16 + digit;
    }
    pos += 4;
    return true;
  }

  /// Parses the escape after a backslash at `pos - 1`.
  bool parseEscape(std::string &out) {
    size_t escapePos = pos - 1;
    if (pos >= size)
      return fail(escapePos, "unterminated string");
    unsigned char c = text[pos++];
    switch (c) {
    case '"':
    case '\\':
    case '/':
      out += static_cast<char>(c);
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      break;
    default:
      return fail(escapePos, "invalid escape '\\" + std::string(1, c) + "'");
    }
    uint32_t cp;
    if (!parseHex4(cp))
      return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
      return fail(escapePos, "unpaired low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // UTF-16 escapes encode non-BMP characters as a surrogate pair.
      uint32_t low;
      if (size - pos < 2 || text[pos] != '\\' || text[pos + 1] != 'u')
        return fail(escapePos, "unpaired high surrogate in \\u escape");
      pos += 2;
      if (!parseHex4(low))
        return false;
      if (low < 0xDC00 || low > 0xDFFF)
        return fail(escapePos, "unpaired high surrogate in \\u escape");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    appendUtf8(out, cp);
    return true;
  }

  bool parseString(std::string &out) {
    size_t start = pos++;
    while (true) {
      if (pos >= size)
        return fail(start, "unterminated string");
      unsigned char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (c == '\\') {
        ++pos;
        if (!parseEscape(out))
          return false;
        continue;
      }
      if (c < 0x20)
        return fail(pos, "unescaped control character in string");
      uint32_t cp;
      size_t len = decodeUtf8(text + pos, size - pos, cp);
      if (len == 0)
        return fail(pos, "invalid UTF-8 in string");
      out.append(reinterpret_cast<const char *>(text + pos), len);
      pos += len;
    }
  }

  bool isDigit(size_t at) const {
    return at < size && text[at] >= '0' && text[at] <= '9';
  }

  bool parseNumber(Value &out) {
    size_t start = pos;
    bool negative = text[pos] == '-';
    if (negative)
      ++pos;
    if (!isDigit(pos))
      return fail(pos, "expected a digit, found " + describe(pos));
    if (text[pos] == '0' && isDigit(pos + 1))
      return fail(pos, "leading zeros are not allowed");
    uint64_t magnitude = 0;
    bool overflow = false;
    for (; isDigit(pos); ++pos) {
      uint64_t digit = text[pos] - '0';
      if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10)
        overflow = true;
      else
        magnitude = magnitude * 10 + digit;
    }
    bool isInteger = true;
    if (pos < size && text[pos] == '.') {
      isInteger = false;
      ++pos;
      if (!isDigit(pos))
        return fail(pos, "expected a digit after '.', found " + describe(pos));
      while (isDigit(pos))
        ++pos;
    }
    if (pos < size && (text[pos] == 'e' || text[pos] == 'E')) {
      isInteger = false;
      ++pos;
      if (pos < size && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!isDigit(pos))
        return fail(pos,
                    "expected a digit in the exponent, found " + describe(pos));
      while (isDigit(pos))
        ++pos;
    }
    if (isInteger) {
      constexpr uint64_t minMagnitude =
          uint64_t(std::numeric_limits<int64_t>::max()) + 1;
      if (overflow || (negative && magnitude > minMagnitude))
        return fail(start, "integer out of the 64-bit range");
      out.kind = Kind::Integer;
      out.negative = negative && magnitude != 0;
      out.magnitude = magnitude;
      return true;
    }
    // The grammar above is a subset of what the classic locale accepts, so
    // the conversion cannot stop early; it fails only on overflow.
    std::istringstream stream(
        std::string(reinterpret_cast<const char *>(text + start), pos - start));
    stream.imbue(std::locale::classic());
    double number = 0;
    if (!(stream >> number) || !std::isfinite(number))
      return fail(start, "number out of the double range");
    out.kind = Kind::Number;
    out.number = number;
    return true;
  }
};

} // namespace

Status parse(const char *text, size_t size, Value &out, unsigned maxDepth) {
  out = Value();
  return Parser(text, size, maxDepth).run(out);
}

} // namespace json
} // namespace runtime
} // namespace gpuopt
