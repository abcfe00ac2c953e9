//===- CudaPlanCheckTest.cpp - the data-flow checks of a CUDA plan --------===//
//
// Part of the gpuopt project.
//
// checkCudaPlan (runtime/cuda/CudaPlanCheck.cpp) on small plans built here
// byte by byte, for what the artifacts of real models rarely show: a later
// buffer over part of an earlier one (the byte map splits intervals), a
// buffer read half unwritten, writes over
// a param through a temporary, load-time temporaries that do not persist,
// inputs overlapping params, outputs clobbered after their last write, and
// in-place arguments. Each case expects the exact message or none. One line
// per failing case and exit status 1 otherwise. Run by lit
// (test/Runtime/cuda-plan-check.test).
//
//===----------------------------------------------------------------------===//
#include "gpuopt/Runtime/CudaModel.h"

#include <algorithm>
#include <cstdio>
#include <string>

using namespace gpuopt::runtime;

static int fails = 0;

/// `expect` empty: the plan passes.
static void expectPlan(const CudaArtifact &art, const std::string &expect,
                       const std::string &what) {
  Status s = checkCudaPlan(art, "p");
  std::string got = s ? "" : s.message();
  std::string want =
      expect.empty() ? "" : "p: invalid CUDA artifact: " + expect;
  if (got != want) {
    std::printf("FAIL: %s:\n  got:  %s\n  want: %s\n", what.c_str(),
                got.c_str(), want.c_str());
    ++fails;
  }
}

namespace {

/// A plan under construction: f32 buffers of `bytes` at `offset`.
struct Plan {
  CudaArtifact art;

  unsigned buffer(const char *kind, uint64_t offset, uint64_t bytes,
                  const char *name = "") {
    CudaBuffer b;
    b.kind = kind;
    b.name = name;
    b.shape = {static_cast<int64_t>(bytes / 4)};
    b.bytes = bytes;
    b.offset = offset;
    art.buffers.push_back(b);
    art.arenaBytes = std::max(art.arenaBytes, offset + bytes);
    unsigned id = art.buffers.size() - 1;
    if (b.kind == "input")
      art.inputs.push_back(id);
    if (b.kind == "output")
      art.outputs.push_back(id);
    return id;
  }

  /// A launch of a fresh kernel named `name`: `access` gives per argument
  /// 'r' (read), 'w' (written) or 'b' (both, in place).
  void step(bool init, const char *name, std::vector<unsigned> args,
            const std::string &access) {
    CudaKernel k;
    k.name = name;
    for (size_t a = 0; a < args.size(); ++a) {
      CudaKernelArg arg;
      arg.bytes = art.buffers[args[a]].bytes;
      arg.reads = access[a] != 'w';
      arg.writes = access[a] != 'r';
      arg.inPlace = arg.reads && arg.writes;
      k.args.push_back(arg);
    }
    art.kernels.push_back(k);
    CudaStep s;
    s.kernel = art.kernels.size() - 1;
    s.args = std::move(args);
    s.sources = {std::string("m.py:") + std::to_string(art.kernels.size()) +
                 ":1"};
    (init ? art.init : art.run).push_back(s);
  }
  void run(const char *name, std::vector<unsigned> args,
           const std::string &access) {
    step(false, name, std::move(args), access);
  }
};

} // namespace

int main() {
  {
    // input -> t -> output, with a weight: fine.
    Plan p;
    unsigned w = p.buffer("param", 0, 256, "w");
    unsigned x = p.buffer("input", 256, 256);
    unsigned y = p.buffer("output", 512, 256);
    unsigned t = p.buffer("temp", 768, 1024);
    p.run("k0", {x, w, t}, "rrw");
    p.run("k1", {t, y}, "rw");
    expectPlan(p.art, "", "a valid chain");
  }
  {
    // A later temporary over the middle of a live one: the read names the
    // middle bytes exactly (the interval map splits [768, 1792) in three).
    Plan p;
    unsigned x = p.buffer("input", 0, 256);
    unsigned y = p.buffer("output", 256, 256);
    unsigned a = p.buffer("temp", 768, 1024);
    unsigned b = p.buffer("temp", 1024, 256);
    p.run("ka", {x, a}, "rw");
    p.run("kb", {x, b}, "rw");
    p.run("kc", {a, b, y}, "rrw");
    expectPlan(p.art,
               "run[2] (kernel 'kc' at m.py:3:1): argument 0 reads buffers[2] "
               "(temp), but its bytes were reused: arena bytes [1024, 1280) "
               "were last written through buffers[3] (temp) by run[1] "
               "(kernel 'kb' at m.py:2:1)",
               "a temporary over the middle of a live one");
  }
  {
    // Two temporaries over a live one's tail: the range named ends where
    // the second one's bytes begin.
    Plan p;
    unsigned x = p.buffer("input", 0, 256);
    unsigned y = p.buffer("output", 256, 256);
    unsigned a = p.buffer("temp", 1024, 1024);
    unsigned b = p.buffer("temp", 1536, 512);
    unsigned c = p.buffer("temp", 1792, 512);
    p.run("ka", {x, a}, "rw");
    p.run("kb", {x, b}, "rw");
    p.run("kc", {x, c}, "rw"); // covers [1792, 2304): b's tail and beyond
    p.run("kd", {a, y}, "rw");
    expectPlan(p.art,
               "run[3] (kernel 'kd' at m.py:4:1): argument 0 reads buffers[2] "
               "(temp), but its bytes were reused: arena bytes [1536, 1792) "
               "were last written through buffers[3] (temp) by run[1] "
               "(kernel 'kb' at m.py:2:1)",
               "the first of two foreign writers");
  }
  {
    // A buffer half written: the unwritten half is named.
    Plan p;
    unsigned x = p.buffer("input", 0, 256);
    unsigned y = p.buffer("output", 256, 256);
    unsigned a = p.buffer("temp", 1024, 512);
    unsigned b = p.buffer("temp", 1024, 1024);
    p.run("ka", {x, a}, "rw");
    p.run("kb", {b, y}, "rw");
    expectPlan(p.art,
               "run[1] (kernel 'kb' at m.py:2:1): argument 0 reads buffers[3] "
               "(temp), but its bytes were reused: arena bytes [1024, 1536) "
               "were last written through buffers[2] (temp) by run[0] "
               "(kernel 'ka' at m.py:1:1)",
               "a read of another buffer's bytes first");
    p.art.buffers[b].offset = 1536;
    p.art.buffers[b].bytes = 1024;
    p.art.arenaBytes = 2560;
    p.art.kernels[1].args[0].bytes = 1024;
    expectPlan(p.art,
               "run[1] (kernel 'kb' at m.py:2:1): argument 0 reads buffers[3] "
               "(temp) before it is written: arena bytes [1536, 2560) hold "
               "nothing written before",
               "a read of never written bytes");
  }
  {
    // A temporary written over a param's bytes, in init and in run; a
    // direct write of a param; an input over a param.
    Plan p;
    unsigned w = p.buffer("param", 0, 512, "w");
    unsigned x = p.buffer("input", 512, 256);
    unsigned y = p.buffer("output", 768, 256);
    unsigned t = p.buffer("temp", 256, 256);
    p.run("k0", {x, t}, "rw");
    p.run("k1", {w, t, y}, "rrw");
    expectPlan(p.art,
               "run[0] (kernel 'k0' at m.py:1:1): argument 1 writes buffers[3] "
               "(temp) over arena bytes [256, 512) of buffers[0] (param 'w')",
               "a temporary over a param");
    p.art.run.clear();
    p.step(true, "k2", {x, t}, "rw");
    expectPlan(p.art,
               "init[0] (kernel 'k2' at m.py:3:1): argument 0 reads buffers[1] "
               "(input 0) before it is written: arena bytes [512, 768) hold "
               "nothing written before",
               "an init step reading an input");
    p.art.init.clear();
    p.run("k3", {x, w}, "rb");
    expectPlan(p.art,
               "run[0] (kernel 'k3' at m.py:4:1): argument 1 writes buffers[0] "
               "(param 'w'): parameters are read-only (the weights file "
               "writes them at load)",
               "a param written in place");
    p.art.run.clear();
    p.art.buffers[x].offset = 256;
    expectPlan(p.art,
               "run: buffers[1] (input 0) overlaps arena bytes [256, 512) of "
               "buffers[0] (param 'w')",
               "an input over a param");
  }
  {
    // What init writes persists only through params and constants.
    Plan p;
    unsigned w = p.buffer("param", 0, 256, "w");
    unsigned c = p.buffer("constant", 256, 256);
    unsigned x = p.buffer("input", 512, 256);
    unsigned y = p.buffer("output", 768, 256);
    unsigned t = p.buffer("temp", 1024, 256);
    p.step(true, "i0", {w, t}, "rw");
    p.step(true, "i1", {t, c}, "rw");
    p.run("k0", {x, c, y}, "rrw");
    expectPlan(p.art, "", "a constant made at load through a temporary");
    p.run("k1", {t, y}, "rw");
    expectPlan(p.art,
               "run[1] (kernel 'k1' at m.py:4:1): argument 0 reads buffers[4] "
               "(temp) before it is written: arena bytes [1024, 1280) hold "
               "nothing written before",
               "a load-time temporary read by the forward");
    p.art.run.pop_back();
    p.run("k2", {x, c}, "rb");
    expectPlan(p.art,
               "run[1] (kernel 'k2' at m.py:5:1): argument 1 writes buffers[1] "
               "(constant): constants are written at load (init) only, every "
               "forward reads them",
               "a constant updated by the forward");
  }
  {
    // The output overwritten after its last write; an output never written.
    Plan p;
    unsigned x = p.buffer("input", 0, 256);
    unsigned y = p.buffer("output", 256, 256);
    unsigned t = p.buffer("temp", 256, 256);
    p.run("k0", {x, y}, "rw");
    p.run("k1", {x, t}, "rw");
    expectPlan(p.art,
               "run: buffers[1] (output 0) does not hold what the forward "
               "wrote through it at its end: arena bytes [256, 512) were last "
               "written through buffers[2] (temp) by run[1] (kernel 'k1' at "
               "m.py:2:1)",
               "an output clobbered");
    p.art.run.erase(p.art.run.begin());
    expectPlan(p.art,
               "run: buffers[1] (output 0) does not hold what the forward "
               "wrote through it at its end: arena bytes [256, 512) were last "
               "written through buffers[2] (temp) by run[0] (kernel 'k1' at "
               "m.py:2:1)",
               "an output never written but overlapped");
  }
  {
    // The same buffer as two arguments of a launch: only both in place.
    Plan p;
    unsigned x = p.buffer("input", 0, 256);
    unsigned y = p.buffer("output", 256, 256);
    p.run("k0", {x, y}, "rw");
    p.run("k1", {y, y}, "bb");
    expectPlan(p.art, "", "one buffer as two in-place arguments");
    p.run("k2", {y, y}, "rw");
    expectPlan(p.art,
               "run[2] (kernel 'k2' at m.py:3:1): argument 1 writes buffers[1] "
               "(output 0), which is also argument 0 of the launch (not both "
               "in place)",
               "one buffer read and written through two arguments");
    p.art.run.pop_back();
    unsigned z = p.buffer("temp", 384, 256);
    p.run("k3", {y, z}, "rw");
    expectPlan(p.art,
               "run[2] (kernel 'k3' at m.py:4:1): argument 1 writes buffers[2] "
               "(temp), which overlaps argument 0, buffers[1] (output 0), at "
               "arena bytes [384, 512)",
               "a written argument over another");
    // An empty buffer overlaps nothing.
    p.art.run.pop_back();
    unsigned e = p.buffer("temp", 256, 0);
    p.run("k4", {y, e}, "rw");
    expectPlan(p.art, "", "an empty written buffer inside another argument");
  }
  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
