//===- Safetensors.h - validating safetensors reader ------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Reads https://github.com/huggingface/safetensors files: an 8-byte
// little-endian header length N, N bytes of JSON
// `{"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
//   "__metadata__": {"k": "v"}}`, then the byte buffer. Every field, size and
// offset is validated before any tensor byte is touched; a hostile or
// truncated file yields an error Status, never an out-of-bounds read.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_SAFETENSORS_H
#define GPUOPT_RUNTIME_SAFETENSORS_H

#include "gpuopt/Runtime/Tensor.h"

#include <map>
#include <memory>
#include <string>

namespace gpuopt {
namespace runtime {

/// Limits applied while reading; exceeding one is an error whose message
/// names the limit (gpuopt-run: --max-header-bytes, --max-tensors,
/// --max-rank).
struct SafetensorsLimits {
  // The format allows 100 MiB; parsing costs ~100 bytes of memory per JSON
  // value, so gpuopt stops at 8 MiB (tens of thousands of tensors).
  uint64_t maxHeaderBytes = 8ull << 20;
  // Far above any segmentation network's state_dict, and low enough that a
  // header of minimal entries within maxHeaderBytes can reach it.
  uint64_t maxTensors = 1u << 16;
  uint64_t maxRank = 8;
};

/// The tensors of one file, by name, plus its `__metadata__`.
struct SafetensorsFile {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, std::string> metadata;
};

/// Parses a whole file image. `what` names the source in messages
/// (typically the path). Without `owner` the tensors copy their bytes; with
/// it, they view `bytes` (where aligned) and share ownership of `owner`, which
/// must keep `bytes` valid.
Status parseSafetensors(const uint8_t *bytes, size_t size,
                        const std::string &what, SafetensorsFile &out,
                        const SafetensorsLimits &limits = {},
                        const std::shared_ptr<const void> &owner = nullptr);

/// Reads and parses `path`, a regular file, which is mapped rather than read:
/// the tensors view the mapping and keep it alive, so a checkpoint costs
/// memory only for the pages a backend reads (file pages the kernel can
/// drop). A file truncated by another process while mapped ends the reading
/// process with SIGBUS; gpuopt does not guard against concurrent writers.
Status readSafetensors(const std::string &path, SafetensorsFile &out,
                       const SafetensorsLimits &limits = {});

/// Whether `name` is training bookkeeping a state_dict carries and no
/// inference graph reads (BatchNorm's `num_batches_tracked` counter): such a
/// tensor never counts as unused, so --strict-weights accepts real
/// state_dicts.
bool isTrainingCounter(const std::string &name);

/// Writes `tensors` (sorted by name, dense, no metadata) to `path`.
Status writeSafetensors(const std::string &path,
                        const std::map<std::string, HostTensor> &tensors);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_SAFETENSORS_H
