//===- CudaLibrariesTest.cpp - cuDNN/cuBLASLt loading and descriptors -----===//
//
// Part of the gpuopt project.
//
//   gpuopt-cuda-libraries-test missing      the messages of libraries that do
//                                           not load (run with
//                                           GPUOPT_CUDNN_LIBRARY and
//                                           GPUOPT_CUBLASLT_LIBRARY naming
//                                           files that do not exist)
//   gpuopt-cuda-libraries-test descriptors  with the real libraries: every
//                                           symbol resolves and every step's
//                                           descriptors are accepted, cuDNN's
//                                           output size equal to the plan's
//
// Neither needs a GPU: descriptors are host-side objects (handles, algorithm
// choice and the calls need one). One line per failure, then "fails=N".
// Run by lit (test/Runtime/cuda-libraries.test).
//
//===----------------------------------------------------------------------===//
#include "CudaLibraries.h"

#include "LibraryStepBuilders.h"

#include <cstdio>
#include <cstring>

using namespace gpuopt::runtime;
using namespace gpuopt::runtime::testing;

static int fails = 0;

static void check(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++fails;
  }
}

/// One artifact holding the run steps of all of `plans` (each plan's
/// buffers renumbered after the previous ones').
static CudaArtifact combine(const std::vector<Plan> &plans) {
  CudaArtifact art;
  for (const Plan &p : plans) {
    unsigned base = art.buffers.size();
    uint64_t at = (art.arenaBytes + 255) / 256 * 256;
    for (CudaBuffer b : p.art.buffers) {
      b.offset += at;
      art.buffers.push_back(b);
    }
    art.arenaBytes = at + p.art.arenaBytes;
    for (CudaStep s : p.art.run) {
      for (CudaOperand &o : s.operands)
        if (!o.empty())
          o.buffer += base;
      art.run.push_back(s);
    }
  }
  return art;
}

static std::vector<Plan> everyKind() {
  std::vector<Plan> plans;
  ConvSpec s;
  plans.push_back(convPlan(s));
  ConvSpec g;
  g.groups = 2;
  g.stride = 2;
  g.dil = 2;
  g.pad = 2;
  g.h = 11;
  g.bias = false;
  g.act = kActNone;
  plans.push_back(convPlan(g));
  ConvSpec r;
  r.act = kActNone;
  r.residual = true;
  r.n = 2;
  r.stridedIn = r.stridedOut = true;
  plans.push_back(convPlan(r));
  plans.push_back(transposePlan(true));
  plans.push_back(transposePlan(false, 3, 2));
  plans.push_back(linearPlan(true));
  plans.push_back(linearPlan(false, 4, 6, 5, 10, 3));
  return plans;
}

static void testMissing() {
  // cuDNN first: the conv step comes first.
  CudaArtifact art = combine(everyKind());
  std::unique_ptr<CudaLibrarySteps> steps;
  Status s = CudaLibrarySteps::prepare(art, steps);
  const char *cudnn = std::getenv("GPUOPT_CUDNN_LIBRARY");
  std::string want = "run[0] (library 'conv2d' at m.py:7:3) needs cuDNN: "
                     "cannot load the vendor library cuDNN 9 (tried " +
                     std::string(cudnn ? cudnn : "?") + ": ";
  check(!s && s.message().compare(0, want.size(), want) == 0 &&
            s.message().find("site-packages/nvidia/cudnn/lib") !=
                std::string::npos,
        "missing cuDNN: " + s.message());
  std::printf("%s\n", s.message().c_str());
  // A plan of linear steps only needs cuBLASLt alone.
  CudaArtifact lin = combine({linearPlan(true)});
  s = CudaLibrarySteps::prepare(lin, steps);
  const char *lt = std::getenv("GPUOPT_CUBLASLT_LIBRARY");
  want = "run[0] (library 'linear' at m.py:7:3) needs cuBLASLt: cannot load "
         "the vendor library cuBLASLt (tried " +
         std::string(lt ? lt : "?") + ": ";
  check(!s && s.message().compare(0, want.size(), want) == 0 &&
            s.message().find("nvidia/cu13/lib") != std::string::npos,
        "missing cuBLASLt: " + s.message());
  std::printf("%s\n", s.message().c_str());
  // A plan without Library steps opens nothing and needs nothing.
  CudaArtifact none;
  steps.reset();
  s = CudaLibrarySteps::prepare(none, steps);
  check(s && !steps, "a plan without Library steps: " + s.message());
}

static void testDescriptors() {
  CudaArtifact art = combine(everyKind());
  std::unique_ptr<CudaLibrarySteps> steps;
  Status s = CudaLibrarySteps::prepare(art, steps);
  check(s && steps && steps->needsCudnn() && steps->needsCublasLt(),
        "open both libraries: " + s.message());
  if (!s || !steps)
    return;
  std::printf("cuDNN %zu, cuBLASLt %zu\n", cudnnVersion(), cublasLtVersion());
  check(cudnnVersion() / 10000 == 9 && cublasLtVersion() >= 120000,
        "library versions");
  s = steps->buildDescriptors();
  check(s.isOk(), "descriptors: " + s.message());
  for (size_t i = 0; i < art.run.size(); ++i) {
    const LibraryCallPlan *p = steps->plan("run", i);
    check(p != nullptr, "plan of run[" + std::to_string(i) + "]");
    if (p)
      std::printf("run[%zu] %s\n", i, formatLibraryCall(*p).c_str());
  }
  check(steps->plan("init", 0) == nullptr, "no init step");
}

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "missing") == 0)
    testMissing();
  else if (argc == 2 && std::strcmp(argv[1], "descriptors") == 0)
    testDescriptors();
  else {
    std::fprintf(stderr,
                 "usage: gpuopt-cuda-libraries-test missing|descriptors\n");
    return 2;
  }
  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
