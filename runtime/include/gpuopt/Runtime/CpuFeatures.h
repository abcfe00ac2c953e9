//===- CpuFeatures.h - x86 extensions and --cpu levels ----------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The x86 extensions of CpuFeatures.def, the `--cpu=` levels of
// gpuopt-compile and gpuopt-run (native, x86-64, x86-64-v2, x86-64-v3,
// x86-64-v4: the psABI micro-architecture levels, which LLVM also knows as
// CPU names) and this CPU's extensions, detected with CPUID. Shared by the
// compiler (what a level compiles for and records) and the runtime (what a
// library may run on); no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CPUFEATURES_H
#define GPUOPT_RUNTIME_CPUFEATURES_H

#include <string>
#include <string_view>
#include <vector>

namespace gpuopt {
namespace runtime {

/// The names `--cpu=` takes, "native" first, then the levels lowest first.
const std::vector<std::string> &cpuLevelNames();

/// "native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4", for messages.
std::string cpuLevelList();

/// 1 to 4 for x86-64 to x86-64-v4, 0 for any other name (also "native").
int cpuLevel(std::string_view name);

/// The extensions every CPU of level `level` (1 to 4) has beyond the
/// x86-64 baseline, in CpuFeatures.def order: what `--cpu=<level>` compiles
/// for and records.
std::vector<std::string> cpuLevelFeatures(int level);

/// Every extension of CpuFeatures.def (those the runtime can test), in
/// table order.
const std::vector<std::string> &checkedCpuFeatures();

/// Whether `name` is one of checkedCpuFeatures().
bool isCheckedCpuFeature(std::string_view name);

/// The extensions of CpuFeatures.def this CPU has, as CPUID and XGETBV (the
/// register state the OS saves) report them, in table order; none off x86.
/// The CPU kernels choose their instruction set by these.
const std::vector<std::string> &detectedCpuFeatures();

/// Whether `name` is one of detectedCpuFeatures().
bool cpuHasFeature(std::string_view name);

/// The extensions of CpuFeatures.def this CPU has (CPUID, and XGETBV for
/// the register state the OS saves), in table order; none off x86. For tests
/// only, the environment variable GPUOPT_TEST_HIDE_CPU_FEATURES (names
/// separated by commas) removes extensions from this set, to test the
/// refusal of a library built for a CPU this machine is not; it can only
/// hide extensions, never add any.
std::vector<std::string> hostCpuFeatures();

/// The extensions of `required` that hostCpuFeatures() lacks.
std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &required);

/// The `--cpu=` values whose code runs on this CPU, for a refusal's remedy:
/// "--cpu=x86-64-v3 or --cpu=native" (the highest level it has).
std::string cpuLevelsForThisCpu();

/// `names` joined with ", ".
std::string joinCpuFeatures(const std::vector<std::string> &names);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CPUFEATURES_H
