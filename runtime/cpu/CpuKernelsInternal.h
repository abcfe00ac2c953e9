//===- CpuKernelsInternal.h - Shared by the CPU kernel sources --*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// What the kernel sources share (no public API): the kernels' argument
// structs, one target's kernel table (CpuKernels.cpp defines one per
// instruction set), the selected table (CpuKernelsDispatch.cpp) and the
// GPUOPT_PROFILE timer (CpuKernelsDispatch.cpp) the entry points
// (CpuKernelsEntryPoints.cpp) use.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_RUNTIME_CPUKERNELSINTERNAL_H
#define GPUOPT_LIB_RUNTIME_CPUKERNELSINTERNAL_H

#include "gpuopt/Runtime/CpuKernels.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#define GPUOPT_HAVE_X86_ISAS 1
#endif

namespace gpuopt::runtime {

template <int Rank> bool isDense(const MemRefDesc<float, Rank> &d) {
  int64_t expect = 1;
  for (int r = Rank - 1; r >= 0; --r) {
    if (d.sizes[r] != 1 && d.strides[r] != expect)
      return false;
    expect *= d.sizes[r];
  }
  return true;
}

template <int Rank> int64_t numElements(const MemRefDesc<float, Rank> &d) {
  int64_t n = 1;
  for (int r = 0; r < Rank; ++r)
    n *= d.sizes[r];
  return n;
}

struct ConvArgs {
  MemRef4F *out, *in, *w;
  MemRef1F *bias;
  MemRef4F *residual;
  MemRef1I *offH, *offW;
  MemRef1I *offT; // Frame shift (empty: none) over clips of `frames` images.
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, frames, flags, act;
};

struct DeformArgs {
  MemRef4F *out, *in, *offset, *w;
  MemRef1F *bias;
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, offsetGroups,
      hasBias;
};

/// Bytes of one core's L1 data cache (sysconf), or 0 when the system does
/// not say. Read once per process. The GEMM sizes its K blocks from it
/// (CpuKernelsIsa.inc, kBlocking).
int64_t l1DataCacheBytes();

/// One target's kernels.
struct IsaKernels {
  const char *name;
  int mr, nr; // Micro-tile.
  void (*conv2d)(const ConvArgs &);
  void (*convTranspose2d)(MemRef4F *out, MemRef4F *in, MemRef4F *w,
                          MemRef1F *bias, int64_t hasBias);
  void (*linear)(MemRef2F *out, MemRef2F *in, MemRef2F *w, MemRef1F *bias,
                 int64_t hasBias);
  void (*upsampleBilinear)(MemRef4F *out, MemRef4F *in, bool alignCorners);
  void (*deformConv2d)(const DeformArgs &);
  void (*erfRow)(float *x, int64_t n);
};

/// The kernels of each target (CpuKernels.cpp).
#ifdef GPUOPT_HAVE_X86_ISAS
extern const IsaKernels kAvx512Kernels;
extern const IsaKernels kAvx2Kernels;
#endif
extern const IsaKernels kGenericKernels;

/// The kernels every call uses; nullptr (and `error`) when GPUOPT_CPU_ISA
/// names a path that cannot run (CpuKernelsDispatch.cpp).
const IsaKernels *activeKernels(std::string *error = nullptr);

/// GPUOPT_PROFILE=1: time every kernel call by kind and shape and print a
/// summary (total ms, calls, share) to stderr at exit.
class KernelProfile {
public:
  static KernelProfile *get();
  void add(const std::string &key, double ms);
  ~KernelProfile() = default;

private:
  struct Entry {
    double ms = 0;
    long calls = 0;
  };
  KernelProfile();
  void print();
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

/// Times the enclosing scope when profiling is on.
class ProfileScope {
public:
  template <typename KeyFn>
  explicit ProfileScope(KeyFn keyFn) : profile(KernelProfile::get()) {
    if (profile) {
      key = keyFn();
      start = std::chrono::steady_clock::now();
    }
  }
  ~ProfileScope() {
    if (profile)
      profile->add(key, std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count());
  }

private:
  KernelProfile *profile;
  std::string key;
  std::chrono::steady_clock::time_point start;
};

} // namespace gpuopt::runtime

#endif // GPUOPT_LIB_RUNTIME_CPUKERNELSINTERNAL_H
