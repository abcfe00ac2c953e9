//===- ArtifactFile.cpp - write, read and print artifacts -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The tools' side of Artifact.h, apart from the verifier so that a model
// library, which links only what it uses, does not carry the dump's
// reflection code or the ELF reader.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/ModelLibrary.h"

#include "flatbuffers/minireflect.h"

#include <cassert>
#include <cstring>
#include <elf.h>
#include <unistd.h>

using namespace gpuopt::runtime;
namespace fb = gpuopt::artifact;

namespace {

/// Largest whole-file artifact (.gpuopt) read.
constexpr uint64_t kMaxArtifactFileBytes = 1ull << 30;

/// The first bytes of `path` (fewer when it is shorter), from a regular file.
Status readHead(const std::string &path, uint8_t (&head)[8], size_t &n) {
  int fd;
  uint64_t size;
  if (Status s = openRegularFile(path, UINT64_MAX, fd, size); !s)
    return Status::error("cannot read " + s.message());
  ssize_t got = readAt(fd, 0, head, sizeof(head));
  ::close(fd);
  if (got < 0)
    return Status::error("cannot read " + path);
  n = static_cast<size_t>(got);
  return Status::ok();
}

/// ToStringVisitor, eliding the long byte vectors (kernel images).
struct DumpVisitor : flatbuffers::ToStringVisitor {
  static constexpr size_t kShownBytes = 16;
  DumpVisitor() : ToStringVisitor("\n", true, "  ", true) {}
  std::vector<size_t> counts; // elements seen per open vector
  bool eliding = false;

  void StartVector() override {
    ToStringVisitor::StartVector();
    counts.push_back(0);
  }
  void Element(size_t i, flatbuffers::ElementaryType type,
               const flatbuffers::TypeTable *table,
               const uint8_t *val) override {
    counts.back() = i + 1;
    eliding = type == flatbuffers::ET_UCHAR && !table && i >= kShownBytes;
    if (!eliding)
      ToStringVisitor::Element(i, type, table, val);
  }
  void UChar(uint8_t x, const char *name) override {
    if (!eliding)
      ToStringVisitor::UChar(x, name);
  }
  void EndVector() override {
    if (eliding) {
      s += ", ... (" + std::to_string(counts.back()) + " bytes)";
      eliding = false;
    }
    counts.pop_back();
    ToStringVisitor::EndVector();
  }
};

} // namespace

std::vector<uint8_t> gpuopt::runtime::packArtifact(const fb::ModelT &model) {
  flatbuffers::FlatBufferBuilder builder;
  // Defaults stored too, so that the dump shows every field.
  builder.ForceDefaults(true);
  fb::FinishModelBuffer(builder, fb::Model::Pack(builder, &model));
  std::vector<uint8_t> bytes(builder.GetBufferPointer(),
                             builder.GetBufferPointer() + builder.GetSize());
  // Stored (ForceDefaults), so there is always a field to stamp.
  [[maybe_unused]] bool stamped = stampArtifactChecksum(bytes);
  assert(stamped && "Model.checksum not stored");
  return bytes;
}

std::string gpuopt::runtime::dumpArtifact(const uint8_t *data) {
  DumpVisitor visitor;
  flatbuffers::IterateFlatBuffer(data, fb::ModelTypeTable(), &visitor);
  return visitor.s + "\n";
}

Status gpuopt::runtime::readArtifactFile(const std::string &path,
                                         std::vector<uint8_t> &bytes) {
  bytes.clear();
  uint8_t head[8];
  size_t n = 0;
  if (Status s = readHead(path, head, n); !s)
    return s;
  if (n >= SELFMAG && std::memcmp(head, ELFMAG, SELFMAG) == 0)
    return readModelLibraryArtifact(path, bytes);
  // A FlatBuffer starts with its root offset, then the file identifier.
  if (n == sizeof(head) &&
      std::memcmp(head + 4, fb::ModelIdentifier(), 4) == 0) {
    if (Status s = readFileBytes(path, bytes, kMaxArtifactFileBytes); !s)
      return Status::error("cannot read " + s.message());
    return Status::ok();
  }
  return Status::error(path + " is neither a gpuopt model library nor a "
                              "gpuopt artifact");
}
