//===- Json.h - strict JSON parser of the gpuopt runtime --------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A small RFC 8259 parser for the headers the runtime reads (safetensors). It
// is private to the runtime, which links only the C++ standard library. It is
// strict because its input is untrusted: the text must be valid UTF-8,
// duplicate object keys, trailing commas, leading zeros and integers outside
// the 64-bit ranges are errors, and nesting is limited so that recursion
// cannot exhaust the stack. A parsed value takes about 100 bytes, so callers
// bound the input size (safetensors: SafetensorsLimits::maxHeaderBytes).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_RUNTIME_JSON_H
#define GPUOPT_LIB_RUNTIME_JSON_H

#include "gpuopt/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {
namespace json {

enum class Kind : uint8_t {
  Null,
  Bool,
  Integer,
  Number,
  String,
  Array,
  Object
};

/// "null", "boolean", "integer", "number", "string", "array" or "object".
const char *kindName(Kind kind);

struct Member;

/// One parsed value. Only the fields of its `kind` are meaningful.
struct Value {
  Kind kind = Kind::Null;
  /// Kind::Bool.
  bool boolean = false;
  /// Kind::Integer: the value is `negative ? -magnitude : magnitude`, so that
  /// both the int64 and the uint64 ranges are representable exactly.
  bool negative = false;
  uint64_t magnitude = 0;
  /// Kind::Number: a literal with a fraction or an exponent.
  double number = 0;
  /// Kind::String, decoded to UTF-8.
  std::string string;
  /// Kind::Array.
  std::vector<Value> elements;
  /// Kind::Object, in source order; keys are unique.
  std::vector<Member> members;

  /// Stores a non-negative integer in `out`; false for anything else.
  bool getUInt64(uint64_t &out) const;
  /// Stores an integer in the int64 range in `out`; false for anything else.
  bool getInt64(int64_t &out) const;
  /// The member named `key` of an object, or null.
  const Value *find(const std::string &key) const;
};

struct Member {
  std::string key;
  Value value;
};

/// Parses `size` bytes of `text` as one JSON value surrounded by optional
/// whitespace. On failure the message says what is wrong "at byte N" of
/// `text`; `out` is then unspecified.
Status parse(const char *text, size_t size, Value &out, unsigned maxDepth = 64);

/// Appends `text` to `out` as a quoted JSON string literal.
void appendQuoted(std::string &out, const std::string &text);

/// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates).
bool isValidUtf8(const std::string &text);

} // namespace json
} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_LIB_RUNTIME_JSON_H
