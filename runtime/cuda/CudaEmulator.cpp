//===- CudaEmulator.cpp - run a CUDA artifact's plan on the host ----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The host image is written to a private temporary file, dlopened
// (RTLD_LOCAL) and unlinked; each kernel's entry point is resolved by name.
// One host arena of the plan's size holds every buffer at its offset, so
// the kernels see exactly the aliasing the GPU arena gives them. Every load
// and store of the image's kernels is bounds-checked (kCudaHostAbiVersion):
// a violating access is skipped and counted in the violation record, which
// the launch passes after the buffers; the first one fails the launch with
// the step, the thread and the element. After the record comes the block's
// workgroup memory, refilled with NaN at the start of each block.
//
// A kernel whose threads synchronize (gpu.barrier, gpu.shuffle) runs each
// thread of a block as a fiber (its own stack with a guard page; on x86-64
// a switch saves the callee-saved registers and the FP control words and
// swaps stacks: 27 ns a round trip on a Zen 3 EPYC, against 540 ns for
// ucontext's swapcontext, the fallback elsewhere, which also makes a
// signal-mask system call):
// the image's barrier and shuffle hooks suspend the thread; when no thread
// of the block can run on, the scheduler completes the shuffles of every
// warp whose lanes have all arrived, or else, if every thread waits at the
// same barrier, releases them all into the next phase. Anything else (some
// threads returned or at another barrier, lanes of a warp at different
// places) is the barrier divergence CUDA leaves undefined, an error naming
// the step, the block and the threads. Other kernels keep the plain loop.
// An asynchronous copy (PTX cp.async) is held by its thread's fiber, its
// destination already poisoned by the kernel, and written when the thread
// waits for its group: a read before that wait, by any thread, sees NaN,
// and a thread that returns with copies it never waited for is an error.
//
// A Library step (cuDNN/cuBLASLt on a GPU) runs the CPU kernel of its
// routine (runtime/cpu, the same semantics) on descriptors of its operands'
// views of the arena. With precision TF32 its input and weight are first
// copied, each element rounded to TF32 (10 mantissa bits, round to nearest,
// ties to even, into scratch, never in place). A GPU may round differently
// (PTX's cvt.rna.tf32.f32 rounds ties away from zero; tensor cores fed raw
// FP32 bits ignore the low 13): at most one TF32 unit of each operand apart,
// well inside the TF32 tolerance. Products and sums stay FP32, and bias and
// residual are not rounded.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaEmulator.h"

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/ModelLibrary.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <random>
#include <sys/mman.h>
#include <unistd.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

using namespace gpuopt::runtime;
namespace rt = gpuopt::runtime;

namespace {

/// A kernel's host entry point: one thread.
using HostKernel = void (*)(const int64_t *ids, void *const *args);

/// The bytes of the quiet NaN 0x7fc00000, little-endian.
constexpr uint8_t kNaN[4] = {0x00, 0x00, 0xc0, 0x7f};
/// Most blocks of one emulated launch (a zoo model at 64x64 launches a few
/// thousand; a damaged plan's 2^93 blocks would never end).
constexpr uint64_t kMaxBlocks = 1ull << 24;

/// Lanes of a warp.
constexpr uint32_t kWarpSize = 32;

//===----------------------------------------------------------------------===//
// Fiber contexts
//===----------------------------------------------------------------------===//

#if defined(__x86_64__)
// gpuopt_fiber_switch(from, to): saves the caller's callee-saved registers
// (System V: rbx, rbp, r12-r15), MXCSR and the x87 control word on its
// stack, stores the stack pointer to *from, and resumes the context whose
// stack pointer is `to` (saved by an earlier switch, or laid out by
// FiberContext::start). Signal masks are not touched: the fibers are threads
// of one emulated block, run by one OS thread.
extern "C" void gpuopt_fiber_switch(void **from, void *to);
asm(R"(
  .text
  .p2align 4
  .globl gpuopt_fiber_switch
  .hidden gpuopt_fiber_switch
  .type gpuopt_fiber_switch,@function
gpuopt_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gpuopt_fiber_switch, .-gpuopt_fiber_switch
)");

/// A suspended execution context: its saved stack pointer.
struct FiberContext {
  void *sp = nullptr;

  /// Lays out `stack` (`size` bytes, growing down) so that the first switch
  /// to this context enters `entry`, which must never return: a fiber's end
  /// switches back to the scheduler.
  void start(uint8_t *stack, size_t size, void (*entry)()) {
    uint32_t mxcsr = 0;
    uint16_t fpucw = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    // The entry is reached by the switch's `ret`, as if called: its stack
    // pointer is then 8 mod 16 (SysV). Top 16-aligned: the return address
    // at top - 16, a null one above it (entry never returns), then the six
    // registers (zero) and the two control words.
    auto top = reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t(15);
    auto *slot = reinterpret_cast<uint64_t *>(top);
    slot[-1] = 0;
    slot[-2] = reinterpret_cast<uint64_t>(entry);
    for (int i = 3; i <= 8; ++i)
      slot[-i] = 0;
    slot[-9] = mxcsr;  // at sp + 8
    slot[-10] = fpucw; // at sp
    sp = &slot[-10];
  }

  /// Suspends the caller into `*this` and resumes `to`.
  void switchTo(FiberContext &to) { gpuopt_fiber_switch(&sp, to.sp); }
};
#else
/// A suspended execution context (ucontext).
struct FiberContext {
  ucontext_t context;

  void start(uint8_t *stack, size_t size, void (*entry)()) {
    getcontext(&context);
    context.uc_stack.ss_sp = stack;
    context.uc_stack.ss_size = size;
    context.uc_link = nullptr; // entry never returns
    makecontext(&context, entry, 0);
  }

  void switchTo(FiberContext &to) { swapcontext(&context, &to.context); }
};
#endif

/// Where a fiber (a thread of a synchronizing kernel) stands.
enum class FiberState : uint8_t {
  Runnable,
  AtBarrier,
  AtShuffle,
  AtMma,
  Returned
};

/// An element of an asynchronous copy a thread has not waited for.
struct PendingCopy {
  uint8_t *address;
  uint64_t bits;
  int64_t bytes;
  /// Its committed group, or -1 while the thread's group is open.
  int64_t group;
};

/// One thread of a block of a synchronizing kernel.
struct Fiber {
  FiberContext context;
  FiberState state = FiberState::Runnable;
  int64_t ids[12] = {};
  /// At a barrier: its site; at a shuffle: the operands.
  int64_t site = 0, mode = 0, offset = 0, width = 0;
  uint32_t bits = 0;
  /// A shuffle's result (CudaHostHooks::shuffle).
  int64_t result = 0;
  /// At an mma: its fragments (on the fiber's stack; c receives D).
  const float *mmaA = nullptr, *mmaB = nullptr;
  float *mmaC = nullptr;
  /// Its asynchronous copies not yet written, in issue order, and the
  /// number of groups it has committed.
  std::vector<PendingCopy> pending;
  int64_t groups = 0;
};

/// "(x,y,z)".
std::string triple(const int64_t *v) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
         std::to_string(v[2]) + ")";
}

/// Fills [begin, end) of `base` with the NaN pattern, aligned to `base`.
void fillNaN(uint8_t *base, uint64_t begin, uint64_t end) {
  uint64_t i = begin;
  for (; i < end && i % 4; ++i)
    base[i] = kNaN[i % 4];
  for (; i + 4 <= end; i += 4)
    std::memcpy(base + i, kNaN, 4);
  for (; i < end; ++i)
    base[i] = kNaN[i % 4];
}

/// Writes `bytes` to a fresh private file in $TMPDIR (or /tmp).
Status writePrivateFile(const std::vector<uint8_t> &bytes, std::string &path) {
  const char *dir = std::getenv("TMPDIR");
  std::string name =
      std::string(dir && *dir ? dir : "/tmp") + "/gpuopt-emulate-XXXXXX.so";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  int fd = ::mkstemps(buf.data(), 3);
  if (fd < 0)
    return Status::error("cannot create a temporary file for the host "
                         "image in " +
                         name.substr(0, name.rfind('/')) + ": " +
                         std::strerror(errno));
  path = buf.data();
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(path.c_str());
      return Status::error("cannot write the host image to " + path + ": " +
                           why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    ::unlink(path.c_str());
    return Status::error("cannot write the host image to " + path);
  }
  return Status::ok();
}

/// `x` rounded to TF32: the 10 high mantissa bits kept, rounded to nearest,
/// ties to even (infinities and NaNs as they are; a value that rounds past
/// the largest finite one becomes infinity, as in IEEE rounding).
float roundToTf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u)
    return x;
  u += 0x0fffu + ((u >> 13) & 1u);
  u &= 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}

/// A dense copy of the view `src` into `scratch`, each element rounded to
/// TF32, as a descriptor.
template <int Rank>
MemRefDesc<float, Rank> roundedCopy(const MemRefDesc<float, Rank> &src,
                                    std::vector<float> &scratch) {
  MemRefDesc<float, Rank> d = src;
  int64_t n = 1;
  for (int r = 0; r < Rank; ++r)
    n *= src.sizes[r];
  scratch.resize(static_cast<size_t>(n));
  int64_t stride = 1;
  for (int r = Rank - 1; r >= 0; --r) {
    d.strides[r] = stride;
    stride *= src.sizes[r];
  }
  int64_t index[Rank] = {};
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = src.offset;
    for (int r = 0; r < Rank; ++r)
      at += index[r] * src.strides[r];
    scratch[i] = roundToTf32(src.aligned[at]);
    for (int r = Rank - 1; r >= 0 && ++index[r] == src.sizes[r]; --r)
      index[r] = 0;
  }
  d.allocated = d.aligned = scratch.data();
  d.offset = 0;
  return d;
}

} // namespace

Status gpuopt::runtime::parseEmulationOrder(const std::string &text,
                                            EmulationOptions &out) {
  EmulationOptions o;
  if (text == "forward") {
    o.order = EmulationOrder::Forward;
  } else if (text == "reversed") {
    o.order = EmulationOrder::Reversed;
  } else if (text == "shuffled") {
    o.order = EmulationOrder::Shuffled;
  } else if (text.compare(0, 9, "shuffled:") == 0 && text.size() > 9 &&
             text.find_first_not_of("0123456789", 9) == std::string::npos &&
             text.size() <= 9 + 19) {
    o.order = EmulationOrder::Shuffled;
    o.seed = std::strtoull(text.c_str() + 9, nullptr, 10);
  } else {
    return Status::error("unknown emulation order '" + text +
                         "' (expected forward, reversed, shuffled or "
                         "shuffled:SEED)");
  }
  out = o;
  return Status::ok();
}

const char *gpuopt::runtime::hostImageChip() {
#if defined(__x86_64__)
  return "host-x86_64";
#elif defined(__aarch64__)
  return "host-aarch64";
#else
  return "host-unknown";
#endif
}

struct CudaEmulator::Impl {
  void *handle = nullptr;
  uint8_t *arena = nullptr;
  uint64_t arenaSize = 0;
  EmulationOptions options;
  std::mt19937_64 rng;
  std::vector<HostKernel> kernels;
  /// Per kernel: the bytes of workgroup memory of a block, whether its
  /// threads synchronize (gpuopt_hostinfo_K).
  std::vector<uint64_t> workgroupBytes;
  std::vector<bool> syncs;
  /// One block's workgroup memory, as large as the largest kernel's.
  uint8_t *workgroup = nullptr;
  /// Fibers of one block and their stacks (mmap'ed, a guard page below).
  std::vector<Fiber> fibers;
  std::vector<uint8_t *> stacks;
  uint64_t page = 4096;
  /// The scheduler's context, the fiber running and what it runs.
  FiberContext scheduler;
  Fiber *current = nullptr;
  HostKernel running = nullptr;
  void *const *runningArgs = nullptr;
  /// A hook called outside a fiber (an image whose info is wrong).
  bool misuse = false;
  /// The running kernel's bytes of workgroup memory, and the first
  /// asynchronous copy outside them (an error of the launch).
  uint64_t runningWorkgroupBytes = 0;
  std::string asyncError;
  /// Byte ranges [begin, end) refilled with NaN before each forward.
  std::vector<std::pair<uint64_t, uint64_t>> volatileRanges;

  ~Impl() {
    std::free(arena);
    std::free(workgroup);
    for (uint8_t *stack : stacks)
      ::munmap(stack, page + rt::kCudaHostFiberStack);
    if (handle)
      dlclose(handle);
  }

  /// The emulator whose fiber runs now (the fibers' entry takes no
  /// argument).
  static thread_local Impl *active;

  static void fiberMain() {
    Impl *I = active;
    Fiber *f = I->current;
    I->running(f->ids, I->runningArgs);
    f->state = FiberState::Returned;
    // Back to the scheduler, never to be resumed (the next block starts the
    // fiber afresh).
    f->context.switchTo(I->scheduler);
    std::abort();
  }

  /// The fiber a hook runs on; null, and the misuse recorded, when a hook
  /// is called outside one (an image whose info is wrong).
  Fiber *runningFiber() {
    if (!current)
      misuse = true;
    return current;
  }

  static void barrierHook(void *ctx, int64_t site) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return;
    f->state = FiberState::AtBarrier;
    f->site = site;
    f->context.switchTo(I->scheduler);
  }

  static int64_t shuffleHook(void *ctx, int64_t site, int64_t mode,
                             int64_t bits, int64_t offset, int64_t width) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return bits & 0xffffffff; // its own value, not valid
    f->state = FiberState::AtShuffle;
    f->site = site;
    f->mode = mode;
    f->bits = static_cast<uint32_t>(bits);
    f->offset = offset;
    f->width = width;
    f->context.switchTo(I->scheduler);
    return f->result;
  }

  static void mmaHook(void *ctx, int64_t site, int64_t shape, const float *a,
                      const float *b, float *c) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return;
    f->state = FiberState::AtMma;
    f->site = site;
    f->mode = shape;
    f->mmaA = a;
    f->mmaB = b;
    f->mmaC = c;
    f->context.switchTo(I->scheduler);
  }

  static void asyncCopyHook(void *ctx, int64_t address, int64_t bits,
                            int64_t bytes) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return;
    auto *p = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(address));
    if (bytes < 1 || bytes > 8 || !I->workgroup || p < I->workgroup ||
        p + bytes > I->workgroup + I->runningWorkgroupBytes) {
      if (I->asyncError.empty())
        I->asyncError = "thread " + triple(f->ids + 3) +
                        ": an asynchronous copy of " + std::to_string(bytes) +
                        " bytes outside the block's " +
                        std::to_string(I->runningWorkgroupBytes) +
                        " bytes of workgroup memory";
      return;
    }
    f->pending.push_back(
        PendingCopy{p, static_cast<uint64_t>(bits), bytes, -1});
  }

  static void asyncCommitHook(void *ctx) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return;
    for (PendingCopy &c : f->pending)
      if (c.group < 0)
        c.group = f->groups;
    ++f->groups;
  }

  /// Writes the thread's copies of all but its `left` most recently
  /// committed groups (uncommitted copies stay pending, as in PTX).
  static void asyncWaitHook(void *ctx, int64_t left) {
    auto *I = static_cast<Impl *>(ctx);
    Fiber *f = I->runningFiber();
    if (!f)
      return;
    const int64_t done = f->groups - std::max<int64_t>(left, 0);
    std::vector<PendingCopy> rest;
    for (const PendingCopy &c : f->pending) {
      if (c.group < 0 || c.group >= done) {
        rest.push_back(c);
        continue;
      }
      std::memcpy(c.address, &c.bits, static_cast<size_t>(c.bytes));
    }
    f->pending.swap(rest);
  }

  /// Fibers and stacks for `n` threads.
  Status prepareFibers(uint64_t n) {
    if (fibers.size() < n)
      fibers.resize(n);
    while (stacks.size() < n) {
      void *p = ::mmap(nullptr, page + rt::kCudaHostFiberStack,
                       PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED)
        return Status::error("cannot map a fiber stack for an emulated "
                             "thread: " +
                             std::string(std::strerror(errno)));
      stacks.push_back(static_cast<uint8_t *>(p));
      if (::mprotect(p, page, PROT_NONE) != 0)
        return Status::error("cannot protect a fiber stack's guard page: " +
                             std::string(std::strerror(errno)));
    }
    return Status::ok();
  }

  /// A permutation of [0, n) in the chosen order.
  void order(uint64_t n, std::vector<uint32_t> &out) {
    out.resize(n);
    for (uint64_t i = 0; i < n; ++i)
      out[i] = static_cast<uint32_t>(
          options.order == EmulationOrder::Reversed ? n - 1 - i : i);
    if (options.order == EmulationOrder::Shuffled)
      for (uint64_t i = n; i > 1; --i) // Fisher-Yates
        std::swap(out[i - 1], out[rng() % i]);
  }

  /// The descriptor of a Library step's operand over the arena (an empty
  /// one points at a dummy element).
  template <typename T, int Rank>
  MemRefDesc<T, Rank> view(const CudaArtifact &art, const CudaOperand &o) {
    static T dummy[1];
    MemRefDesc<T, Rank> d{};
    d.allocated = d.aligned =
        o.empty() ? dummy
                  : reinterpret_cast<T *>(arena + art.buffers[o.buffer].offset);
    d.offset = o.empty() ? 0 : o.offset;
    for (int r = 0; r < Rank; ++r) {
      d.sizes[r] = o.sizes[r];
      d.strides[r] = o.strides[r];
    }
    return d;
  }

  /// Runs a Library step: the CPU kernel of its routine on the arena, with
  /// TF32 the input and weight rounded first (into scratch copies).
  Status runLibrary(const CudaArtifact &art, const char *plan, size_t index,
                    const CudaStep &step) {
    const std::vector<CudaOperand> &ops = step.operands;
    const std::vector<int64_t> &sc = step.scalars;
    bool tf32 = art.precision == CudaPrecision::TF32;
    std::vector<float> inScratch, wScratch;
    std::function<void()> call;
    MemRef4F out4, in4, w4, res4;
    MemRef2F out2, in2, w2;
    MemRef1F bias = view<float, 1>(art, ops[3]);
    MemRef1I offH, offW, offT;
    if (step.library == "linear") {
      out2 = view<float, 2>(art, ops[0]);
      in2 = view<float, 2>(art, ops[1]);
      w2 = view<float, 2>(art, ops[2]);
      if (tf32) {
        in2 = roundedCopy(in2, inScratch);
        w2 = roundedCopy(w2, wScratch);
      }
      call = [&] {
        _mlir_ciface_gpuopt_cpu_linear(&out2, &in2, &w2, &bias, sc[0]);
      };
    } else {
      out4 = view<float, 4>(art, ops[0]);
      in4 = view<float, 4>(art, ops[1]);
      w4 = view<float, 4>(art, ops[2]);
      if (tf32) {
        in4 = roundedCopy(in4, inScratch);
        w4 = roundedCopy(w4, wScratch);
      }
      if (step.library == "conv2d") {
        res4 = view<float, 4>(art, ops[4]);
        offH = view<int64_t, 1>(art, ops[5]);
        offW = view<int64_t, 1>(art, ops[6]);
        offT = view<int64_t, 1>(art, ops[7]);
        call = [&] {
          _mlir_ciface_gpuopt_cpu_conv2d(
              &out4, &in4, &w4, &bias, &res4, &offH, &offW, &offT, sc[0], sc[1],
              sc[2], sc[3], sc[4], sc[5], sc[6], sc[7], sc[8], sc[9]);
        };
      } else {
        call = [&] {
          _mlir_ciface_gpuopt_cpu_conv_transpose2d(&out4, &in4, &w4, &bias,
                                                   sc[0]);
        };
      }
    }
    // A kernel failure (an allocation, an unsupported CPU) is an error, not
    // an abort.
    void *args[] = {&call};
    std::string error;
    if (!callGenerated(
            [](void **a) { (*static_cast<std::function<void()> *>(a[0]))(); },
            args, error))
      return Status::error(describeCudaStep(art, plan, index) + ": " + error);
    return Status::ok();
  }

  /// Runs step `index` of plan `plan` ("init" or "run"); an out-of-bounds
  /// access of a thread is an error after the launch.
  Status run(const CudaArtifact &art, const char *plan, size_t index) {
    const CudaStep &step = (plan[0] == 'i' ? art.init : art.run)[index];
    if (step.isLibrary)
      return runLibrary(art, plan, index, step);
    const uint64_t gx = step.grid[0], gy = step.grid[1], gz = step.grid[2];
    const uint64_t bx = step.block[0], by = step.block[1], bz = step.block[2];
    const uint64_t wgBytes = workgroupBytes[step.kernel];
    runningWorkgroupBytes = wgBytes;
    asyncError.clear();
    const bool sync = syncs[step.kernel];
    std::vector<void *> args;
    for (unsigned id : step.args)
      args.push_back(arena + art.buffers[id].offset);
    int64_t record[kCudaHostRecordSize] = {};
    args.push_back(record);
    args.push_back(wgBytes ? workgroup : nullptr);
    int64_t culprit[6] = {};
    bool seen = false;
    int64_t ids[12] = {0,           0,           0,           0,
                       0,           0,           int64_t(bx), int64_t(by),
                       int64_t(bz), int64_t(gx), int64_t(gy), int64_t(gz)};
    HostKernel fn = kernels[step.kernel];
    if (sync) {
      if (bx * by * bz > 1024)
        return Status::error(describeCudaStep(art, plan, index) +
                             ": a block of more than 1024 threads");
      if (Status s = prepareFibers(bx * by * bz); !s)
        return s;
    }
    std::vector<uint32_t> blocks, threads;
    order(gx * gy * gz, blocks);
    for (uint32_t b : blocks) {
      ids[0] = b % gx;
      ids[1] = b / gx % gy;
      ids[2] = b / (gx * gy);
      if (wgBytes)
        fillNaN(workgroup, 0, wgBytes);
      order(bx * by * bz, threads);
      if (sync) {
        if (Status s = runBlock(art, plan, index, fn, args.data(), ids, threads,
                                record, culprit, seen);
            !s)
          return s;
        continue;
      }
      for (uint32_t t : threads) {
        ids[3] = t % bx;
        ids[4] = t / bx % by;
        ids[5] = t / (bx * by);
        fn(ids, args.data());
        if (record[0] && !seen) {
          std::copy(ids, ids + 6, culprit);
          seen = true;
        }
      }
    }
    if (misuse)
      return Status::error(describeCudaStep(art, plan, index) +
                           ": the kernel reached a barrier or shuffle, but "
                           "its host image says its threads do not "
                           "synchronize");
    if (!record[0])
      return Status::ok();
    return Status::error(
        describeOutOfBounds(art, plan, index, step, record, culprit));
  }

  /// "thread (1,0,0)" or "threads (1,0,0), (2,0,0), (3,0,0) and 5 more".
  std::string describeThreads(const std::vector<uint32_t> &ts) const {
    std::string text = ts.size() == 1 ? "thread " : "threads ";
    for (size_t i = 0; i < ts.size() && i < 3; ++i)
      text += (i ? ", " : "") + triple(fibers[ts[i]].ids + 3);
    if (ts.size() > 3)
      text += " and " + std::to_string(ts.size() - 3) + " more";
    return text;
  }

  /// Runs the threads of one block (ids[0..3) its id, ids[6..12) the sizes)
  /// as fibers in the order `threads`, phase after phase.
  Status runBlock(const CudaArtifact &art, const char *plan, size_t index,
                  HostKernel fn, void *const *args, const int64_t *ids,
                  std::vector<uint32_t> &threads, const int64_t *record,
                  int64_t *culprit, bool &seen) {
    const uint64_t n = threads.size();
    const int64_t bx = ids[6], by = ids[7];
    for (uint64_t t = 0; t < n; ++t) {
      Fiber &f = fibers[t];
      f.state = FiberState::Runnable;
      f.pending.clear();
      f.groups = 0;
      std::copy(ids, ids + 12, f.ids);
      f.ids[3] = int64_t(t) % bx;
      f.ids[4] = int64_t(t) / bx % by;
      f.ids[5] = int64_t(t) / (bx * by);
      f.context.start(stacks[t] + page, rt::kCudaHostFiberStack, fiberMain);
    }
    running = fn;
    runningArgs = args;
    active = this;
    auto where = [&] {
      return describeCudaStep(art, plan, index) + ": in block " + triple(ids) +
             ", ";
    };
    for (;;) {
      for (uint32_t t : threads) {
        Fiber &f = fibers[t];
        if (f.state != FiberState::Runnable)
          continue;
        current = &f;
        scheduler.switchTo(f.context);
        current = nullptr;
        if (record[0] && !seen) {
          std::copy(f.ids, f.ids + 6, culprit);
          seen = true;
        }
        if (!asyncError.empty())
          return Status::error(where() + asyncError);
        if (f.state == FiberState::Returned && !f.pending.empty())
          return Status::error(
              where() + "thread " + triple(f.ids + 3) + " returned with " +
              std::to_string(f.pending.size()) +
              " element(s) of asynchronous copies to workgroup memory it "
              "never waited for (nvgpu.device_async_wait, PTX "
              "cp.async.wait_group): their destination keeps its poison");
      }
      // No thread can run on: complete the warps' shuffles.
      bool progressed = false;
      for (uint64_t base = 0; base < n; base += kWarpSize)
        if (Status s = shuffleWarp(base, n, where, progressed); !s)
          return s;
      for (uint64_t base = 0; base < n; base += kWarpSize)
        if (Status s = mmaWarp(base, n, where, progressed); !s)
          return s;
      if (progressed)
        continue;
      // Or the block's barrier.
      std::vector<uint32_t> returned;
      std::vector<std::pair<int64_t, std::vector<uint32_t>>> waiting;
      for (uint32_t t = 0; t < n; ++t) {
        const Fiber &f = fibers[t];
        if (f.state == FiberState::Returned) {
          returned.push_back(t);
          continue;
        }
        auto at =
            std::find_if(waiting.begin(), waiting.end(),
                         [&](const auto &w) { return w.first == f.site; });
        if (at == waiting.end())
          waiting.push_back({f.site, {t}});
        else
          at->second.push_back(t);
      }
      if (waiting.empty())
        return Status::ok();
      if (returned.empty() && waiting.size() == 1) {
        for (uint32_t t = 0; t < n; ++t)
          fibers[t].state = FiberState::Runnable;
        if (options.order == EmulationOrder::Shuffled)
          order(n, threads);
        continue;
      }
      std::string text = where() + "barrier divergence (undefined in CUDA): ";
      bool first = true;
      for (const auto &[site, ts] : waiting) {
        text += (first ? "" : ", while ") + describeThreads(ts) +
                (ts.size() == 1 ? " waits" : " wait") + " at gpu.barrier #" +
                std::to_string(site) + " of the kernel";
        first = false;
      }
      if (!returned.empty())
        text += ", while " + describeThreads(returned) +
                (returned.size() == 1 ? " has" : " have") + " returned";
      return Status::error(text);
    }
  }

  /// Completes the shuffle of the warp of threads [base, base + 32) of a
  /// block of `n` if some of its lanes wait at one (PTX shfl.sync as
  /// --convert-gpu-to-nvvm emits it: member mask the first `width` lanes,
  /// clamp `width - 1`, for `up` `32 - width`).
  template <typename Where>
  Status shuffleWarp(uint64_t base, uint64_t n, const Where &where,
                     bool &progressed) {
    const uint32_t lanes = uint32_t(std::min<uint64_t>(kWarpSize, n - base));
    const Fiber *lead = nullptr;
    for (uint32_t l = 0; l < lanes && !lead; ++l)
      if (fibers[base + l].state == FiberState::AtShuffle)
        lead = &fibers[base + l];
    if (!lead)
      return Status::ok();
    const std::string warp = "warp " + std::to_string(base / kWarpSize);
    auto lane = [&](uint32_t l) {
      return "lane " + std::to_string(l) + " (thread " +
             triple(fibers[base + l].ids + 3) + ")";
    };
    const int64_t site = lead->site, width = lead->width;
    if (width < 1 || width > int64_t(kWarpSize))
      return Status::error(where() + warp + ": gpu.shuffle #" +
                           std::to_string(site) + " with width " +
                           std::to_string(width) + " (1 to 32 lanes)");
    for (uint32_t l = 0; l < lanes; ++l) {
      const Fiber &f = fibers[base + l];
      if (f.state == FiberState::AtShuffle) {
        if (f.site != site || f.width != width)
          return Status::error(
              where() + warp + ": " + lane(l) + " waits at gpu.shuffle #" +
              std::to_string(f.site) + " of width " + std::to_string(f.width) +
              " while lanes of its warp wait at gpu.shuffle #" +
              std::to_string(site) + " of width " + std::to_string(width) +
              " (undefined in CUDA)");
        if (l >= width)
          return Status::error(
              where() + warp + ": " + lane(l) + " runs gpu.shuffle #" +
              std::to_string(site) + " of width " + std::to_string(width) +
              ", whose lanes are the first " + std::to_string(width));
      } else if (f.state == FiberState::AtBarrier && l < width) {
        return Status::error(where() + warp + ": " + lane(l) +
                             " waits at gpu.barrier #" +
                             std::to_string(f.site) +
                             " while lanes of its warp wait at gpu.shuffle #" +
                             std::to_string(site) + " (undefined in CUDA)");
      }
    }
    int64_t results[kWarpSize];
    for (uint32_t l = 0; l < lanes; ++l) {
      const Fiber &f = fibers[base + l];
      if (f.state != FiberState::AtShuffle)
        continue;
      const int64_t b = f.offset & 31;
      int64_t j = 0;
      bool valid = false;
      switch (f.mode) {
      case rt::kCudaShuffleUp:
        j = int64_t(l) - b;
        valid = j >= int64_t(kWarpSize) - width;
        break;
      case rt::kCudaShuffleDown:
        j = int64_t(l) + b;
        valid = j <= width - 1;
        break;
      case rt::kCudaShuffleIdx:
        j = b;
        valid = j <= width - 1;
        break;
      default: // xor
        j = int64_t(l) ^ b;
        valid = j <= width - 1;
        break;
      }
      if (!valid)
        j = l;
      if (uint64_t(j) >= lanes ||
          fibers[base + j].state != FiberState::AtShuffle)
        return Status::error(where() + warp + ": " + lane(l) + " reads lane " +
                             std::to_string(j) + " in gpu.shuffle #" +
                             std::to_string(site) + ", which " +
                             (uint64_t(j) >= lanes
                                  ? "the block does not have"
                                  : "has returned or is elsewhere") +
                             " (undefined in CUDA)");
      results[l] = int64_t(fibers[base + j].bits) | (int64_t(valid) << 32);
    }
    for (uint32_t l = 0; l < lanes; ++l) {
      Fiber &f = fibers[base + l];
      if (f.state != FiberState::AtShuffle)
        continue;
      f.result = results[l];
      f.state = FiberState::Runnable;
    }
    progressed = true;
    return Status::ok();
  }

  /// Completes the nvgpu.mma.sync of the warp at `base` when all its 32
  /// lanes wait at the same one (CudaArtifact.h, kCudaMma*: D = A·B + C, a
  /// 16x8 tile). The A and B elements are TF32: an FP32 operand's low 13
  /// mantissa bits are ignored, as the tensor cores ignore them in raw FP32
  /// registers; the products (exact in FP32) are added to C in K order, one
  /// rounding each (the hardware's order and internal precision are
  /// unspecified: it may differ in the last FP32 bits). Anything else — a
  /// partial warp, lanes elsewhere or returned, another site or shape — is
  /// undefined in CUDA and an error.
  template <typename Where>
  Status mmaWarp(uint64_t base, uint64_t n, const Where &where,
                 bool &progressed) {
    const uint32_t lanes = uint32_t(std::min<uint64_t>(kWarpSize, n - base));
    const Fiber *lead = nullptr;
    for (uint32_t l = 0; l < lanes && !lead; ++l)
      if (fibers[base + l].state == FiberState::AtMma)
        lead = &fibers[base + l];
    if (!lead)
      return Status::ok();
    const std::string warp = "warp " + std::to_string(base / kWarpSize);
    const std::string mma = "nvgpu.mma.sync #" + std::to_string(lead->site);
    if (lanes < kWarpSize)
      return Status::error(where() + warp + " has " + std::to_string(lanes) +
                           " lanes at " + mma +
                           ", which needs a whole warp of 32 (the block's "
                           "size is not a multiple of 32)");
    for (uint32_t l = 0; l < lanes; ++l) {
      const Fiber &f = fibers[base + l];
      if (f.state == FiberState::AtMma && f.site == lead->site &&
          f.mode == lead->mode)
        continue;
      std::string at =
          f.state == FiberState::Returned ? "has returned"
          : f.state == FiberState::AtMma
              ? "waits at nvgpu.mma.sync #" + std::to_string(f.site)
          : f.state == FiberState::AtShuffle
              ? "waits at gpu.shuffle #" + std::to_string(f.site)
              : "waits at gpu.barrier #" + std::to_string(f.site);
      return Status::error(where() + warp + ": lane " + std::to_string(l) +
                           " (thread " + triple(f.ids + 3) + ") " + at +
                           " while lanes of its warp wait at " + mma +
                           " (undefined in CUDA: every lane must run it)");
    }
    const int kK = lead->mode == rt::kCudaMmaM16N8K4Tf32 ? 4 : 8;
    float a[16][8], b[8][8], c[16][8];
    auto tf32 = [](float v) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      bits &= 0xffffe000u;
      std::memcpy(&v, &bits, 4);
      return v;
    };
    for (uint32_t l = 0; l < lanes; ++l) {
      const Fiber &f = fibers[base + l];
      const int g = int(l / 4), t = int(l % 4);
      a[g][t] = tf32(f.mmaA[0]);
      a[g + 8][t] = tf32(f.mmaA[1]);
      b[t][g] = tf32(f.mmaB[0]);
      if (kK == 8) {
        a[g][t + 4] = tf32(f.mmaA[2]);
        a[g + 8][t + 4] = tf32(f.mmaA[3]);
        b[t + 4][g] = tf32(f.mmaB[1]);
      }
      c[g][2 * t] = f.mmaC[0];
      c[g][2 * t + 1] = f.mmaC[1];
      c[g + 8][2 * t] = f.mmaC[2];
      c[g + 8][2 * t + 1] = f.mmaC[3];
    }
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < kK; ++k)
          c[i][j] += a[i][k] * b[k][j];
    for (uint32_t l = 0; l < lanes; ++l) {
      Fiber &f = fibers[base + l];
      const int g = int(l / 4), t = int(l % 4);
      f.mmaC[0] = c[g][2 * t];
      f.mmaC[1] = c[g][2 * t + 1];
      f.mmaC[2] = c[g + 8][2 * t];
      f.mmaC[3] = c[g + 8][2 * t + 1];
      f.state = FiberState::Runnable;
    }
    progressed = true;
    return Status::ok();
  }

  /// "run[7] (kernel 'k' at m.py:4:9): thread (0,0,0) of block (3,0,0)
  /// stores out of bounds of argument 2, buffers[5] (temp): element 1024 of
  /// 1024 (index [1024] of shape [1024])".
  static std::string describeOutOfBounds(const CudaArtifact &art,
                                         const char *plan, size_t index,
                                         const CudaStep &step,
                                         const int64_t *record,
                                         const int64_t *ids) {
    auto list = [](const int64_t *v, int64_t n, int64_t rank) {
      std::string text = "[";
      for (int64_t i = 0; i < n; ++i)
        text += (i ? ", " : "") + std::to_string(v[i]);
      return text + (rank > n ? ", ...]" : "]");
    };
    int64_t arg = record[2];
    std::string memory;
    if (arg >= 0 && uint64_t(arg) < step.args.size())
      memory = "argument " + std::to_string(arg) + ", " +
               describeCudaBuffer(art, step.args[arg]);
    else if (arg == -1)
      memory = "a memref.global of the kernel";
    else if (arg == -2)
      memory = "an allocation of the kernel";
    else if (arg <= -3)
      memory = "workgroup attribution " + std::to_string(-3 - arg) +
               " of the kernel";
    else
      memory = "argument " + std::to_string(arg) +
               " (not an argument of "
               "the launch)";
    int64_t rank = record[5];
    int64_t shown = std::min<int64_t>(std::max<int64_t>(rank, 0), 8);
    std::string where = " (index " + list(record + 6, shown, rank) +
                        " of shape " + list(record + 14, shown, rank) + ")";
    std::string text = describeCudaStep(art, plan, index) + ": thread " +
                       triple(ids + 3) + " of block " + triple(ids) + " ";
    // Kinds 2 and 3 (GpuKernelsToHost.cpp): a vector load, or an end of an
    // asynchronous copy, misaligned for its alignment, which record[4]
    // holds.
    if (record[1] == 2)
      text += "loads a vector misaligned for its alignment of " +
              std::to_string(record[4]) + " bytes from " + memory +
              ": at element " + std::to_string(record[3]) + where;
    else if (record[1] == 3)
      text += "copies asynchronously (cp.async) misaligned for its " +
              std::to_string(record[4]) + " bytes, at " + memory +
              ": element " + std::to_string(record[3]) + where;
    else
      text += std::string(record[1] ? "stores" : "loads") +
              " out of bounds of " + memory + ": element " +
              std::to_string(record[3]) + " of " + std::to_string(record[4]) +
              where;
    if (record[0] > 1)
      text += "; " + std::to_string(record[0]) +
              (record[1] >= 2 ? " misaligned or out-of-bounds accesses"
                              : " out-of-bounds accesses") +
              " in the launch";
    return text;
  }
};

thread_local CudaEmulator::Impl *CudaEmulator::Impl::active = nullptr;

CudaEmulator::~CudaEmulator() = default;

Status CudaEmulator::create(const std::string &artifactPath,
                            const std::string &weightsPath, bool strict,
                            const EmulationOptions &options,
                            std::unique_ptr<CudaEmulator> &out) {
  std::unique_ptr<CudaEmulator> m(new CudaEmulator());
  if (Status s = readCudaArtifact(artifactPath, m->art, options.planChecks); !s)
    return s;
  SafetensorsFile weights;
  if (Status s = readSafetensors(weightsPath, weights); !s)
    return s;
  const CudaArtifact &art = m->art;
  if (Status s = checkCudaWeights(art, weights, weightsPath, strict); !s)
    return s;
  for (const std::vector<CudaStep> *steps : {&art.init, &art.run})
    for (size_t i = 0; i < steps->size(); ++i) {
      const CudaStep &s = (*steps)[i];
      if (uint64_t(s.grid[0]) * s.grid[1] * s.grid[2] > kMaxBlocks)
        return Status::error(
            artifactPath + ": " +
            describeCudaStep(art, steps == &art.init ? "init" : "run", i) +
            " launches more than 2^24 blocks, more than the emulator runs");
    }

  m->impl = std::make_unique<Impl>();
  Impl &I = *m->impl;
  I.options = options;
  I.rng.seed(options.seed);
  if (!art.kernels.empty()) {
    const CudaImage *image = nullptr;
    std::string have;
    for (const CudaImage &i : art.images) {
      if (i.format == "host-so" && i.chip == hostImageChip())
        image = &i;
      have += (have.empty() ? "" : ", ") + i.format + " " + i.chip;
    }
    if (!image)
      return Status::error(
          artifactPath + ": no kernel image for the host (" + hostImageChip() +
          ") to emulate; the artifact "
          "holds " +
          have + ": recompile it with --cuda-host-image on a " +
          std::string(hostImageChip() + 5) + " machine");
    if (image->bytes.size() < 4 || std::memcmp(image->bytes.data(),
                                               "\x7f"
                                               "ELF",
                                               4) != 0)
      return Status::error(artifactPath + ": its host image is not an ELF "
                                          "shared object");
    std::string path;
    if (Status s = writePrivateFile(image->bytes, path); !s)
      return s;
    // A damaged image would crash the loader (SIGBUS, SIGSEGV), not fail.
    if (Status s = checkSharedObject(path, artifactPath +
                                               ": its host image is damaged");
        !s) {
      ::unlink(path.c_str());
      return s;
    }
    I.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const char *why = I.handle ? nullptr : dlerror();
    ::unlink(path.c_str()); // mapped now, or failed
    if (!I.handle)
      return Status::error(artifactPath + ": cannot load its host image: " +
                           (why ? why : "unknown reason"));
    const auto *abi =
        static_cast<const int32_t *>(dlsym(I.handle, kCudaHostAbiSymbol));
    if (!abi || *abi != kCudaHostAbiVersion)
      return Status::error(artifactPath + ": its host image has " +
                           (abi ? "ABI version " + std::to_string(*abi)
                                : std::string("no ") + kCudaHostAbiSymbol) +
                           "; this emulator runs version " +
                           std::to_string(kCudaHostAbiVersion) +
                           " (bounds-checked kernels with barriers, shuffles, "
                           "TF32 mma, asynchronous copies and workgroup "
                           "memory): recompile it with this gpuopt");
    auto *hooks =
        static_cast<CudaHostHooks *>(dlsym(I.handle, kCudaHostHooksSymbol));
    if (!hooks)
      return Status::error(artifactPath + ": its host image has no " +
                           kCudaHostHooksSymbol);
    *hooks = CudaHostHooks{&I,
                           &Impl::barrierHook,
                           &Impl::shuffleHook,
                           &Impl::mmaHook,
                           &Impl::asyncCopyHook,
                           &Impl::asyncCommitHook,
                           &Impl::asyncWaitHook};
    uint64_t maxWorkgroup = 0;
    for (const CudaKernel &k : art.kernels) {
      std::string symbol = kCudaHostKernelPrefix + k.name;
      auto fn = reinterpret_cast<HostKernel>(dlsym(I.handle, symbol.c_str()));
      if (!fn)
        return Status::error(artifactPath + ": the host image has no kernel '" +
                             k.name + "' (no symbol " + symbol + ")");
      std::string infoSymbol = kCudaHostInfoPrefix + k.name;
      const auto *info =
          static_cast<const int64_t *>(dlsym(I.handle, infoSymbol.c_str()));
      if (!info)
        return Status::error(artifactPath +
                             ": the host image has no info for kernel '" +
                             k.name + "' (no symbol " + infoSymbol + ")");
      if (info[0] < 0 || uint64_t(info[0]) > kCudaHostMaxWorkgroupBytes ||
          (info[1] & ~kCudaHostKernelSyncs) != 0)
        return Status::error(artifactPath +
                             ": the host image's info for "
                             "kernel '" +
                             k.name + "' is damaged");
      I.kernels.push_back(fn);
      I.workgroupBytes.push_back(uint64_t(info[0]));
      I.syncs.push_back(info[1] & kCudaHostKernelSyncs);
      maxWorkgroup = std::max(maxWorkgroup, uint64_t(info[0]));
    }
    if (maxWorkgroup) {
      I.workgroup = static_cast<uint8_t *>(std::aligned_alloc(
          kCudaArenaAlignment, (maxWorkgroup + kCudaArenaAlignment - 1) /
                                   kCudaArenaAlignment * kCudaArenaAlignment));
      if (!I.workgroup)
        return Status::error(artifactPath +
                             ": cannot allocate workgroup memory");
    }
    long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0)
      I.page = uint64_t(page);
  }
  I.arenaSize = (std::max<uint64_t>(art.arenaBytes, kCudaArenaAlignment) +
                 kCudaArenaAlignment - 1) /
                kCudaArenaAlignment * kCudaArenaAlignment;
  I.arena = static_cast<uint8_t *>(
      std::aligned_alloc(kCudaArenaAlignment, I.arenaSize));
  if (!I.arena)
    return Status::error(artifactPath + ": cannot allocate its arena of " +
                         std::to_string(I.arenaSize) + " bytes on the host");
  // Everything NaN; then the parameters and what the init steps write, the
  // only bytes that persist across forwards (with the inputs).
  fillNaN(I.arena, 0, I.arenaSize);
  std::vector<std::pair<uint64_t, uint64_t>> persistent;
  for (const CudaBuffer &b : art.buffers) {
    if (b.kind == "param")
      std::memcpy(I.arena + b.offset, weights.tensors[b.name].data.data(),
                  b.bytes);
    if (b.kind == "param" || b.kind == "constant" || b.kind == "input")
      persistent.emplace_back(b.offset, b.offset + b.bytes);
  }
  std::sort(persistent.begin(), persistent.end());
  uint64_t at = 0;
  for (auto [begin, end] : persistent) {
    if (begin > at)
      I.volatileRanges.emplace_back(at, begin);
    at = std::max(at, end);
  }
  if (at < I.arenaSize)
    I.volatileRanges.emplace_back(at, I.arenaSize);
  for (size_t i = 0; i < art.init.size(); ++i)
    if (Status s = I.run(art, "init", i); !s)
      return Status::error(artifactPath + ": " + s.message());
  out = std::move(m);
  return Status::ok();
}

Status CudaEmulator::setInputs(const std::vector<const float *> &inputs) {
  if (inputs.size() != art.inputs.size())
    return Status::error("expected " + std::to_string(art.inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CudaBuffer &b = art.buffers[art.inputs[i]];
    std::memcpy(impl->arena + b.offset, inputs[i], b.bytes);
  }
  return Status::ok();
}

Status CudaEmulator::forward() {
  for (auto [begin, end] : impl->volatileRanges)
    fillNaN(impl->arena, begin, end);
  for (size_t i = 0; i < art.run.size(); ++i)
    if (Status s = impl->run(art, "run", i); !s)
      return s;
  return Status::ok();
}

Status CudaEmulator::time(int warmup, int runs, std::vector<double> &ms) {
  for (int i = 0; i < warmup; ++i)
    if (Status s = forward(); !s)
      return s;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = forward(); !s)
      return s;
    std::chrono::duration<double, std::milli> t =
        std::chrono::steady_clock::now() - start;
    ms.push_back(t.count());
  }
  return Status::ok();
}

Status CudaEmulator::profileSteps(int passes, std::vector<double> &ms) {
  if (passes < 1)
    return Status::error("profiling needs at least one pass");
  std::vector<std::vector<double>> perStep(art.run.size());
  for (int pass = 0; pass < passes; ++pass) {
    for (auto [begin, end] : impl->volatileRanges)
      fillNaN(impl->arena, begin, end);
    for (size_t i = 0; i < art.run.size(); ++i) {
      auto start = std::chrono::steady_clock::now();
      if (Status s = impl->run(art, "run", i); !s)
        return s;
      std::chrono::duration<double, std::milli> t =
          std::chrono::steady_clock::now() - start;
      perStep[i].push_back(t.count());
    }
  }
  for (std::vector<double> &times : perStep) {
    std::sort(times.begin(), times.end());
    ms.push_back(times[times.size() / 2]);
  }
  return Status::ok();
}

Status CudaEmulator::getOutputs(const std::vector<float *> &outputs) {
  if (outputs.size() != art.outputs.size())
    return Status::error("expected " + std::to_string(art.outputs.size()) +
                         " outputs, got " + std::to_string(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const CudaBuffer &b = art.buffers[art.outputs[i]];
    std::memcpy(outputs[i], impl->arena + b.offset, b.bytes);
  }
  return Status::ok();
}
