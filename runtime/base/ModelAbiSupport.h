//===- ModelAbiSupport.h - shared pieces of the two C ABI implementations -===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// ModelAbi.h is implemented twice: inside every CPU model library
// (runtime/cpu/ModelAbi.cpp, the library is its own artifact) and by
// libgpuopt_runtime.so (runtime/api/ModelApiExports.cpp, any artifact). What
// both do the same way is defined here once: error messages into the
// caller's buffer, the shape queries, and the checks of the options struct.
// Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_BASE_MODELABISUPPORT_H
#define GPUOPT_RUNTIME_BASE_MODELABISUPPORT_H

#include "gpuopt/Runtime/ModelAbi.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {
namespace abi {

/// Writes `message` into the caller's buffer (when there is one).
inline void setError(char *err, size_t errlen, const std::string &message) {
  if (err && errlen > 0)
    std::snprintf(err, errlen, "%s", message.c_str());
}

/// gpuopt_model_input_shape / _output_shape over `shapes`.
inline int copyShape(const std::vector<std::vector<int64_t>> &shapes, int index,
                     int64_t *shape) {
  if (index < 0 || static_cast<size_t>(index) >= shapes.size())
    return -1;
  const std::vector<int64_t> &s = shapes[index];
  if (shape)
    std::copy(s.begin(), s.end(), shape);
  return static_cast<int>(s.size());
}

/// gpuopt_model_options_init.
inline void initOptions(gpuopt_model_options *options) {
  if (!options)
    return;
  *options = gpuopt_model_options();
  options->struct_size = sizeof(gpuopt_model_options);
}

/// The checks of gpuopt_model_create's options every implementation makes;
/// `who` ("this library", "this runtime") is named in the size message.
/// False with the message in `err` when they fail.
inline bool checkOptions(const gpuopt_model_options *options, const char *who,
                         char *err, size_t errlen) {
  if (!options) {
    setError(err, errlen, "gpuopt_model_create: options is NULL");
    return false;
  }
  // Every field of this version is read: an older (smaller) struct is not
  // one of this ABI; a newer caller's added fields are not known here.
  if (options->struct_size < sizeof(gpuopt_model_options)) {
    setError(err, errlen,
             "gpuopt_model_create: options.struct_size is " +
                 std::to_string(options->struct_size) + ", " + who +
                 " needs at least " +
                 std::to_string(sizeof(gpuopt_model_options)) +
                 " (fill it with gpuopt_model_options_init)");
    return false;
  }
  return true;
}

} // namespace abi
} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_BASE_MODELABISUPPORT_H
