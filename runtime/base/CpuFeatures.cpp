//===- CpuFeatures.cpp - x86 extensions and --cpu levels ------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements runtime/include/gpuopt/Runtime/CpuFeatures.h over CpuFeatures.def.
// The extensions are read with CPUID directly rather than
// __builtin_cpu_supports, whose accepted names differ between compilers and
// their versions (GCC 12 knows neither "cx16" nor "sahf", Clang 14 not
// "lzcnt"), and the psABI levels need them all.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CpuFeatures.h"

#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace gpuopt {
namespace runtime {

namespace {

enum Register { EAX, EBX, ECX, EDX };
/// XCR0 bits the OS sets when it saves a register file: SSE and AVX (ymm);
/// with the opmask, ZMM_Hi256 and Hi16_ZMM state (zmm).
enum XState : uint64_t { NONE = 0, AVX = 0x6, AVX512 = 0xe6 };

struct Feature {
  const char *name;
  int level;
  uint32_t leaf, subleaf;
  Register reg;
  unsigned bit;
  XState xstate;
};

constexpr Feature kFeatures[] = {
#define GPUOPT_CPU_FEATURE(NAME, LEVEL, LEAF, SUBLEAF, REG, BIT, XSTATE)       \
  {NAME, LEVEL, LEAF, SUBLEAF, REG, BIT, XSTATE},
#include "gpuopt/Runtime/CpuFeatures.def"
};

/// Whether this CPU (and its OS) supports `f`.
bool detect(const Feature &f) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[EAX], &regs[EBX], &regs[ECX],
                         &regs[EDX]))
    return false;
  if (!((regs[f.reg] >> f.bit) & 1))
    return false;
  if (f.xstate == NONE)
    return true;
  unsigned a, b, c, d;
  // XGETBV exists when the OS enabled it (OSXSAVE, leaf 1 ECX bit 27).
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1))
    return false;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  uint64_t xcr0 = (uint64_t(hi) << 32) | lo;
  return (xcr0 & f.xstate) == f.xstate;
#else
  (void)f;
  return false;
#endif
}

/// The names listed in GPUOPT_TEST_HIDE_CPU_FEATURES.
std::vector<std::string> hiddenFeatures() {
  std::vector<std::string> hidden;
  const char *env = std::getenv("GPUOPT_TEST_HIDE_CPU_FEATURES");
  std::string_view rest = env ? env : "";
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    if (!name.empty())
      hidden.emplace_back(name);
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  }
  return hidden;
}

bool contains(const std::vector<std::string> &names, std::string_view name) {
  for (const std::string &n : names)
    if (n == name)
      return true;
  return false;
}

} // namespace

const std::vector<std::string> &cpuLevelNames() {
  static const std::vector<std::string> names = {
      "native", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  return names;
}

std::string cpuLevelList() { return joinCpuFeatures(cpuLevelNames()); }

int cpuLevel(std::string_view name) {
  const std::vector<std::string> &names = cpuLevelNames();
  for (size_t i = 1; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<int>(i);
  return 0;
}

std::vector<std::string> cpuLevelFeatures(int level) {
  std::vector<std::string> features;
  for (const Feature &f : kFeatures)
    if (f.level > 0 && f.level <= level)
      features.push_back(f.name);
  return features;
}

const std::vector<std::string> &checkedCpuFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const Feature &f : kFeatures)
      all.push_back(f.name);
    return all;
  }();
  return names;
}

bool isCheckedCpuFeature(std::string_view name) {
  return contains(checkedCpuFeatures(), name);
}

const std::vector<std::string> &detectedCpuFeatures() {
  static const std::vector<std::string> detected = [] {
    std::vector<std::string> names;
    for (const Feature &f : kFeatures)
      if (detect(f))
        names.push_back(f.name);
    return names;
  }();
  return detected;
}

bool cpuHasFeature(std::string_view name) {
  return contains(detectedCpuFeatures(), name);
}

std::vector<std::string> hostCpuFeatures() {
  std::vector<std::string> hidden = hiddenFeatures();
  std::vector<std::string> host;
  for (const std::string &name : detectedCpuFeatures())
    if (!contains(hidden, name))
      host.push_back(name);
  return host;
}

std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &required) {
  std::vector<std::string> host = hostCpuFeatures();
  std::vector<std::string> missing;
  for (const std::string &name : required)
    if (!contains(host, name))
      missing.push_back(name);
  return missing;
}

std::string cpuLevelsForThisCpu() {
  std::string levels;
  for (int level = static_cast<int>(cpuLevelNames().size()) - 1; level >= 1;
       --level)
    if (missingCpuFeatures(cpuLevelFeatures(level)).empty()) {
      levels = "--cpu=" + cpuLevelNames()[level] + " or ";
      break;
    }
  return levels + "--cpu=native";
}

std::string joinCpuFeatures(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

} // namespace runtime
} // namespace gpuopt
