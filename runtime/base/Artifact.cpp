//===- Artifact.cpp - verify and print an artifact of any target ----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The bytes are untrusted: the FlatBuffers verifier proves every offset and
// length lies inside the buffer before any accessor runs, and the checks
// below prove what readers of every target then index without a check.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Artifact.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

using namespace gpuopt::runtime;
namespace fb = gpuopt::artifact;

namespace {

/// Verifier limits: nesting of the schema is at most 6 tables deep; a plan of
/// ~1M launches and buffers is far beyond any model of the zoo (Rolling-UNet-L
/// has a few thousand).
constexpr flatbuffers::uoffset_t kMaxDepth = 32;
constexpr flatbuffers::uoffset_t kMaxTables = 4u << 20;

/// Whether the elements of a shape (if any) are 8-byte aligned in memory. The
/// FlatBuffers verifier checks a vector's length prefix only (4-byte
/// aligned): every writer aligns [long] elements, a damaged buffer may not.
bool isAlignedShape(const flatbuffers::Vector<int64_t> &shape) {
  return shape.size() == 0 ||
         reinterpret_cast<uintptr_t>(shape.data()) % alignof(int64_t) == 0;
}

Status fail(const std::string &what, const std::string &why) {
  return Status::error(what + ": invalid gpuopt artifact: " + why);
}

/// CRC-32 as zlib computes it (IEEE 802.3 polynomial, reflected), one byte
/// at a time through a table built at compile time. Not the FNV-1a of a
/// library's metadata note (CompiledModel.h): a CRC-32 detects every burst
/// of up to 32 damaged bits, and Python tools compute it with zlib.
constexpr std::array<uint32_t, 256> makeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = makeCrcTable();

/// `crc` (a finished CRC-32 of earlier bytes; 0 for none) extended by `n`
/// bytes.
uint32_t crc32Update(uint32_t crc, const uint8_t *p, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i)
    crc = kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

template <typename T>
bool readLittle(const uint8_t *data, size_t size, size_t at, T &out) {
  if (at > size || size - at < sizeof(T))
    return false;
  std::memcpy(&out, data + at, sizeof(T));
  return true;
}

/// The byte offset of Model.checksum's value in `data`, or 0 when the buffer
/// does not store it (or its root table or vtable lie outside the buffer):
/// the root offset, the table's signed offset to its vtable, the field's
/// slot in the vtable (FlatBuffers' wire format; little-endian, as x86).
size_t findChecksum(const uint8_t *data, size_t size) {
  uint32_t root;
  int32_t toVtable;
  if (!readLittle(data, size, 0, root) ||
      !readLittle(data, size, root, toVtable))
    return 0;
  int64_t vtable = int64_t(root) - toVtable;
  uint16_t vtableBytes, field;
  if (vtable < 0 || !readLittle(data, size, size_t(vtable), vtableBytes) ||
      vtableBytes < fb::Model::VT_CHECKSUM + sizeof(uint16_t) ||
      !readLittle(data, size, size_t(vtable) + fb::Model::VT_CHECKSUM, field) ||
      field == 0)
    return 0;
  size_t at = size_t(root) + field;
  uint32_t value;
  return readLittle(data, size, at, value) ? at : 0;
}

/// The checksum of `data` with the four bytes at `at` (findChecksum's
/// offset; 0: none) read as zero.
uint32_t checksumWithout(const uint8_t *data, size_t size, size_t at) {
  if (at == 0)
    return crc32Update(0, data, size);
  static constexpr uint8_t kZero[sizeof(uint32_t)] = {};
  uint32_t crc = crc32Update(0, data, at);
  crc = crc32Update(crc, kZero, sizeof(kZero));
  return crc32Update(crc, data + at + sizeof(kZero), size - at - sizeof(kZero));
}

} // namespace

Status gpuopt::runtime::checkTensorType(const fb::TensorType &type,
                                        const std::string &where) {
  const auto *shape = type.shape();
  // The verifier aligns a vector's length, not its 8-byte elements: a
  // writer aligns them, a damaged buffer may not (reading them would be a
  // misaligned load).
  if (!isAlignedShape(*shape))
    return Status::error(where + " has a misaligned shape (damaged buffer)");
  if (shape->size() > kArtifactMaxRank)
    return Status::error(where + " has rank " + std::to_string(shape->size()) +
                         ", more than " + std::to_string(kArtifactMaxRank));
  if (type.dtype() > fb::DType::MAX)
    return Status::error(where + " has an unknown dtype " +
                         std::to_string(static_cast<int>(type.dtype())));
  std::vector<int64_t> dims;
  for (int64_t d : *shape) {
    if (d < 0)
      return Status::error(where + " has a negative dimension");
    dims.push_back(d);
  }
  uint64_t bytes = 0;
  if (!denseByteSize(dims, toDType(type.dtype()), bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return Status::error(where + " " + formatShape(dims) +
                         ": its byte size overflows int64");
  return Status::ok();
}

namespace {

Status checkTypes(
    const std::string &what,
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorType>> &types,
    const char *name) {
  for (flatbuffers::uoffset_t i = 0; i < types.size(); ++i) {
    std::string where = std::string(name) + " " + std::to_string(i);
    if (Status s = checkTensorType(*types.Get(i), where); !s)
      return fail(what, s.message());
    if (types.Get(i)->dtype() != fb::DType::F32)
      return fail(what, where + " is not f32");
  }
  return Status::ok();
}

} // namespace

// The conversions below cast: the two enums must list the same types in the
// same order.
#define GPUOPT_SAME_DTYPE(NAME)                                                \
  static_assert(static_cast<int>(DType::NAME) ==                               \
                    static_cast<int>(fb::DType::NAME),                         \
                "runtime::DType and the schema's DType differ at " #NAME);
GPUOPT_SAME_DTYPE(F16)
GPUOPT_SAME_DTYPE(BF16)
GPUOPT_SAME_DTYPE(F32)
GPUOPT_SAME_DTYPE(F64)
GPUOPT_SAME_DTYPE(I8)
GPUOPT_SAME_DTYPE(I16)
GPUOPT_SAME_DTYPE(I32)
GPUOPT_SAME_DTYPE(I64)
GPUOPT_SAME_DTYPE(U8)
GPUOPT_SAME_DTYPE(BOOL)
#undef GPUOPT_SAME_DTYPE
static_assert(static_cast<int>(fb::DType::MAX) == static_cast<int>(DType::BOOL),
              "the schema has a dtype the runtime does not know");

DType gpuopt::runtime::toDType(fb::DType dtype) {
  return static_cast<DType>(static_cast<int>(dtype));
}

fb::DType gpuopt::runtime::toArtifactDType(DType dtype) {
  return static_cast<fb::DType>(static_cast<int>(dtype));
}

std::vector<int64_t> gpuopt::runtime::tensorShape(const fb::TensorType &type) {
  return std::vector<int64_t>(type.shape()->begin(), type.shape()->end());
}

const char *gpuopt::runtime::artifactTargetName(const fb::Model &model) {
  switch (model.program_type()) {
  case fb::Program::CpuProgram:
    return "cpu";
  case fb::Program::CudaProgram:
    return "cuda";
  default:
    return "unknown";
  }
}

Status gpuopt::runtime::verifyArtifact(const uint8_t *data, size_t size,
                                       const std::string &what,
                                       const fb::Model *&out) {
  out = nullptr;
  if (size < 8 || !fb::ModelBufferHasIdentifier(data))
    return fail(what, "missing the GPOA identifier (not made by "
                      "gpuopt-compile?)");
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return fail(what, std::to_string(size) + " bytes, more than a FlatBuffer "
                                             "can address");
  flatbuffers::Verifier verifier(data, size, kMaxDepth, kMaxTables);
  if (!fb::VerifyModelBuffer(verifier))
    return fail(what, "the buffer does not verify against the schema "
                      "(truncated or damaged)");
  const fb::Model *model = fb::GetModel(data);
  if (model->version() != kArtifactVersion)
    return fail(what, "version " + std::to_string(model->version()) +
                          ", this runtime reads version " +
                          std::to_string(kArtifactVersion));
  if (size_t at = findChecksum(data, size)) {
    uint32_t computed = checksumWithout(data, size, at);
    if (computed != model->checksum()) {
      char text[96];
      std::snprintf(text, sizeof(text),
                    "checksum mismatch: it records CRC-32 %08x, its bytes "
                    "give %08x",
                    model->checksum(), computed);
      return fail(what, std::string(text) +
                            " (damaged after gpuopt-compile wrote it)");
    }
  }
  if (model->program_type() == fb::Program::NONE ||
      model->program_type() > fb::Program::MAX || !model->program())
    return fail(what,
                "a program of unknown kind " +
                    std::to_string(static_cast<int>(model->program_type())) +
                    " (made by a newer gpuopt?)");
  std::set<std::string> names;
  for (flatbuffers::uoffset_t i = 0; i < model->params()->size(); ++i) {
    const fb::Param *p = model->params()->Get(i);
    std::string name = p->name()->str();
    if (name.empty())
      return fail(what, "parameter " + std::to_string(i) + " has no name");
    if (!names.insert(name).second)
      return fail(what, "parameter '" + name + "' appears twice");
    if (Status s = checkTensorType(*p->type(), "parameter '" + name + "'"); !s)
      return fail(what, s.message());
  }
  if (Status s = checkTypes(what, *model->inputs(), "input"); !s)
    return s;
  if (Status s = checkTypes(what, *model->outputs(), "output"); !s)
    return s;
  out = model;
  return Status::ok();
}

uint32_t gpuopt::runtime::computeArtifactChecksum(const uint8_t *data,
                                                  size_t size) {
  return checksumWithout(data, size, findChecksum(data, size));
}

bool gpuopt::runtime::hasArtifactChecksum(const uint8_t *data, size_t size) {
  return findChecksum(data, size) != 0;
}

bool gpuopt::runtime::stampArtifactChecksum(std::vector<uint8_t> &bytes) {
  size_t at = findChecksum(bytes.data(), bytes.size());
  if (at == 0)
    return false;
  uint32_t crc = checksumWithout(bytes.data(), bytes.size(), at);
  std::memcpy(bytes.data() + at, &crc, sizeof(crc));
  return true;
}
