//===- FileIO.cpp - bounded reads and atomic writes -----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Allocator.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuopt {
namespace runtime {

static Status errnoError(const std::string &path, const char *action,
                         int error) {
  return Status::error(path + ": " + action + ": " + std::strerror(error));
}

static const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "directory";
  if (S_ISFIFO(mode))
    return "fifo";
  if (S_ISCHR(mode))
    return "character device";
  if (S_ISBLK(mode))
    return "block device";
  if (S_ISSOCK(mode))
    return "socket";
  return "special file";
}

static Status notRegularFile(const std::string &path, mode_t mode) {
  return Status::error(path + ": not a regular file (" + fileKind(mode) + ")");
}

Status openRegularFile(const std::string &path, uint64_t maxBytes, int &fd,
                       uint64_t &size) {
  // stat first: opening a device may act on it (a tape rewinds, a terminal
  // becomes the controlling one) before fstat could tell what it is.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errnoError(path, "cannot open", errno);
  if (!S_ISREG(st.st_mode))
    return notRegularFile(path, st.st_mode);
  // O_NONBLOCK: should `path` become a FIFO after the stat, opening it would
  // otherwise wait for a writer.
  int handle =
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (handle < 0)
    return errnoError(path, "cannot open", errno);
  // Checked again on what was opened, which is what gets read.
  if (::fstat(handle, &st) != 0) {
    int error = errno;
    ::close(handle);
    return errnoError(path, "cannot stat", error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(handle);
    return notRegularFile(path, st.st_mode);
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    ::close(handle);
    return Status::error(path + ": file of " + std::to_string(st.st_size) +
                         " bytes exceeds the limit of " +
                         std::to_string(maxBytes) + " bytes");
  }
  // Regular files ignore O_NONBLOCK, but clear it so nothing depends on that.
  ::fcntl(handle, F_SETFL, ::fcntl(handle, F_GETFL) & ~O_NONBLOCK);
  fd = handle;
  size = static_cast<uint64_t>(st.st_size);
  return Status::ok();
}

ssize_t readAt(int fd, uint64_t offset, void *out, size_t size) {
  auto *p = static_cast<uint8_t *>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t n =
        ::pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

Status readFileBytes(const std::string &path, std::vector<uint8_t> &out,
                     uint64_t maxBytes) {
  out.clear();
  int fd;
  uint64_t size;
  if (Status s = openRegularFile(path, maxBytes, fd, size); !s)
    return s;
  // tryAllocate: LLVM's tools install a new-handler that aborts instead.
  if (!tryAllocate([&] { out.resize(static_cast<size_t>(size)); })) {
    ::close(fd);
    return Status::error(path + ": cannot allocate " + std::to_string(size) +
                         " bytes to read it");
  }
  // Bytes appended since fstat are not read: the size checked is the size
  // used. A file shrunk since then is what is there.
  ssize_t n = readAt(fd, 0, out.data(), out.size());
  int error = errno;
  ::close(fd);
  if (n < 0)
    return errnoError(path, "cannot read", error);
  out.resize(static_cast<size_t>(n));
  return Status::ok();
}

Status readStreamBytes(int fd, const std::string &what,
                       std::vector<uint8_t> &out, uint64_t maxBytes) {
  out.clear();
  uint8_t chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errnoError(what, "cannot read", errno);
    if (n == 0)
      return Status::ok();
    if (out.size() + static_cast<uint64_t>(n) > maxBytes)
      return Status::error(what + ": input exceeds the limit of " +
                           std::to_string(maxBytes) + " bytes");
    if (!tryAllocate([&] { out.insert(out.end(), chunk, chunk + n); }))
      return Status::error(what + ": cannot allocate " +
                           std::to_string(out.size() + n) +
                           " bytes to read it");
  }
}

MappedFile::~MappedFile() {
  if (mapped)
    ::munmap(const_cast<uint8_t *>(bytes), mapped);
}

Status MappedFile::map(const std::string &path,
                       std::shared_ptr<const MappedFile> &out,
                       uint64_t maxBytes) {
  int fd;
  uint64_t size;
  if (Status s = openRegularFile(path, maxBytes, fd, size); !s)
    return s;
  if (size == 0) {
    ::close(fd);
    static const uint8_t empty = 0;
    out.reset(new MappedFile(&empty, 0, 0));
    return Status::ok();
  }
  // The file is read, not mapped: a mapping of the file would raise SIGBUS in
  // a long-lived model once another process truncates the file, and show it
  // the new bytes when the file is rewritten in place. An anonymous mapping
  // rather than a vector: page-aligned like the file mapping it replaces, no
  // zero-filling pass before read() writes each page, and returned to the
  // system whole when the last tensor lets go. Writable, so that a backend
  // writing through a tensor pointer changes only this copy.
  void *addr =
      ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) {
    int error = errno;
    ::close(fd);
    return Status::error(path + ": cannot allocate " + std::to_string(size) +
                         " bytes to read it: " + std::strerror(error));
  }
  ssize_t n = readAt(fd, 0, addr, static_cast<size_t>(size));
  int error = errno;
  ::close(fd);
  if (n < 0) {
    ::munmap(addr, static_cast<size_t>(size));
    return errnoError(path, "cannot read", error);
  }
  // As in readFileBytes: a file shrunk since fstat is what was read; the
  // tensor table is then checked against the shorter size.
  out.reset(new MappedFile(static_cast<const uint8_t *>(addr),
                           static_cast<size_t>(n), static_cast<size_t>(size)));
  return Status::ok();
}

/// Splits `path` into its directory ("." when there is none) and file name.
static void splitPath(const std::string &path, std::string &dir,
                      std::string &name);

/// The file a write to `path` replaces: the target of a symlink (so that
/// the link survives, as with an in-place write), or `path` itself. A
/// dangling link is followed too, so that its target is created.
static std::string replacedFile(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
    return path;
  if (char *real = ::realpath(path.c_str(), nullptr)) {
    std::string resolved = real;
    std::free(real);
    return resolved;
  }
  // realpath fails on a dangling link: follow the chain by hand, as far as
  // the kernel would (40 links) before ELOOP.
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return current;
    std::vector<char> link(static_cast<size_t>(st.st_size) + 1);
    ssize_t n = ::readlink(current.c_str(), link.data(), link.size());
    if (n <= 0 || static_cast<size_t>(n) >= link.size())
      return path;
    std::string next(link.data(), static_cast<size_t>(n));
    if (next[0] != '/') {
      std::string dir, name;
      splitPath(current, dir, name);
      next = dir + "/" + next;
    }
    current = next;
  }
  return path;
}

/// Splits `path` into its directory ("." when there is none) and file name.
static void splitPath(const std::string &path, std::string &dir,
                      std::string &name) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) {
    dir = ".";
    name = path;
  } else {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    name = path.substr(slash + 1);
  }
}

/// The mkstemp/mkdtemp template of a hidden temporary next to `target`
/// (NUL-terminated, for those to fill in); `name` gets `target`'s file name.
static std::vector<char> temporaryTemplate(const std::string &target,
                                           std::string &name) {
  std::string dir;
  splitPath(target, dir, name);
  std::string pattern = dir + "/." + name + ".tmp.XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  return buffer;
}

/// Whether `path` is an existing stream (a character device such as
/// /dev/null or /dev/stdout, or a FIFO): there is no file to replace, so it is
/// written directly.
static bool isStream(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 &&
         (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

/// Refuses a destination that is a directory or another non-regular file
/// that is not a stream, which rename would either fail on or replace.
static Status checkDestination(const std::string &path) {
  struct stat st;
  if (path.empty() || path.back() == '/')
    return Status::error("'" + path + "': not a file name");
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status::error(path + ": cannot write: not a regular file (" +
                         fileKind(st.st_mode) + ")");
  return Status::ok();
}

/// The permissions a file created by open(0666) would get.
static mode_t defaultMode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::discard() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  if (!tempPath.empty())
    ::unlink(tempPath.c_str());
  tempPath.clear();
}

Status AtomicOutput::open(const std::string &destination) {
  discard();
  path = destination;
  target = replacedFile(path);
  if (isStream(path)) {
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return errnoError(path, "cannot open", errno);
    return Status::ok();
  }
  if (Status s = checkDestination(path); !s)
    return s;
  std::string name;
  std::vector<char> buffer = temporaryTemplate(target, name);
  int handle = ::mkstemp(buffer.data());
  if (handle < 0)
    return errnoError(path, "cannot create", errno);
  fd = handle;
  tempPath = buffer.data();
  // mkstemp makes the file private (0600); the output keeps the mode of the
  // file it replaces (a private output stays private), or gets a new file's.
  struct stat old;
  ::fchmod(fd, ::stat(target.c_str(), &old) == 0 ? old.st_mode & 07777
                                                 : defaultMode());
  return Status::ok();
}

Status AtomicOutput::write(const void *bytes, size_t size) {
  const auto *p = static_cast<const uint8_t *>(bytes);
  while (size) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      discard();
      return errnoError(path, "cannot write", error);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Status AtomicOutput::commit() {
  // Closing can report a deferred write error (e.g. NFS quota), so it is
  // checked before the rename makes the file visible.
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0) {
    int error = errno;
    discard();
    return errnoError(path, "cannot write", error);
  }
  if (tempPath.empty())
    return Status::ok();
  if (::rename(tempPath.c_str(), target.c_str()) != 0) {
    int error = errno;
    discard();
    return errnoError(path, "cannot replace", error);
  }
  tempPath.clear();
  return Status::ok();
}

Status writeFileBytes(const std::string &path, const uint8_t *bytes,
                      size_t size) {
  AtomicOutput out;
  if (Status s = out.open(path); !s)
    return s;
  if (Status s = out.write(bytes, size); !s)
    return s;
  return out.commit();
}

AtomicOutputDir::~AtomicOutputDir() { discard(); }

void AtomicOutputDir::discard() {
  if (!innerPath.empty())
    ::unlink(innerPath.c_str());
  if (!dirPath.empty())
    ::rmdir(dirPath.c_str());
  innerPath.clear();
  dirPath.clear();
}

Status AtomicOutputDir::open(const std::string &destination) {
  discard();
  path = destination;
  target = replacedFile(path);
  if (Status s = checkDestination(path); !s)
    return s;
  std::string name;
  std::vector<char> buffer = temporaryTemplate(target, name);
  if (!::mkdtemp(buffer.data()))
    return errnoError(path, "cannot create", errno);
  dirPath = buffer.data();
  innerPath = dirPath + "/" + name;
  return Status::ok();
}

Status AtomicOutputDir::commit() {
  struct stat st;
  if (::stat(innerPath.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    discard();
    return Status::error(path + ": cannot write: the output was not produced");
  }
  if (::rename(innerPath.c_str(), target.c_str()) != 0) {
    int error = errno;
    discard();
    return errnoError(path, "cannot replace", error);
  }
  innerPath.clear();
  discard();
  return Status::ok();
}

Status checkOutputIsNotInput(const NamedPath &output,
                             const std::vector<NamedPath> &inputs) {
  struct stat out;
  if (output.path.empty() || output.path == "-" ||
      ::stat(output.path.c_str(), &out) != 0)
    return Status::ok();
  for (const NamedPath &input : inputs) {
    struct stat in;
    if (input.path.empty() || input.path == "-" ||
        ::stat(input.path.c_str(), &in) != 0)
      continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      return Status::error(output.what + " " + output.path + " is " +
                           input.what + " " + input.path +
                           "; refusing to overwrite an input");
  }
  return Status::ok();
}

static bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

Status checkMlirNesting(const char *text, size_t size, const std::string &what,
                        unsigned limit, unsigned operatorLimit) {
  // Openers still open, innermost last. A closer pops up to its opener and a
  // '>' only a '<', so a stray closer (as in ">=") cannot hide real depth; a
  // mismatch is left for the parser to report.
  std::string open;
  // Per open bracket (and the top level, first): the operators of an affine
  // expression seen since its last ',' or '='. Affine expressions chain
  // operators without brackets ("d0 + d0 + ...", "- - d0"), and MLIR's affine
  // parser recurses once per operator. A nested bracket's operators are its
  // own, but the run around it goes on: "(d0) + (d0) + ..." is one chain.
  std::vector<unsigned> operators(1, 0);
  size_t line = 1, lineStart = 0;
  auto located = [&](size_t i, const std::string &message) {
    return Status::error(what + ":" + std::to_string(line) + ":" +
                         std::to_string(i - lineStart + 1) + ": " + message);
  };
  for (size_t i = 0; i < size; ++i) {
    char c = text[i];
    bool isOperator = false;
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '"') {
      for (++i; i < size && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n') {
          ++line;
          lineStart = i + 1;
        }
      }
    } else if (c == '/' && i + 1 < size && text[i + 1] == '/') {
      while (i + 1 < size && text[i + 1] != '\n')
        ++i;
    } else if (c == '%' || c == '@' || c == '^' || c == '#' || c == '!') {
      // A prefixed name may contain '-' ("%a-b"), which is no operator.
      while (i + 1 < size && (isWordChar(text[i + 1]) || text[i + 1] == '-'))
        ++i;
    } else if (isWordChar(c)) {
      size_t start = i;
      while (i + 1 < size && isWordChar(text[i + 1]))
        ++i;
      std::string_view word(text + start, i - start + 1);
      isOperator = word == "mod" || word == "floordiv" || word == "ceildiv";
    } else if (c == '+' || c == '*' ||
               (c == '-' && !(i + 1 < size && text[i + 1] == '>'))) {
      isOperator = true;
    } else if (c == ',' || c == '=') {
      operators.back() = 0;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      open.push_back(c);
      operators.push_back(0);
      if (open.size() > limit)
        return located(i, "nesting deeper than " + std::to_string(limit));
    } else if (c == '>') {
      // The arrow of a function type closes nothing.
      bool arrow = i > 0 && text[i - 1] == '-';
      if (!arrow && !open.empty() && open.back() == '<') {
        open.pop_back();
        operators.pop_back();
      }
    } else if (c == ')' || c == ']' || c == '}') {
      char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
      size_t at = open.find_last_of(opener);
      if (at != std::string::npos) {
        open.resize(at);
        operators.resize(at + 1);
      }
    }
    if (isOperator && ++operators.back() > operatorLimit)
      return located(i, "more than " + std::to_string(operatorLimit) +
                            " operators in one expression");
  }
  return Status::ok();
}

Status readMlirSource(const std::string &path, std::string &text) {
  std::vector<uint8_t> bytes;
  bool stdinput = path == "-";
  if (Status s = stdinput ? readStreamBytes(STDIN_FILENO, "<stdin>", bytes)
                          : readFileBytes(path, bytes);
      !s)
    return s;
  if (!tryAllocate([&] { text.assign(bytes.begin(), bytes.end()); }))
    return Status::error((stdinput ? "<stdin>" : path) + ": cannot allocate " +
                         std::to_string(bytes.size()) + " bytes to read it");
  bytes = {};
  // Bytecode has no brackets to count; its reader is left to its own checks.
  static const char bytecodeMagic[] = "ML\xefR";
  if (text.compare(0, 4, bytecodeMagic) == 0)
    return Status::ok();
  return checkMlirNesting(text.data(), text.size(),
                          stdinput ? "<stdin>" : path);
}

std::string escapeName(const std::string &name) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : name) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

} // namespace runtime
} // namespace gpuopt
