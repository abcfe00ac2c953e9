//===- DeviceModel.h - devices the cost model predicts for ------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A device model is an entry of an editable JSON file (data/devices.json):
// peak FLOP/s by precision, memory bandwidth, the fractions of those peaks
// that library kernels attain, and the cost of one kernel launch in compiled
// code and in PyTorch eager mode. docs/CostModel.md documents the fields.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_DEVICEMODEL_H
#define GPUOPT_ANALYSIS_DEVICEMODEL_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace gpuopt {

/// One device of the device file.
struct DeviceModel {
  /// The key of the entry (`rtx3080`) and its human-readable name.
  std::string id;
  std::string name;
  /// `gpu` or `cpu`.
  std::string kind;
  /// Datasheet (or calibrated) peak FLOP/s by precision: `fp64`, `fp32`,
  /// `tf32`, `fp16`, `bf16`, ...
  llvm::StringMap<double> peakFlops;
  /// Peak memory bandwidth in bytes/s.
  double bandwidth = 0;
  /// Fraction of the peak FLOP/s a large, well-shaped GEMM attains.
  double computeEfficiency = 1;
  /// Fraction of the peak bandwidth a streaming kernel attains.
  double memoryEfficiency = 1;
  /// Parallel units a GEMM's tiles are spread over (SMs, cores) and the tile
  /// shape (M x N) of the GEMM library; 0 disables tile and wave quantization.
  int64_t units = 0;
  int64_t tileM = 0;
  int64_t tileN = 0;
  /// Seconds per kernel launch in gpuopt's compiled code.
  double launchSeconds = 0;
  /// Seconds per kernel in PyTorch eager mode: host-side dispatch + launch.
  double eagerLaunchSeconds = 0;
  /// Fraction of the peak FLOP/s of a precision that gpuopt's generated
  /// convolution/linear kernels (workgroup tiles) attain, by precision; a
  /// precision without an entry takes computeEfficiency.
  llvm::StringMap<double> generatedComputeEfficiency;
  /// Host seconds per cuDNN/cuBLASLt call on top of its kernel's launch
  /// (descriptor handling, the library's own dispatch).
  double libraryCallSeconds = 0;

  /// The peak FLOP/s for `precision`, or 0 when the device file has none.
  double getPeakFlops(llvm::StringRef precision) const {
    return peakFlops.lookup(precision);
  }
  /// The fraction of the peak of `precision` generated GEMM kernels attain.
  double getGeneratedComputeEfficiency(llvm::StringRef precision) const {
    auto it = generatedComputeEfficiency.find(precision);
    return it == generatedComputeEfficiency.end() ? computeEfficiency
                                                  : it->second;
  }
};

/// Reads entry `id` of the device file at `path`. A missing file, malformed
/// JSON (with its line and column), an unknown id (listing the known ones)
/// and a missing or out-of-range field are errors naming the file.
llvm::Expected<DeviceModel> loadDeviceModel(llvm::StringRef path,
                                            llvm::StringRef id);

/// The device file used when none is given: the source tree's
/// data/devices.json, baked in at configure time.
llvm::StringRef getDefaultDeviceFile();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_ANALYSIS_DEVICEMODEL_H
