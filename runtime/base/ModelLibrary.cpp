//===- ModelLibrary.cpp - check a compiled model before dlopen ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Reads only the ELF header, the program and section header tables, the
// section names and the gpuopt_model note, each bounded by the file's size:
// a multi-gigabyte or hostile file costs a few megabytes at most (and, for
// readModelLibraryArtifact, the metadata the note describes).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ModelLibrary.h"

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/CompiledModel.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/ModelAbi.h"

#include <cstring>
#include <elf.h>
#include <unistd.h>
#include <vector>

using namespace gpuopt::runtime;

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "no ELF machine number for this host"
#endif

/// Closes the descriptor on every return path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Reads exactly `size` bytes at `offset` (the caller checked the range
/// against the file size).
bool readExactly(int fd, uint64_t offset, void *out, size_t size) {
  return readAt(fd, offset, out, size) == static_cast<ssize_t>(size);
}

/// Whether [offset, offset + size) lies inside a file of `fileSize` bytes,
/// without overflow.
bool inside(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

std::string truncated(const std::string &what, uint64_t offset, uint64_t size,
                      uint64_t fileSize) {
  // offset + size may not fit: say so rather than print a wrapped sum.
  std::string end = size <= UINT64_MAX - offset
                        ? "ends at byte " + std::to_string(offset + size)
                        : "ends beyond 2^64";
  return "truncated or corrupt: " + what + " " + end + ", the file has " +
         std::to_string(fileSize) + " bytes";
}

/// The checks dlopen needs of a shared object (`fd`, `size` bytes): a
/// little-endian 64-bit ELF shared library for this machine whose program
/// headers lie in the file, with loadable segments inside it (a page mapped
/// beyond the end of the file is SIGBUS on first touch), mappable (offset
/// and address congruent modulo a power-of-two alignment, no more file than
/// memory) and a dynamic segment. On failure `why` says what is wrong. `eh`
/// receives the ELF header.
bool checkElfImage(int fd, uint64_t size, Elf64_Ehdr &eh, std::string &why) {
  auto cannot = [&](const std::string &message) {
    why = message;
    return false;
  };
  if (size < sizeof(eh) || !readExactly(fd, 0, &eh, sizeof(eh)) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
    return cannot("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return cannot("not a 64-bit ELF file (ELF class " +
                  std::to_string(eh.e_ident[EI_CLASS]) + ")");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return cannot("not a little-endian ELF file");
  if (eh.e_machine != kHostMachine)
    return cannot("built for ELF machine " + std::to_string(eh.e_machine) +
                  ", this machine is " + std::to_string(kHostMachine));
  if (eh.e_type != ET_DYN)
    return cannot("not a shared library (ELF type " +
                  std::to_string(eh.e_type) + ")");
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Elf64_Phdr))
    return cannot("no valid program header table");
  uint64_t phBytes = uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (!inside(eh.e_phoff, phBytes, size))
    return cannot(
        truncated("the program header table", eh.e_phoff, phBytes, size));
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!readExactly(fd, eh.e_phoff, ph.data(), phBytes))
    return cannot("cannot read the program headers");
  bool loads = false, dynamic = false;
  for (size_t i = 0; i < ph.size(); ++i) {
    const Elf64_Phdr &p = ph[i];
    dynamic |= p.p_type == PT_DYNAMIC;
    if (p.p_type != PT_LOAD)
      continue;
    loads = true;
    std::string segment = "loadable segment " + std::to_string(i);
    if (!inside(p.p_offset, p.p_filesz, size))
      return cannot(truncated(segment, p.p_offset, p.p_filesz, size));
    if (p.p_filesz > p.p_memsz)
      return cannot("corrupt " + segment + ": more bytes in the file (" +
                    std::to_string(p.p_filesz) + ") than in memory (" +
                    std::to_string(p.p_memsz) + ")");
    if (p.p_align > 1 && ((p.p_align & (p.p_align - 1)) != 0 ||
                          p.p_offset % p.p_align != p.p_vaddr % p.p_align))
      return cannot("corrupt " + segment + ": offset " +
                    std::to_string(p.p_offset) + " and address " +
                    std::to_string(p.p_vaddr) + " do not fit alignment " +
                    std::to_string(p.p_align));
  }
  if (!loads || !dynamic)
    return cannot("corrupt program headers: no loadable or no dynamic "
                  "segment");
  return true;
}

/// checkModelLibrary on the open `file` of `size` bytes; on success `found`
/// holds the note and where its section lies.
Status checkLibrary(const std::string &path, const Fd &file, uint64_t size,
                    ModelLibraryNote &found) {
  auto cannot = [&](const std::string &why) {
    return Status::error("cannot load " + path + ": " + why);
  };

  Elf64_Ehdr eh;
  if (std::string why; !checkElfImage(file.fd, size, eh, why))
    return cannot(why);

  // Section headers: the linker writes them last, so they also tell whether
  // the end of the file is there; they locate the note.
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shstrndx >= eh.e_shnum)
    return Status::error(path + " is not a gpuopt model library (it has no "
                                "valid section header table)");
  uint64_t shBytes = uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (!inside(eh.e_shoff, shBytes, size))
    return cannot(
        truncated("the section header table", eh.e_shoff, shBytes, size));
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!readExactly(file.fd, eh.e_shoff, sh.data(), shBytes))
    return cannot("cannot read the section headers");
  for (size_t i = 0; i < sh.size(); ++i)
    if (sh[i].sh_type != SHT_NOBITS &&
        !inside(sh[i].sh_offset, sh[i].sh_size, size))
      return cannot(truncated("section " + std::to_string(i), sh[i].sh_offset,
                              sh[i].sh_size, size));
  const Elf64_Shdr &names = sh[eh.e_shstrndx];
  // Section names are short; a larger table is not one gpuopt-compile wrote.
  if (names.sh_type != SHT_STRTAB || names.sh_size > (1u << 20))
    return Status::error(path + " is not a gpuopt model library (bad section "
                                "name table)");
  std::vector<char> strtab(names.sh_size + 1, '\0');
  if (!readExactly(file.fd, names.sh_offset, strtab.data(), names.sh_size))
    return cannot("cannot read the section names");
  const Elf64_Shdr *noteSection = nullptr;
  for (const Elf64_Shdr &s : sh)
    if (s.sh_name < names.sh_size &&
        std::strcmp(strtab.data() + s.sh_name, GPUOPT_MODEL_NOTE_SECTION) == 0)
      noteSection = &s;
  if (!noteSection)
    return Status::error(path + " is not a gpuopt model library (it has no " +
                         GPUOPT_MODEL_NOTE_SECTION + " section)");
  gpuopt_model_note note;
  if (noteSection->sh_type == SHT_NOBITS ||
      noteSection->sh_size < sizeof(note) ||
      !readExactly(file.fd, noteSection->sh_offset, &note, sizeof(note)) ||
      std::memcmp(note.magic, GPUOPT_MODEL_NOTE_MAGIC, sizeof(note.magic)) != 0)
    return Status::error(path + " is not a gpuopt model library (its " +
                         GPUOPT_MODEL_NOTE_SECTION +
                         " section holds no gpuopt model note)");
  if (note.abi_version != GPUOPT_MODEL_ABI_VERSION)
    return Status::error(path + " has model ABI version " +
                         std::to_string(note.abi_version) +
                         ", this runtime supports version " +
                         std::to_string(GPUOPT_MODEL_ABI_VERSION) +
                         "; recompile it with this gpuopt-compile");
  found.note = note;
  found.sectionOffset = noteSection->sh_offset;
  found.sectionSize = noteSection->sh_size;
  return Status::ok();
}

/// Opens `path` for checkLibrary; only headers are read, so any size is
/// accepted here.
Status openLibrary(const std::string &path, Fd &file, uint64_t &size) {
  if (Status s = openRegularFile(path, UINT64_MAX, file.fd, size); !s)
    return Status::error("cannot load " + s.message());
  return Status::ok();
}

} // namespace

Status gpuopt::runtime::checkModelLibrary(const std::string &path,
                                          ModelLibraryNote *found) {
  Fd file;
  uint64_t size;
  if (Status s = openLibrary(path, file, size); !s)
    return s;
  ModelLibraryNote note;
  if (Status s = checkLibrary(path, file, size, note); !s)
    return s;
  if (found)
    *found = note;
  return Status::ok();
}

Status gpuopt::runtime::readModelLibraryArtifact(const std::string &path,
                                                 std::vector<uint8_t> &bytes) {
  bytes.clear();
  Fd file;
  uint64_t size;
  if (Status s = openLibrary(path, file, size); !s)
    return s;
  ModelLibraryNote found;
  if (Status s = checkLibrary(path, file, size, found); !s)
    return s;
  const gpuopt_model_note &note = found.note;
  auto corrupt = [&](const std::string &why) {
    return Status::error(path + ": corrupt model metadata: " + why);
  };
  // A library of another metadata version still runs (its own runtime reads
  // its metadata), but this reader cannot show it.
  if (note.metadata_version != GPUOPT_COMPILED_METADATA_VERSION)
    return Status::error(path + " has model metadata version " +
                         std::to_string(note.metadata_version) +
                         ", this runtime reads version " +
                         std::to_string(GPUOPT_COMPILED_METADATA_VERSION) +
                         "; recompile it with this gpuopt-compile");
  // checkLibrary proved the section inside the file and at least a note long.
  uint64_t room = found.sectionSize - sizeof(note);
  if (note.metadata_size > room)
    return corrupt("its note gives " + std::to_string(note.metadata_size) +
                   " bytes, the " + GPUOPT_MODEL_NOTE_SECTION +
                   " section holds " + std::to_string(room) +
                   " after the note");
  if (note.metadata_size > kMaxModelMetadataBytes)
    return corrupt(std::to_string(note.metadata_size) +
                   " bytes, more than the limit of " +
                   std::to_string(kMaxModelMetadataBytes));
  if (!tryAllocate([&] { bytes.resize(note.metadata_size); }))
    return Status::error(path + ": cannot allocate " +
                         std::to_string(note.metadata_size) +
                         " bytes to read its model metadata");
  if (!readExactly(file.fd, found.sectionOffset + sizeof(note), bytes.data(),
                   bytes.size()))
    return Status::error("cannot load " + path +
                         ": cannot read the model metadata");
  if (gpuopt_fnv1a64(reinterpret_cast<const char *>(bytes.data()),
                     bytes.size()) != note.metadata_hash)
    return corrupt("it does not match the checksum compiled into the "
                   "library's code (the file was modified after "
                   "gpuopt-compile)");
  return Status::ok();
}

Status gpuopt::runtime::checkSharedObject(const std::string &path,
                                          const std::string &what) {
  Fd file;
  uint64_t size;
  if (Status s = openRegularFile(path, UINT64_MAX, file.fd, size); !s)
    return Status::error(what + ": " + s.message());
  Elf64_Ehdr eh;
  if (std::string why; !checkElfImage(file.fd, size, eh, why))
    return Status::error(what + ": " + why);
  return Status::ok();
}
