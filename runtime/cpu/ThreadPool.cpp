//===- ThreadPool.cpp - Persistent worker threads for CPU kernels ---------===//

#include "gpuopt/Runtime/ThreadPool.h"
#include "gpuopt/Runtime/ModelAbi.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuopt::runtime {
namespace {

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int hardwareThreads() {
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

/// More threads than this only adds spinning and tiny tasks.
int maxThreads() { return std::max(64, 4 * hardwareThreads()); }

int defaultThreads() {
  if (const char *env = std::getenv("GPUOPT_NUM_THREADS")) {
    char *end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0) {
      if (n <= maxThreads())
        return static_cast<int>(n);
      // Called once per process (the pool caches the answer), so this warns
      // once.
      std::fprintf(stderr,
                   "gpuopt: warning: GPUOPT_NUM_THREADS=%s exceeds the limit "
                   "of %d threads (4 per hardware thread, at least 64); "
                   "using %d\n",
                   env, maxThreads(), maxThreads());
      return maxThreads();
    }
    std::fprintf(stderr,
                 "gpuopt: ignoring GPUOPT_NUM_THREADS='%s' (not a positive "
                 "integer); using %d threads\n",
                 env, hardwareThreads());
  }
  return hardwareThreads();
}

class Pool {
public:
  ~Pool() { stop(); }

  int numThreads() {
    std::lock_guard<std::mutex> lock(configMutex);
    if (wanted == 0)
      wanted = defaultThreads();
    return wanted;
  }

  void setThreads(int n) {
    std::lock_guard<std::mutex> lock(configMutex);
    wanted = n > 0 ? std::min(n, maxThreads()) : defaultThreads();
  }

  void run(int64_t numTasks, const std::function<void(int64_t)> &body) {
    int threads = numThreads();
    if (threads > numTasks)
      threads = static_cast<int>(numTasks);
    if (threads <= 1 || insideJob) {
      for (int64_t t = 0; t < numTasks; ++t)
        body(t);
      return;
    }
    std::lock_guard<std::mutex> jobLock(jobMutex);
    ensureWorkers(threads - 1);
    {
      std::lock_guard<std::mutex> lock(mutex);
      job = &body;
      jobTasks = numTasks;
      jobSlots = threads - 1;
      next.store(0, std::memory_order_relaxed);
      open = true;
      active = 0;
      generation.fetch_add(1, std::memory_order_release);
    }
    wake.notify_all();
    // Tasks are handed out dynamically: a worker that is slow to wake (the
    // machine is shared) costs nothing, the caller just takes more tasks.
    work(body);
    std::unique_lock<std::mutex> lock(mutex);
    open = false; // Workers waking from now on stay out of this job.
    // Even when a task threw: workers still hold `body`, which dies with the
    // caller's frame.
    done.wait(lock, [&] { return active == 0; });
    job = nullptr;
    if (failure) {
      std::exception_ptr first = std::move(failure);
      failure = nullptr;
      std::rethrow_exception(first);
    }
  }

private:
  static thread_local bool insideJob;

  /// Runs tasks of the current job until none is left. A task that throws
  /// (on a worker the exception would reach std::terminate) ends the job:
  /// the first exception is kept for run() to rethrow on the caller once all
  /// threads are out, and no further task is handed out.
  void work(const std::function<void(int64_t)> &body) {
    insideJob = true;
    try {
      for (int64_t t = next.fetch_add(1, std::memory_order_relaxed);
           t < jobTasks; t = next.fetch_add(1, std::memory_order_relaxed))
        body(t);
    } catch (...) {
      next.store(jobTasks, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure)
        failure = std::current_exception();
    }
    insideJob = false;
  }

  void ensureWorkers(int n) {
    while (static_cast<int>(workers.size()) < n)
      workers.emplace_back([this] { loop(); });
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      // Spin briefly before sleeping: kernels come in quick succession.
      for (int i = 0;
           i < 2000 && generation.load(std::memory_order_acquire) == seen &&
           !quit.load(std::memory_order_relaxed);
           ++i)
        cpuRelax();
      const std::function<void(int64_t)> *body;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] {
          return quit.load(std::memory_order_relaxed) ||
                 generation.load(std::memory_order_relaxed) != seen;
        });
        if (quit.load(std::memory_order_relaxed))
          return;
        seen = generation.load(std::memory_order_relaxed);
        if (!open || jobSlots == 0)
          continue; // Job finished already, or enough threads on it.
        --jobSlots;
        ++active;
        body = job;
      }
      work(*body);
      std::lock_guard<std::mutex> lock(mutex);
      if (--active == 0)
        done.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      quit.store(true);
    }
    wake.notify_all();
    for (std::thread &w : workers)
      w.join();
  }

  std::mutex configMutex;
  int wanted = 0;
  std::mutex jobMutex; // One job at a time.
  std::mutex mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *job = nullptr;
  int64_t jobTasks = 0;
  int jobSlots = 0;  // Workers that may still join the job.
  int active = 0;    // Workers in the job.
  bool open = false; // The job accepts workers.
  /// The first exception a task of the job threw.
  std::exception_ptr failure;
  std::atomic<int64_t> next{0};
  std::atomic<uint64_t> generation{0};
  std::atomic<bool> quit{false};
  std::vector<std::thread> workers;
};

thread_local bool Pool::insideJob = false;

Pool &pool() {
  static Pool instance;
  return instance;
}

} // namespace

int getNumThreads() { return pool().numThreads(); }
void setNumThreads(int numThreads) { pool().setThreads(numThreads); }
void parallelFor(int64_t numTasks, const std::function<void(int64_t)> &body) {
  pool().run(numTasks, body);
}

} // namespace gpuopt::runtime

// Weak: libgpuopt_runtime.so, which links these kernels for the CUDA
// emulator's Library steps, defines the ModelAbi.h names itself (for any
// artifact); a model library has only these.
extern "C" __attribute__((weak)) void gpuopt_set_num_threads(int numThreads) {
  gpuopt::runtime::setNumThreads(numThreads);
}
extern "C" __attribute__((weak)) int gpuopt_get_num_threads(void) {
  return gpuopt::runtime::getNumThreads();
}
