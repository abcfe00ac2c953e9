//===- CpuKernelsDispatch.cpp - CPU kernel path selection and profile -----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Which target's kernels (CpuKernels.cpp) every call uses: GPUOPT_CPU_ISA
// when set (refused with a message when this CPU cannot run it), else the
// best the CPU has; and the GPUOPT_PROFILE timer of the entry points.
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsInternal.h"
#include "gpuopt/Runtime/CpuFeatures.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <unistd.h>

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace gpuopt::runtime {
namespace {

struct IsaEntry {
  CpuIsa isa;
  const IsaKernels *kernels;
  /// CPU features the target's pragma enables (null-terminated; names of
  /// CpuFeatures.def).
  const char *features[5];
};

/// Best first; generic (SSE2, part of x86-64) runs everywhere.
const IsaEntry kIsaEntries[] = {
#ifdef GPUOPT_HAVE_X86_ISAS
    {CpuIsa::Avx512,
     &kAvx512Kernels,
     {"avx512f", "avx512vl", "avx2", "fma", nullptr}},
    {CpuIsa::Avx2, &kAvx2Kernels, {"avx2", "fma", nullptr}},
#endif
    {CpuIsa::Generic, &kGenericKernels, {nullptr}},
};

/// GPUOPT_CPU_ISA_PRETEND_LACKS (test-only, docs/CPUBackend.md): a comma-
/// separated list of CPU features to treat as absent, so that the refusal of
/// a path this CPU lacks can be tested on a CPU that has every path.
bool pretendLacks(const char *feature) {
  const char *list = std::getenv("GPUOPT_CPU_ISA_PRETEND_LACKS");
  if (!list)
    return false;
  std::string all = std::string(",") + list + ",";
  return all.find(std::string(",") + feature + ",") != std::string::npos;
}

bool cpuHas(const char *feature) {
  return !pretendLacks(feature) && cpuHasFeature(feature);
}

const IsaEntry *findEntry(CpuIsa isa) {
  for (const IsaEntry &e : kIsaEntries)
    if (e.isa == isa)
      return &e;
  return nullptr;
}

/// The first feature `e` needs that this CPU lacks, or nullptr.
const char *missing(const IsaEntry &e) {
  for (const char *const *f = e.features; *f; ++f)
    if (!cpuHas(*f))
      return *f;
  return nullptr;
}

std::string supportedList() {
  std::string s;
  for (const IsaEntry &e : kIsaEntries)
    if (!missing(e))
      s += (s.empty() ? "" : ", ") + std::string(cpuIsaName(e.isa));
  return s;
}

struct Selection {
  const IsaKernels *kernels = nullptr;
  std::string error;
};

/// GPUOPT_CPU_ISA, else the best path this CPU runs.
Selection selectFromEnvironment() {
  Selection s;
  const char *forced = std::getenv("GPUOPT_CPU_ISA");
  if (!forced || !*forced) {
    for (const IsaEntry &e : kIsaEntries)
      if (!missing(e)) {
        s.kernels = e.kernels;
        break;
      }
    return s;
  }
  for (CpuIsa isa : kCpuIsas) {
    if (std::strcmp(forced, cpuIsaName(isa)))
      continue;
    const IsaEntry *e = findEntry(isa);
    const char *lacks = e ? missing(*e) : "an x86-64 CPU";
    if (lacks)
      s.error = std::string("GPUOPT_CPU_ISA=") + forced +
                " but this CPU lacks " + lacks +
                "; it supports: " + supportedList();
    else
      s.kernels = e->kernels;
    return s;
  }
  s.error = std::string("GPUOPT_CPU_ISA='") + forced +
            "' is not a kernel path (avx512, avx2 or generic); this CPU "
            "supports: " +
            supportedList();
  return s;
}

const Selection &environmentSelection() {
  static const Selection s = selectFromEnvironment();
  return s;
}

/// Set by setCpuIsa(); overrides the environment.
std::atomic<const IsaKernels *> forcedKernels{nullptr};

} // namespace

const IsaKernels *activeKernels(std::string *error) {
  if (const IsaKernels *k = forcedKernels.load(std::memory_order_acquire))
    return k;
  const Selection &s = environmentSelection();
  if (!s.kernels && error)
    *error = s.error;
  return s.kernels;
}

const char *cpuIsaName(CpuIsa isa) {
  switch (isa) {
  case CpuIsa::Avx512:
    return "avx512";
  case CpuIsa::Avx2:
    return "avx2";
  case CpuIsa::Generic:
    return "generic";
  }
  return "?";
}

const char *cpuIsaMissingFeature(CpuIsa isa) {
  const IsaEntry *e = findEntry(isa);
  return e ? missing(*e) : "an x86-64 CPU";
}

bool checkCpuIsa(std::string &error) {
  return activeKernels(&error) != nullptr;
}

bool setCpuIsa(CpuIsa isa, std::string &error) {
  const IsaEntry *e = findEntry(isa);
  if (const char *lacks = cpuIsaMissingFeature(isa)) {
    error = std::string("the ") + cpuIsaName(isa) + " kernels need " + lacks +
            ", which this CPU lacks; it supports: " + supportedList();
    return false;
  }
  forcedKernels.store(e->kernels, std::memory_order_release);
  return true;
}

int64_t l1DataCacheBytes() {
  static const int64_t bytes = [] {
#ifdef _SC_LEVEL1_DCACHE_SIZE
    long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return v > 0 ? static_cast<int64_t>(v) : int64_t(0);
#else
    return int64_t(0);
#endif
  }();
  return bytes;
}

const char *getCpuIsaName() {
  const IsaKernels *k = activeKernels();
  return k ? k->name : nullptr;
}

void getCpuMicroTile(int &mr, int &nr) {
  const IsaKernels *k = activeKernels();
  mr = k ? k->mr : 0;
  nr = k ? k->nr : 0;
}

bool cpuErf(float *x, int64_t n) {
  const IsaKernels *k = activeKernels();
  if (!k)
    return false;
  k->erfRow(x, n);
  return true;
}

//===----------------------------------------------------------------------===//
// Profile
//===----------------------------------------------------------------------===//

KernelProfile *KernelProfile::get() {
  static KernelProfile *instance =
      std::getenv("GPUOPT_PROFILE") ? new KernelProfile() : nullptr;
  return instance;
}

void KernelProfile::add(const std::string &key, double ms) {
  std::lock_guard<std::mutex> lock(mutex);
  Entry &e = entries[key];
  e.ms += ms;
  ++e.calls;
}

KernelProfile::KernelProfile() {
  std::atexit([] { get()->print(); });
}

void KernelProfile::print() {
  std::vector<std::pair<std::string, Entry>> sorted(entries.begin(),
                                                    entries.end());
  std::sort(sorted.begin(), sorted.end(),
            [](auto &a, auto &b) { return a.second.ms > b.second.ms; });
  double total = 0;
  for (auto &[key, e] : sorted)
    total += e.ms;
  const char *isa = getCpuIsaName();
  std::fprintf(stderr,
               "gpuopt kernel profile (%s kernels): %.1f ms in kernels\n",
               isa ? isa : "no", total);
  for (auto &[key, e] : sorted)
    std::fprintf(stderr, "  %9.2f ms %6ld calls %5.1f%%  %s\n", e.ms, e.calls,
                 total > 0 ? 100 * e.ms / total : 0.0, key.c_str());
}

} // namespace gpuopt::runtime
