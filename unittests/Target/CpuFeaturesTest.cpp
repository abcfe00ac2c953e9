//===- CpuFeaturesTest.cpp - the feature table against LLVM ---------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Checks runtime/include/gpuopt/Runtime/CpuFeatures.def against LLVM, which the
// compiler uses while the runtime uses the table alone:
// - each level's extensions are exactly those of LLVM's CPU of that name
//   among the table's (what `--cpu=<level>` records is what LLVM's level
//   enables);
// - the runtime's CPUID detection agrees with llvm::sys::getHostCPUFeatures
//   on this machine for every extension of the table (a wrong leaf, register
//   or bit shows here);
// - GPUOPT_TEST_HIDE_CPU_FEATURES only removes extensions.
// Prints each failure and "fails=N".
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CpuFeatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace rt = gpuopt::runtime;

namespace {
int fails = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++fails;
  }
}

bool has(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
} // namespace

int main() {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  if (!triple.isX86()) {
    std::printf("not an x86 host: nothing to check\nfails=0\n");
    return 0;
  }
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  expect(target != nullptr, "no LLVM target: " + error);
  if (!target)
    return 1;

  const std::vector<std::string> &levels = rt::cpuLevelNames();
  for (size_t level = 1; level < levels.size(); ++level) {
    expect(rt::cpuLevel(levels[level]) == static_cast<int>(level),
           "cpuLevel(" + levels[level] + ")");
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, levels[level], ""));
    std::vector<std::string> features =
        rt::cpuLevelFeatures(static_cast<int>(level));
    for (const std::string &feature : rt::checkedCpuFeatures())
      expect(sti->checkFeatures("+" + feature) == has(features, feature),
             "LLVM's " + levels[level] +
                 (has(features, feature) ? " lacks " : " has ") + feature +
                 ", the table says the opposite");
  }
  expect(rt::cpuLevel("native") == 0 && rt::cpuLevel("x86-64-v5") == 0,
         "cpuLevel of a non-level");

  unsetenv("GPUOPT_TEST_HIDE_CPU_FEATURES");
  std::vector<std::string> host = rt::hostCpuFeatures();
  llvm::StringMap<bool> llvmHost = llvm::sys::getHostCPUFeatures();
  for (const std::string &feature : rt::checkedCpuFeatures())
    expect(has(host, feature) == llvmHost.lookup(feature),
           feature + ": the runtime's CPUID says " +
               (has(host, feature) ? "yes" : "no") + ", LLVM's host says " +
               (llvmHost.lookup(feature) ? "yes" : "no"));
  std::printf("host: %s\n", rt::joinCpuFeatures(host).c_str());

  setenv("GPUOPT_TEST_HIDE_CPU_FEATURES", "avx2,,not-a-feature,sse3", 1);
  std::vector<std::string> hidden = rt::hostCpuFeatures();
  for (const std::string &feature : host)
    expect(has(hidden, feature) == (feature != "avx2" && feature != "sse3"),
           "hiding avx2,sse3 changed " + feature);
  expect(hidden.size() <= host.size(), "hiding added extensions");
  expect(rt::missingCpuFeatures({"avx2", "sse3", "sse4.2"}) ==
                 std::vector<std::string>({"avx2", "sse3"}) ||
             !has(host, "sse4.2"),
         "missingCpuFeatures with avx2 and sse3 hidden");
  expect(rt::cpuLevelsForThisCpu() == "--cpu=x86-64 or --cpu=native",
         "with sse3 hidden the highest level is x86-64, got " +
             rt::cpuLevelsForThisCpu());
  unsetenv("GPUOPT_TEST_HIDE_CPU_FEATURES");

  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
