//===- ThreadPool.cpp - Persistent worker threads for CPU kernels ---------===//

#include "gpuopt/Runtime/ThreadPool.h"
#include "gpuopt/Runtime/ModelAbi.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuopt::runtime {
namespace {

int defaultThreads() {
  if (const char *env = std::getenv("GPUOPT_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
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
    wanted = n > 0 ? n : defaultThreads();
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
      jobThreads = threads;
      pending = threads - 1;
      ++generation;
    }
    wake.notify_all();
    work(0, threads, numTasks, body);
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return pending == 0; });
    job = nullptr;
  }

private:
  static thread_local bool insideJob;

  static void work(int self, int threads, int64_t numTasks,
                   const std::function<void(int64_t)> &body) {
    insideJob = true;
    for (int64_t t = self; t < numTasks; t += threads)
      body(t);
    insideJob = false;
  }

  void ensureWorkers(int n) {
    while (static_cast<int>(workers.size()) < n) {
      int index = static_cast<int>(workers.size()) + 1;
      workers.emplace_back([this, index] { loop(index); });
    }
  }

  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t)> *body;
      int threads;
      int64_t tasks;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return quit || generation != seen; });
        if (quit)
          return;
        seen = generation;
        body = job;
        threads = jobThreads;
        tasks = jobTasks;
      }
      if (index < threads)
        work(index, threads, tasks, *body);
      else
        continue; // Not part of this job (fewer tasks than workers).
      std::lock_guard<std::mutex> lock(mutex);
      if (--pending == 0)
        done.notify_one();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      quit = true;
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
  int jobThreads = 0;
  int pending = 0;
  uint64_t generation = 0;
  bool quit = false;
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

extern "C" void gpuopt_set_num_threads(int numThreads) {
  gpuopt::runtime::setNumThreads(numThreads);
}
extern "C" int gpuopt_get_num_threads(void) {
  return gpuopt::runtime::getNumThreads();
}
