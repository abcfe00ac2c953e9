//===- ThreadPool.h - Persistent worker threads for CPU kernels -*- C++ -*-===//
//
// A tiny fork-join pool shared by all CPU kernels of a process: the calling
// thread takes part, workers wait on a condition variable between jobs. The
// thread count is gpuopt_set_num_threads(), else GPUOPT_NUM_THREADS, else the
// number of cores.
//
//===----------------------------------------------------------------------===//
#ifndef GPUOPT_RUNTIME_THREADPOOL_H
#define GPUOPT_RUNTIME_THREADPOOL_H

#include <cstdint>
#include <functional>

namespace gpuopt::runtime {

/// Number of threads parallelFor uses (>= 1).
int getNumThreads();
/// Sets the number of threads (values < 1 mean "all cores").
void setNumThreads(int numThreads);

/// Runs body(task) for task in [0, numTasks) on the pool's threads; tasks
/// are handed out dynamically (the caller takes part, a late worker just
/// gets fewer). Returns when all tasks are done. Nested calls run serially
/// on the calling thread. Thread counts are capped at max(64, 4 x cores).
void parallelFor(int64_t numTasks, const std::function<void(int64_t)> &body);

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_THREADPOOL_H
