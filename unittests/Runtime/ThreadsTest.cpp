//===- ThreadsTest.cpp - Runtime helpers used from several threads --------===//
//
// Part of the gpuopt project.
//
// parallelFor (runtime/cpu/ThreadPool.cpp) with a body that throws on the
// workers and on the caller: the exception must reach the caller of
// parallelFor (not std::terminate), and the pool must run the next job in
// full. BadAllocScope (runtime/include/gpuopt/Runtime/Allocator.h) opened on
// two threads and closed in the order they were opened: the new-handler must
// stay unset while either is open and be the original one after both. Exit
// status 1 and one line per failing check otherwise. Run by lit
// (test/Runtime/threads.test).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ThreadPool.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace gpuopt::runtime;

namespace {

int fails = 0;

void check(bool ok, const char *what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++fails;
  }
}

/// Every task throws when `throwAt` < 0, else only task `throwAt`.
void throwingJob(int64_t numTasks, int64_t throwAt, const char *what) {
  bool caught = false;
  try {
    parallelFor(numTasks, [&](int64_t t) {
      if (throwAt < 0 || t == throwAt)
        throw std::runtime_error("task failed");
    });
  } catch (const std::runtime_error &e) {
    caught = std::string(e.what()) == "task failed";
  }
  check(caught, what);
}

/// The pool still runs every task of a job exactly once.
void fullJob(const char *what) {
  constexpr int64_t n = 1000;
  std::vector<std::atomic<int>> ran(n);
  parallelFor(n, [&](int64_t t) { ran[t].fetch_add(1); });
  bool once = true;
  for (auto &r : ran)
    once = once && r.load() == 1;
  check(once, what);
}

void testThreadPool() {
  setNumThreads(8);
  // Every task throws: the workers and the caller all throw.
  throwingJob(64, -1, "parallelFor: exception thrown by every task");
  fullJob("parallelFor: job after a throwing job");
  // Only the last task throws: most likely on a worker.
  throwingJob(4096, 4095, "parallelFor: exception thrown by one task");
  fullJob("parallelFor: job after a job with one throwing task");
  setNumThreads(0);
}

void marker() { std::abort(); }

/// Steps run in a fixed order across two threads.
struct Sequence {
  std::mutex mutex;
  std::condition_variable changed;
  int step = 0;
  void waitFor(int s) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return step == s; });
  }
  void advance() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++step;
    }
    changed.notify_all();
  }
};

void testBadAllocScope() {
  std::set_new_handler(marker);
  Sequence seq;
  std::new_handler whileSecondOpen = marker;
  // Thread a opens, b opens, a closes, b checks, b closes.
  std::thread a([&] {
    {
      BadAllocScope scope;
      seq.advance(); // 1
      seq.waitFor(2);
    }
    seq.advance(); // 3
  });
  std::thread b([&] {
    seq.waitFor(1);
    {
      BadAllocScope scope;
      seq.advance(); // 2
      seq.waitFor(3);
      whileSecondOpen = std::get_new_handler();
    }
  });
  a.join();
  b.join();
  check(whileSecondOpen == nullptr,
        "BadAllocScope: new-handler unset while a scope is open");
  check(std::get_new_handler() == marker,
        "BadAllocScope: new-handler restored after the last scope");
  std::set_new_handler(nullptr);
}

} // namespace

int main() {
  testThreadPool();
  testBadAllocScope();
  std::printf("fails=%d\n", fails);
  return fails != 0;
}
