//===- Safetensors.cpp - validating safetensors reader --------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The reader validates the whole header (every entry, size and offset, with
// overflow-checked arithmetic) before copying any tensor byte. Like the
// reference implementation, it requires the tensors to tile the data section
// exactly: overlaps, holes and trailing bytes are errors, which also keeps a
// file from smuggling unindexed content.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Safetensors.h"
#include "Json.h"
#include "gpuopt/Runtime/FileIO.h"

#include <algorithm>

namespace gpuopt {
namespace runtime {

namespace {

/// A validated tensor entry whose bytes are not copied yet.
struct Entry {
  const std::string *name;
  HostTensor tensor;
  uint64_t begin;
  uint64_t end;
};

} // namespace

/// The header length field that precedes the JSON.
static constexpr size_t kLengthBytes = 8;

static std::string formatRange(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

static bool parseDType(const std::string &name, DType &dtype) {
  for (DType candidate :
       {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I8, DType::I16,
        DType::I32, DType::I64, DType::U8, DType::BOOL}) {
    if (name == dtypeName(candidate)) {
      dtype = candidate;
      return true;
    }
  }
  return false;
}

/// Validates the header entry `value` of a tensor against a data section of
/// `dataSize` bytes; returns an empty string or what is wrong.
static std::string parseEntry(const json::Value &value, uint64_t dataSize,
                              const SafetensorsLimits &limits, Entry &entry) {
  if (value.kind != json::Kind::Object)
    return std::string("expected an object, found ") +
           json::kindName(value.kind);
  for (const json::Member &member : value.members)
    if (member.key != "dtype" && member.key != "shape" &&
        member.key != "data_offsets")
      return "unexpected key '" + escapeName(member.key) + "'";
  for (const char *key : {"dtype", "shape", "data_offsets"})
    if (!value.find(key))
      return std::string("missing '") + key + "'";
  const json::Value *dtype = value.find("dtype");
  const json::Value *shape = value.find("shape");
  const json::Value *offsets = value.find("data_offsets");

  if (dtype->kind != json::Kind::String)
    return std::string("'dtype' must be a string, found ") +
           json::kindName(dtype->kind);
  if (!parseDType(dtype->string, entry.tensor.dtype))
    return "unsupported dtype '" + escapeName(dtype->string) +
           "'; gpuopt reads F16, BF16, F32, F64, I8, I16, I32, I64, U8 and "
           "BOOL";

  if (shape->kind != json::Kind::Array)
    return std::string("'shape' must be an array, found ") +
           json::kindName(shape->kind);
  if (shape->elements.size() > limits.maxRank)
    return "rank " + std::to_string(shape->elements.size()) +
           " exceeds the limit of " + std::to_string(limits.maxRank);
  for (const json::Value &dim : shape->elements) {
    int64_t extent;
    if (!dim.getInt64(extent) || extent < 0)
      return "shape entries must be non-negative integers";
    entry.tensor.shape.push_back(extent);
  }
  uint64_t bytes;
  if (!denseByteSize(entry.tensor.shape, entry.tensor.dtype, bytes))
    return "shape " + formatShape(entry.tensor.shape) + " is too large";

  if (offsets->kind != json::Kind::Array || offsets->elements.size() != 2 ||
      !offsets->elements[0].getUInt64(entry.begin) ||
      !offsets->elements[1].getUInt64(entry.end))
    return "'data_offsets' must be two non-negative integers";
  std::string range = "data_offsets " + formatRange(entry.begin, entry.end);
  if (entry.begin > entry.end)
    return range + " end before they begin";
  if (entry.end > dataSize)
    return range + " exceed the data section (" + std::to_string(dataSize) +
           " bytes)";
  if (entry.end - entry.begin != bytes)
    return range + " hold " + std::to_string(entry.end - entry.begin) +
           " bytes, but " + dtype->string + " " +
           formatShape(entry.tensor.shape) + " needs " + std::to_string(bytes);
  return "";
}

Status parseSafetensors(const uint8_t *bytes, size_t size,
                        const std::string &what, SafetensorsFile &out,
                        const SafetensorsLimits &limits,
                        const std::shared_ptr<const void> &owner) {
  auto error = [&](const std::string &message) {
    return Status::error(what + ": " + message);
  };
  // torch.save writes a zip archive (or, before PyTorch 1.6, a pickle). A
  // safetensors header of 640, 896, 1152 or 1408 bytes starts its length
  // with the bytes of a pickle's protocol mark (0x80, 2..5): its JSON
  // header's '{' after the length tells them apart.
  bool zip = size >= 4 && bytes[0] == 'P' && bytes[1] == 'K' && bytes[2] == 3 &&
             bytes[3] == 4;
  bool json = size > kLengthBytes && bytes[kLengthBytes] == '{';
  bool pickle =
      !json && size >= 2 && bytes[0] == 0x80 && bytes[1] >= 2 && bytes[1] <= 5;
  if (zip || pickle)
    return error("a PyTorch checkpoint (torch.save), not safetensors; "
                 "convert it with: python -m gpuopt.weights convert " +
                 what + " OUT.safetensors");
  if (size < kLengthBytes)
    return error("file of " + std::to_string(size) +
                 " bytes is too short for the 8-byte header length");
  uint64_t headerBytes = 0;
  for (size_t i = 0; i < kLengthBytes; ++i)
    headerBytes |= uint64_t(bytes[i]) << (8 * i);
  if (headerBytes > size - kLengthBytes)
    return error("header length " + std::to_string(headerBytes) +
                 " exceeds the file (" + std::to_string(size) + " bytes)");
  if (headerBytes > limits.maxHeaderBytes)
    return error("header length " + std::to_string(headerBytes) +
                 " exceeds the limit of " +
                 std::to_string(limits.maxHeaderBytes) + " bytes");

  json::Value header;
  // JSON messages end in "at byte N", counted from the header's start.
  if (Status status =
          json::parse(reinterpret_cast<const char *>(bytes) + kLengthBytes,
                      headerBytes, header);
      !status)
    return error("invalid header JSON: " + status.message() + " of the header");
  if (header.kind != json::Kind::Object)
    return error(std::string("header is a JSON ") +
                 json::kindName(header.kind) + ", not an object");

  const uint8_t *data = bytes + kLengthBytes + headerBytes;
  uint64_t dataSize = size - kLengthBytes - headerBytes;
  SafetensorsFile file;
  const json::Value *metadata = header.find("__metadata__");
  uint64_t tensorCount = header.members.size() - (metadata ? 1 : 0);
  if (tensorCount > limits.maxTensors)
    return error(std::to_string(tensorCount) + " tensors exceed the limit of " +
                 std::to_string(limits.maxTensors));
  if (metadata) {
    if (metadata->kind != json::Kind::Object)
      return error(std::string("'__metadata__' must be an object, found ") +
                   json::kindName(metadata->kind));
    for (const json::Member &member : metadata->members) {
      if (member.value.kind != json::Kind::String)
        return error("'__metadata__' value of '" + escapeName(member.key) +
                     "' must be a string, found " +
                     json::kindName(member.value.kind));
      file.metadata.emplace(member.key, member.value.string);
    }
  }

  std::vector<Entry> entries;
  entries.reserve(tensorCount);
  for (const json::Member &member : header.members) {
    if (&member.value == metadata)
      continue;
    entries.push_back(Entry{&member.key, HostTensor(), 0, 0});
    std::string problem =
        parseEntry(member.value, dataSize, limits, entries.back());
    if (!problem.empty())
      return error("tensor '" + escapeName(member.key) + "': " + problem);
  }

  // Sorting by (begin, end) puts empty tensors before a tensor starting at
  // the same offset, so exact tiling is a single left-to-right check.
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t covered = 0;
  const Entry *previous = nullptr;
  for (const Entry &entry : entries) {
    if (entry.begin < covered)
      return error("tensor '" + escapeName(*entry.name) + "': data_offsets " +
                   formatRange(entry.begin, entry.end) + " overlap tensor '" +
                   escapeName(*previous->name) + "' " +
                   formatRange(previous->begin, previous->end));
    if (entry.begin > covered)
      return error("data section bytes " + formatRange(covered, entry.begin) +
                   " belong to no tensor");
    covered = entry.end;
    previous = &entry;
  }
  if (covered != dataSize)
    return error("data section bytes " + formatRange(covered, dataSize) +
                 " belong to no tensor");

  for (Entry &entry : entries) {
    const uint8_t *first = data + entry.begin;
    // A view needs the element alignment the backends read it with; the
    // format does not promise it, so a misaligned tensor is copied.
    size_t align = dtypeSize(entry.tensor.dtype);
    if (owner && reinterpret_cast<uintptr_t>(first) % align == 0)
      entry.tensor.data.view(owner, first, entry.end - entry.begin);
    else
      entry.tensor.data.assign(first, data + entry.end);
    file.tensors.emplace(*entry.name, std::move(entry.tensor));
  }
  out = std::move(file);
  return Status::ok();
}

Status readSafetensors(const std::string &path, SafetensorsFile &out,
                       const SafetensorsLimits &limits) {
  std::shared_ptr<const MappedFile> file;
  if (Status status = MappedFile::map(path, file); !status)
    return status;
  return parseSafetensors(file->data(), file->size(), path, out, limits, file);
}

bool isTrainingCounter(const std::string &name) {
  static constexpr const char kCounter[] = "num_batches_tracked";
  size_t n = sizeof(kCounter) - 1;
  if (name.size() < n || name.compare(name.size() - n, n, kCounter) != 0)
    return false;
  return name.size() == n || name[name.size() - n - 1] == '.';
}

Status writeSafetensors(const std::string &path,
                        const std::map<std::string, HostTensor> &tensors) {
  std::string header = "{";
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    std::string prefix = path + ": tensor '" + escapeName(name) + "': ";
    // Such names would not read back as the same tensor.
    if (name == "__metadata__" || !json::isValidUtf8(name))
      return Status::error(prefix + "invalid tensor name");
    uint64_t bytes;
    if (!denseByteSize(tensor.shape, tensor.dtype, bytes) ||
        bytes != tensor.data.size())
      return Status::error(
          prefix + "holds " + std::to_string(tensor.data.size()) +
          " bytes, which do not match " + dtypeName(tensor.dtype) + " " +
          formatShape(tensor.shape));
    if (header.size() > 1)
      header += ',';
    json::appendQuoted(header, name);
    header += ":{\"dtype\":\"";
    header += dtypeName(tensor.dtype);
    header += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      header += (i ? "," : "") + std::to_string(tensor.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += '}';
  // The format recommends 8-byte alignment of the data section.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::vector<uint8_t> image(kLengthBytes);
  for (size_t i = 0; i < kLengthBytes; ++i)
    image[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));
  image.insert(image.end(), header.begin(), header.end());
  image.reserve(image.size() + offset);
  for (const auto &entry : tensors)
    image.insert(image.end(), entry.second.data.begin(),
                 entry.second.data.end());
  return writeFileBytes(path, image.data(), image.size());
}

} // namespace runtime
} // namespace gpuopt
