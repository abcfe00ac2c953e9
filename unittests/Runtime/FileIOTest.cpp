//===- FileIOTest.cpp - bounded reads, atomic writes, the nesting scan ----===//
//
// Part of the gpuopt project.
//
// Cases of runtime/base/FileIO.cpp that the tools' tests
// (test/python/test_files.py) reach only in part: the nesting scan's handling
// of strings, comments and arrows and the location it reports, size limits on
// files and pipes, the removal of an uncommitted temporary, output-is-input
// through a symlink, name escaping, and the sharing rules of mapped tensor
// bytes. One line per failing case and exit status 1 otherwise. Run by lit
// (test/Runtime/file-io.test).
//
//===----------------------------------------------------------------------===//
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Npy.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace gpuopt::runtime;

static int fails = 0;

static void check(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++fails;
  }
}

static std::string nesting(const std::string &text, unsigned limit) {
  Status s = checkMlirNesting(text.data(), text.size(), "f.mlir", limit);
  return s ? "ok" : s.message();
}

static void testNesting() {
  check(nesting("[[[]]]", 3) == "ok", "3 levels within a limit of 3");
  check(nesting("[[[[]]]]", 3) == "f.mlir:1:4: nesting deeper than 3",
        "4 levels beyond 3, located at the 4th opener: " +
            nesting("[[[[]]]]", 3));
  check(nesting("{\n  (\n   <<", 3) == "f.mlir:3:5: nesting deeper than 3",
        "lines and columns count from 1: " + nesting("{\n  (\n   <<", 3));
  // Siblings do not add up.
  check(nesting("[[]] [[]] [[]]", 2) == "ok", "siblings");
  // Strings (with escaped quotes) and comments do not count.
  check(nesting("\"[[[[\\\"[[[[\" // ((((\n[]", 1) == "ok",
        "brackets in strings and comments");
  check(nesting("\"\\\\\"[[", 1) != "ok",
        "an escaped backslash ends the string");
  // The arrow of a function type closes nothing, so the '<' stays open.
  check(nesting("<i32 -> <", 1) != "ok", "'->' does not close a '<'");
  check(nesting("(d0) -> (d0) (d0) -> (d0)", 1) == "ok", "arrows at depth 1");
  // A stray '>' (as in an affine set's ">=") cannot hide depth.
  check(nesting("((x >= 0 >= 0 (", 2) != "ok", "'>' closes only a '<'");
  // A closer pops everything up to its opener: an unclosed '<' inside
  // parentheses does not leak out.
  check(nesting("(a < b) (a < b) (a < b)", 2) == "ok", "'(a < b)'");
}

static std::string operators(const std::string &text, unsigned limit) {
  Status s = checkMlirNesting(text.data(), text.size(), "f.mlir",
                              kMaxMlirNesting, limit);
  return s ? "ok" : s.message();
}

static void testOperators() {
  check(operators("(d0 + d0 - d0)", 2) == "ok", "2 operators within 2");
  check(operators("(d0 + d0 - d0 * d0)", 2) ==
            "f.mlir:1:15: more than 2 operators in one expression",
        "the 3rd operator is located: " + operators("(d0 + d0 - d0 * d0)", 2));
  check(operators("(d0 mod 2 floordiv 2 ceildiv 2)", 2) != "ok",
        "keyword operators count");
  check(operators("(- - - d0)", 2) != "ok", "unary minus counts");
  // A bracket's own operators are its own, the chain around it goes on.
  check(operators("(d0 + (d0 + d0) + (d0) + d0)", 2) != "ok",
        "a chain across bracketed terms");
  check(operators("((d0 + d0) (d0 + d0) (d0 + d0))", 2) == "ok",
        "operators inside sibling brackets do not add up");
  // Separators end an expression; arrows, names and words are no operators.
  check(operators("[-1, -2, -3, -4] {a = -1 b = -2 c = -3}", 1) == "ok",
        "',' and '=' separate");
  check(operators("() -> () -> () -> ()", 1) == "ok", "'->' is no operator");
  check(operators("%a-b-c-d #m-n-o ^bb-1-2 model modulo", 1) == "ok",
        "'-' in names and words containing 'mod'");
}

static void testEscape() {
  check(escapeName("conv.weight") == "conv.weight", "plain name");
  check(escapeName(std::string("a\0b\x1b[2J\n\\\xc3\xa9", 11)) ==
            "a\\x00b\\x1b[2J\\x0a\\\\\\xc3\\xa9",
        "escaped: " + escapeName(std::string("a\0b\x1b[2J\n\\\xc3\xa9", 11)));
}

static std::string tempDir() {
  char pattern[] = "/tmp/gpuopt-fileio-XXXXXX";
  const char *dir = ::mkdtemp(pattern);
  if (!dir) {
    std::printf("FAIL: mkdtemp\n");
    std::exit(1);
  }
  return dir;
}

static void writeText(const std::string &path, const std::string &text) {
  if (Status s = writeFileBytes(
          path, reinterpret_cast<const uint8_t *>(text.data()), text.size());
      !s)
    check(false, s.message());
}

static std::string readText(const std::string &path) {
  std::vector<uint8_t> bytes;
  if (Status s = readFileBytes(path, bytes); !s)
    return "<" + s.message() + ">";
  return std::string(bytes.begin(), bytes.end());
}

static bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

static void testFiles(const std::string &dir) {
  std::string path = dir + "/a.txt";
  writeText(path, "old");
  check(readText(path) == "old", "write then read");

  // A file above the limit is refused before it is read.
  std::vector<uint8_t> bytes;
  Status big = readFileBytes(path, bytes, 2);
  check(!big && big.message() == path + ": file of 3 bytes exceeds the limit "
                                        "of 2 bytes",
        "size limit: " + big.message());

  // An uncommitted output leaves the destination and no temporary.
  {
    AtomicOutput out;
    check(bool(out.open(path)), "open");
    check(bool(out.write("new", 3)), "write");
    check(exists(out.temporary()), "the temporary exists while writing");
    check(readText(path) == "old", "the destination is untouched meanwhile");
  }
  check(readText(path) == "old", "an abandoned output keeps the old file");
  int entries = 0;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (const dirent *e = ::readdir(d))
      entries += std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..");
    ::closedir(d);
  }
  check(entries == 1, "only a.txt is left, found " + std::to_string(entries));

  // Output-is-input through a symlink; a different file passes.
  std::string link = dir + "/link.txt";
  check(::symlink(path.c_str(), link.c_str()) == 0, "symlink");
  Status same = checkOutputIsNotInput({"-o", link}, {{"the input", path}});
  check(!same && same.message() == "-o " + link + " is the input " + path +
                                       "; refusing to overwrite an input",
        "symlink to the input: " + same.message());
  // Writing through the symlink replaces its target and keeps the link.
  writeText(link, "via link");
  struct stat st;
  check(::lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode) &&
            readText(path) == "via link",
        "a write through a symlink keeps the link");
  writeText(path, "old");
  writeText(dir + "/b.txt", "b");
  check(bool(checkOutputIsNotInput({"-o", dir + "/b.txt"},
                                   {{"the input", path}, {"-", "-"}})),
        "another file");
  check(bool(checkOutputIsNotInput({"-o", dir + "/new.txt"},
                                   {{"the input", path}})),
        "a new file");

  // A directory is not a file to read or to replace.
  Status readDir = readFileBytes(dir, bytes);
  check(!readDir && readDir.message() == dir + ": not a regular file "
                                               "(directory)",
        "read a directory: " + readDir.message());
  AtomicOutput toDir;
  check(!toDir.open(dir), "an output over a directory is refused");
}

static void testPipeLimit() {
  int fds[2];
  if (::pipe(fds) != 0) {
    check(false, "pipe");
    return;
  }
  const char text[] = "0123456789";
  check(::write(fds[1], text, 10) == 10, "write to the pipe");
  ::close(fds[1]);
  std::vector<uint8_t> bytes;
  Status s = readStreamBytes(fds[0], "<stdin>", bytes, 9);
  ::close(fds[0]);
  check(!s && s.message() == "<stdin>: input exceeds the limit of 9 bytes",
        "pipe limit: " + s.message());
}

/// Tensors of a mapped file view it, keep it alive, and copy on demand.
static void testMappedTensors(const std::string &dir) {
  std::string path = dir + "/w.safetensors";
  HostTensor t;
  t.dtype = DType::F32;
  t.shape = {2};
  float values[2] = {1.5f, -2.f};
  t.data.assign(reinterpret_cast<const uint8_t *>(values),
                reinterpret_cast<const uint8_t *>(values) + sizeof(values));
  check(bool(writeSafetensors(path, {{"w", t}})), "write safetensors");

  HostTensor copy, moved;
  {
    SafetensorsFile file;
    check(bool(readSafetensors(path, file)), "read safetensors");
    HostTensor &w = file.tensors["w"];
    check(w.data.size() == 8 &&
              std::memcmp(w.data.data(), values, sizeof(values)) == 0,
          "mapped values");
    copy = w;
    moved = std::move(w);
    check(w.data.empty() && w.data.data() == nullptr,
          "a moved-from tensor is empty");
  }
  // The file's tensors are gone; the copies still hold the mapping.
  check(copy.data.size() == 8 &&
            std::memcmp(copy.data.data(), values, sizeof(values)) == 0,
        "a copy outlives the file it was read from");
  check(moved.data.data() == copy.data.data(),
        "copies of a view share its bytes");
  // Writing through a view changes neither the file nor (here) other views'
  // source: the mapping is private to the process.
  moved.data.data()[0] ^= 0xff;
  SafetensorsFile again;
  check(bool(readSafetensors(path, again)) &&
            std::memcmp(again.tensors["w"].data.data(), values,
                        sizeof(values)) == 0,
        "the file is unchanged by a write through a view");
  copy.data.resize(4);
  check(copy.data.size() == 4 && copy.data.data()[0] == 0,
        "resize makes owned zero bytes");
}

/// A MappedFile is a copy: the file rewritten in place or truncated after it
/// was read (which raised SIGBUS in a mapping of the file) changes nothing.
static void testMappedFileIsACopy(const std::string &dir) {
  std::string path = dir + "/copy.bin";
  std::string text(1 << 16, 'a');
  writeText(path, text);
  std::shared_ptr<const MappedFile> file;
  if (Status s = MappedFile::map(path, file); !s) {
    check(false, s.message());
    return;
  }
  int fd = ::open(path.c_str(), O_WRONLY);
  check(fd >= 0 && ::pwrite(fd, "bbbb", 4, 0) == 4 && ::ftruncate(fd, 10) == 0,
        "rewrite and truncate the file");
  if (fd >= 0)
    ::close(fd);
  check(file->size() == text.size() &&
            std::memcmp(file->data(), text.data(), text.size()) == 0,
        "the bytes read are kept");
}

/// readAt, which ModelLibrary's header reads and readFileBytes share.
static void testReadAt(const std::string &dir) {
  std::string path = dir + "/at.txt";
  writeText(path, "0123456789");
  int fd;
  uint64_t size;
  if (Status s = openRegularFile(path, 10, fd, size); !s) {
    check(false, s.message());
    return;
  }
  char buf[8] = {};
  check(readAt(fd, 3, buf, 4) == 4 && std::memcmp(buf, "3456", 4) == 0,
        "a range inside the file");
  check(readAt(fd, 7, buf, 8) == 3 && std::memcmp(buf, "789", 3) == 0,
        "a range past the end stops at the end");
  check(readAt(fd, 10, buf, 1) == 0, "nothing at the end");
  ::close(fd);
  check(readAt(fd, 0, buf, 1) == -1, "a closed descriptor fails");
}

int main() {
  std::string dir = tempDir();
  testNesting();
  testOperators();
  testEscape();
  testFiles(dir);
  testReadAt(dir);
  testPipeLimit();
  testMappedTensors(dir);
  testMappedFileIsACopy(dir);
  std::string cleanup = "rm -rf " + dir;
  if (std::system(cleanup.c_str()) != 0)
    std::printf("warning: could not remove %s\n", dir.c_str());
  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
