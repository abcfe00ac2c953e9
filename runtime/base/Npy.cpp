//===- Npy.cpp - .npy reader and writer -----------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The .npy header is a Python dict literal. Rather than evaluating Python, the
// reader accepts the subset numpy writes: string keys, a quoted descr, a
// True/False fortran_order and a tuple of non-negative integers as the shape.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Npy.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace gpuopt {
namespace runtime {

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicBytes = sizeof(kMagic) - 1;
/// numpy aligns the data section to this many bytes.
static constexpr size_t kAlignment = 64;

namespace {

/// The fields of a .npy header dict.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict; a failure leaves its message in `error`.
class HeaderParser {
public:
  HeaderParser(const uint8_t *header, size_t headerSize)
      : text(header), size(headerSize) {}

  bool parse(NpyHeader &header) {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!expect('{'))
      return false;
    while (true) {
      skipSpace();
      if (peek('}'))
        break;
      std::string key;
      size_t keyPos = pos;
      if (!parseString(key))
        return false;
      skipSpace();
      if (!expect(':'))
        return false;
      skipSpace();
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenFortran
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return fail(keyPos, "unexpected key '" + key + "'");
      if (*seen)
        return fail(keyPos, "duplicate key '" + key + "'");
      *seen = true;
      if (key == "descr" && !parseDescr(header.descr))
        return false;
      if (key == "fortran_order" && !parseBool(header.fortranOrder))
        return false;
      if (key == "shape" && !parseShape(header.shape))
        return false;
      skipSpace();
      if (peek('}'))
        break;
      if (!expect(','))
        return false;
    }
    ++pos;
    skipSpace();
    if (pos != size)
      return fail(pos, "unexpected characters after the dict");
    if (!seenDescr || !seenFortran || !seenShape)
      return fail(pos, std::string("missing '") +
                           (!seenDescr     ? "descr"
                            : !seenFortran ? "fortran_order"
                                           : "shape") +
                           "'");
    return true;
  }

  std::string error;

private:
  const uint8_t *text;
  size_t size;
  size_t pos = 0;

  bool fail(size_t at, const std::string &message) {
    error = message + " at byte " + std::to_string(at) + " of the header";
    return false;
  }

  void skipSpace() {
    while (pos < size && (text[pos] == ' ' || text[pos] == '\t' ||
                          text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool peek(char c) const { return pos < size && text[pos] == c; }

  bool expect(char c) {
    if (!peek(c))
      return fail(pos, std::string("expected '") + c + "'");
    ++pos;
    return true;
  }

  /// A quoted string without escapes, which numpy's keys and dtypes never
  /// need.
  bool parseString(std::string &out) {
    if (!peek('\'') && !peek('"'))
      return fail(pos, "expected a quoted string");
    uint8_t quote = text[pos];
    size_t start = ++pos;
    while (pos < size && text[pos] != quote) {
      if (text[pos] < 0x20 || text[pos] >= 0x7F || text[pos] == '\\')
        return fail(pos, "unsupported character in a string");
      ++pos;
    }
    if (pos == size)
      return fail(start - 1, "unterminated string");
    out.assign(reinterpret_cast<const char *>(text + start), pos - start);
    ++pos;
    return true;
  }

  bool parseDescr(std::string &out) {
    // A list here is a structured dtype.
    if (!peek('\'') && !peek('"'))
      return fail(pos, "unsupported structured dtype; gpuopt reads float32 "
                       "little-endian ('<f4')");
    return parseString(out);
  }

  bool parseWord(const char *word) {
    size_t len = std::strlen(word);
    if (size - pos < len || std::memcmp(text + pos, word, len) != 0)
      return false;
    pos += len;
    return true;
  }

  bool parseBool(bool &out) {
    if (parseWord("True"))
      out = true;
    else if (parseWord("False"))
      out = false;
    else
      return fail(pos, "expected True or False");
    return true;
  }

  bool parseDimension(int64_t &out) {
    size_t start = pos;
    if (pos >= size || text[pos] < '0' || text[pos] > '9')
      return fail(pos, "expected a non-negative integer");
    if (text[pos] == '0' && pos + 1 < size && text[pos + 1] >= '0' &&
        text[pos + 1] <= '9')
      return fail(pos, "leading zeros are not allowed");
    out = 0;
    for (; pos < size && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
      int64_t digit = text[pos] - '0';
      if (out > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return fail(start, "dimension out of the int64 range");
      out = out * 10 + digit;
    }
    return true;
  }

  /// A Python tuple: `()`, `(5,)`, `(2, 3)` or `(2, 3,)`; `(5)` is an int.
  bool parseShape(std::vector<int64_t> &out) {
    size_t start = pos;
    if (!expect('('))
      return false;
    bool trailingComma = false;
    while (true) {
      skipSpace();
      if (peek(')'))
        break;
      int64_t dim;
      if (!parseDimension(dim))
        return false;
      out.push_back(dim);
      skipSpace();
      trailingComma = peek(',');
      if (!trailingComma)
        break;
      ++pos;
    }
    if (!expect(')'))
      return false;
    if (out.size() == 1 && !trailingComma)
      return fail(start, "shape is not a tuple; a 1-D shape is written (N,)");
    return true;
  }
};

} // namespace

Status parseNpy(const uint8_t *bytes, size_t size, const std::string &what,
                HostTensor &out, const std::shared_ptr<const void> &owner) {
  auto error = [&](const std::string &message) {
    return Status::error(what + ": " + message);
  };
  if (size == 0)
    return error("empty file");
  if (std::memcmp(bytes, kMagic, std::min(size, kMagicBytes)) != 0)
    return error("not a .npy file (no \\x93NUMPY magic)");
  if (size < kMagicBytes + 2)
    return error("truncated: the file ends inside the .npy preamble");
  unsigned major = bytes[kMagicBytes], minor = bytes[kMagicBytes + 1];
  if (major < 1 || major > 3 || minor != 0)
    return error("unsupported .npy version " + std::to_string(major) + "." +
                 std::to_string(minor));
  // Version 1.0 has a 2-byte header length; 2.0 and 3.0 a 4-byte one.
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t headerStart = kMagicBytes + 2 + lengthBytes;
  if (size < headerStart)
    return error("truncated: the file ends inside the .npy preamble");
  size_t headerBytes = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerBytes |= size_t(bytes[kMagicBytes + 2 + i]) << (8 * i);
  if (headerBytes > size - headerStart)
    return error("truncated: header length " + std::to_string(headerBytes) +
                 " exceeds the " + std::to_string(size - headerStart) +
                 " bytes after the preamble");

  NpyHeader header;
  HeaderParser parser(bytes + headerStart, headerBytes);
  if (!parser.parse(header))
    return error("malformed .npy header: " + parser.error);
  if (header.descr != "<f4")
    return error("unsupported dtype '" + header.descr +
                 "'; gpuopt reads float32 little-endian ('<f4')");
  if (header.fortranOrder)
    return error("Fortran-order arrays are not supported; gpuopt reads "
                 "C-order arrays");
  uint64_t expected;
  if (!denseByteSize(header.shape, DType::F32, expected))
    return error("shape " + formatShape(header.shape) + " is too large");
  size_t dataStart = headerStart + headerBytes;
  uint64_t found = size - dataStart;
  if (found < expected)
    return error("truncated: expected " + std::to_string(expected) +
                 " bytes of data, found " + std::to_string(found));
  if (found > expected)
    return error("expected " + std::to_string(expected) +
                 " bytes of data, found " + std::to_string(found) +
                 " (trailing bytes after the array)");

  out.dtype = DType::F32;
  out.shape = std::move(header.shape);
  const uint8_t *first = bytes + dataStart;
  if (owner && reinterpret_cast<uintptr_t>(first) % alignof(float) == 0)
    out.data.view(owner, first, size - dataStart);
  else
    out.data.assign(first, bytes + size);
  return Status::ok();
}

Status readNpy(const std::string &path, HostTensor &out) {
  std::shared_ptr<const MappedFile> file;
  if (Status status = MappedFile::map(path, file, kMaxReadBytes); !status)
    return status;
  return parseNpy(file->data(), file->size(), path, out, file);
}

Status writeNpy(const std::string &path, const HostTensor &tensor) {
  if (tensor.dtype != DType::F32)
    return Status::error(path + ": .npy output must be F32, not " +
                         std::string(dtypeName(tensor.dtype)));
  uint64_t bytes;
  if (!denseByteSize(tensor.shape, tensor.dtype, bytes) ||
      bytes != tensor.data.size())
    return Status::error(
        path + ": tensor holds " + std::to_string(tensor.data.size()) +
        " bytes, which do not match F32 " + formatShape(tensor.shape));

  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    header += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  header += tensor.shape.size() == 1 ? ",), }" : "), }";
  // Like numpy: pad with spaces and end in '\n' so that the data starts at a
  // multiple of kAlignment.
  size_t preamble = kMagicBytes + 2 + 2;
  header.append((kAlignment - (preamble + header.size() + 1) % kAlignment) %
                    kAlignment,
                ' ');
  header += '\n';
  if (header.size() > std::numeric_limits<uint16_t>::max())
    return Status::error(path + ": shape " + formatShape(tensor.shape) +
                         " does not fit a version 1.0 .npy header");

  std::vector<uint8_t> image(kMagic, kMagic + kMagicBytes);
  image.push_back(1);
  image.push_back(0);
  image.push_back(static_cast<uint8_t>(header.size()));
  image.push_back(static_cast<uint8_t>(header.size() >> 8));
  image.insert(image.end(), header.begin(), header.end());
  image.insert(image.end(), tensor.data.begin(), tensor.data.end());
  return writeFileBytes(path, image.data(), image.size());
}

} // namespace runtime
} // namespace gpuopt
