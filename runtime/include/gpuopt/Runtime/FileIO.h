//===- FileIO.h - bounded reads and atomic writes ---------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Every file gpuopt reads or writes goes through these helpers, so that no
// input can make a tool read without bound and no failure can destroy a file:
//
// - Reads accept regular files only: a FIFO, a character device such as
//   /dev/zero, a socket or a directory is refused before anything is read,
//   with "PATH: not a regular file (fifo)". The size comes from fstat and is
//   checked against a limit before any memory is allocated. Standard input
//   ("-" for the MLIR tools) may be a pipe; it is read up to the limit.
// - Large read-only inputs (weights) are mapped instead of copied.
// - Outputs are written to a temporary file in the destination's directory
//   and renamed over the destination only once complete; on any failure the
//   temporary is removed and the old file is left as it was.
//
// No MLIR or LLVM here: the model runtime and the CUDA runtime use it too.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_FILEIO_H
#define GPUOPT_RUNTIME_FILEIO_H

#include "gpuopt/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gpuopt {
namespace runtime {

/// Largest file read into memory (.npy inputs, .mlir text, artifacts).
inline constexpr uint64_t kMaxReadBytes = 16ull << 30;
/// Largest weights file (MappedFile): read whole into an anonymous mapping,
/// so it costs its size in memory; the limit only stops an absurd header.
inline constexpr uint64_t kMaxMappedBytes = 256ull << 30;

/// Opens `path` for reading, refusing anything but a regular file of at most
/// `maxBytes` bytes. On success `fd` is an open descriptor the caller closes
/// and `size` its size at the time of the check.
Status openRegularFile(const std::string &path, uint64_t maxBytes, int &fd,
                       uint64_t &size);

/// Reads up to `size` bytes of descriptor `fd` at `offset` into `out`,
/// stopping short only at the end of the file. Returns the count read, or -1
/// with errno set.
ssize_t readAt(int fd, uint64_t offset, void *out, size_t size);

/// Reads all of `path` (a regular file of at most `maxBytes`) into `out`.
Status readFileBytes(const std::string &path, std::vector<uint8_t> &out,
                     uint64_t maxBytes = kMaxReadBytes);

/// Reads descriptor `fd` to its end, failing once more than `maxBytes` arrive;
/// for standard input, whose size a pipe cannot tell in advance. `what` names
/// it in messages.
Status readStreamBytes(int fd, const std::string &what,
                       std::vector<uint8_t> &out,
                       uint64_t maxBytes = kMaxReadBytes);

/// A private copy of a whole file, read into one anonymous mapping (so that
/// later changes to the file, truncation included, do not reach it) and
/// unmapped when the last owner lets go. Tensors that point into it hold a
/// reference (TensorBytes).
class MappedFile {
public:
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return bytes; }
  size_t size() const { return length; }

  /// Reads `path` (a regular file of at most `maxBytes`).
  static Status map(const std::string &path,
                    std::shared_ptr<const MappedFile> &out,
                    uint64_t maxBytes = kMaxMappedBytes);

private:
  MappedFile(const uint8_t *bytes, size_t length, size_t mapped)
      : bytes(bytes), length(length), mapped(mapped) {}
  const uint8_t *bytes;
  size_t length;
  /// The length of the mapping, which the bytes read may fall short of.
  size_t mapped;
};

/// A destination file under construction: bytes go to a temporary file next
/// to it, which `commit` renames over the destination. Destroying an
/// uncommitted output removes the temporary, leaving the destination as it
/// was. A destination that is a stream (/dev/null, /dev/stdout, a FIFO) has
/// no old contents to keep and is written directly.
class AtomicOutput {
public:
  AtomicOutput() = default;
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput &) = delete;
  AtomicOutput &operator=(const AtomicOutput &) = delete;

  /// Creates the temporary for `path`; fails if its directory is not
  /// writable or `path` is a directory.
  Status open(const std::string &path);
  /// Appends `size` bytes.
  Status write(const void *bytes, size_t size);
  /// Flushes, closes and renames the temporary over the destination.
  Status commit();

  const std::string &destination() const { return path; }
  const std::string &temporary() const { return tempPath; }

private:
  void discard();
  std::string path;
  // What the rename replaces: `path`, or the file a symlink `path` names.
  std::string target;
  std::string tempPath;
  int fd = -1;
};

/// Writes `size` bytes to `path` atomically (through AtomicOutput).
Status writeFileBytes(const std::string &path, const uint8_t *bytes,
                      size_t size);

/// A temporary directory next to `path` into which another program (the
/// linker) writes the file `inner()`; `commit` renames it over `path`.
/// Destroying it uncommitted removes the directory and whatever it holds.
class AtomicOutputDir {
public:
  AtomicOutputDir() = default;
  ~AtomicOutputDir();
  AtomicOutputDir(const AtomicOutputDir &) = delete;
  AtomicOutputDir &operator=(const AtomicOutputDir &) = delete;

  Status open(const std::string &path);
  /// The path the producer writes to.
  const std::string &inner() const { return innerPath; }
  Status commit();

private:
  void discard();
  std::string path;
  std::string target;
  std::string dirPath;
  std::string innerPath;
};

/// Fails, naming both flags, when `output` and one of `inputs` are the same
/// existing file (same device and inode, so links and other spellings count).
/// Each entry is (description, path), e.g. ("--weights", "w.safetensors");
/// "-" (standard input/output) and empty paths are skipped.
struct NamedPath {
  std::string what;
  std::string path;
};
Status checkOutputIsNotInput(const NamedPath &output,
                             const std::vector<NamedPath> &inputs);

/// Fails with "WHAT:LINE:COL: nesting deeper than LIMIT" when the brackets
/// ( [ { < of MLIR text `text` nest deeper than `limit`, ignoring string
/// literals and // comments. MLIR's parser recurses once per level with no
/// limit of its own, so deep nesting would overflow the stack. Its affine
/// parser also recurses once per operator of an affine expression, which
/// chains without brackets ("d0 + d0 + ...", "- - d0"): more than
/// `operatorLimit` operators (+ - * mod floordiv ceildiv) in one bracket
/// without a ',' or '=' between them fail with "WHAT:LINE:COL: more than
/// LIMIT operators in one expression".
inline constexpr unsigned kMaxMlirNesting = 256;
inline constexpr unsigned kMaxMlirOperators = 1024;
Status checkMlirNesting(const char *text, size_t size, const std::string &what,
                        unsigned limit = kMaxMlirNesting,
                        unsigned operatorLimit = kMaxMlirOperators);

/// Reads MLIR source `path` ("-": standard input) within kMaxReadBytes and,
/// unless it is MLIR bytecode, checks its nesting (checkMlirNesting), so that
/// every tool that parses MLIR rejects the same files with the same message.
Status readMlirSource(const std::string &path, std::string &text);

/// Escapes a name from a file for a message: printable ASCII stays as it is,
/// a backslash becomes "\\", and every other byte (NUL, ESC, newline, bytes
/// of non-ASCII UTF-8) becomes "\xHH", so a message can neither hide text nor
/// drive the terminal.
std::string escapeName(const std::string &name);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_FILEIO_H
