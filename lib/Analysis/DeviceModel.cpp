//===- DeviceModel.cpp - the device file ----------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Reads one entry of the device file (data/devices.json):
//
//   {"devices": {"rtx3080": {"name": "...", "kind": "gpu",
//      "peak_flops": {"fp32": 29.77e12, ...}, "bandwidth": 760e9,
//      "compute_efficiency": 0.7, "memory_efficiency": 0.85,
//      "units": 68, "gemm_tile": [128, 128],
//      "launch_s": 2e-6, "eager_launch_s": 10e-6, ...}, ...}}
//
// Keys the model does not use ("source", "calibrated", ...) are allowed.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/DeviceModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

#ifndef GPUOPT_DEFAULT_DEVICE_FILE
#error "GPUOPT_DEFAULT_DEVICE_FILE must name the default device file"
#endif

using namespace llvm;
using namespace mlir::gpuopt;

StringRef mlir::gpuopt::getDefaultDeviceFile() {
  return GPUOPT_DEFAULT_DEVICE_FILE;
}

namespace {

/// Collects the first error of an entry, prefixed with the file and device.
class EntryReader {
public:
  EntryReader(StringRef path, StringRef id, const json::Object &entry)
      : path(path), id(id), entry(entry) {}

  /// A number > 0 (or ≥ 0 with `allowZero`), at most `max`.
  double number(StringRef key, bool required, double fallback,
                bool allowZero = false, double max = 0) {
    const json::Value *value = entry.get(key);
    if (!value) {
      if (required)
        fail(formatv("missing '{0}'", key));
      return fallback;
    }
    std::optional<double> n = value->getAsNumber();
    if (!n || !std::isfinite(*n) || !(*n > 0 || (allowZero && *n == 0)) ||
        (max > 0 && *n > max)) {
      fail(formatv("'{0}' must be a number {1}{2}", key,
                   allowZero ? ">= 0" : "> 0",
                   max > 0 ? formatv(" and <= {0}", max).str() : ""));
      return fallback;
    }
    return *n;
  }

  std::string string(StringRef key, StringRef fallback) {
    const json::Value *value = entry.get(key);
    if (!value)
      return fallback.str();
    if (std::optional<StringRef> s = value->getAsString())
      return s->str();
    fail(formatv("'{0}' must be a string", key));
    return fallback.str();
  }

  void fail(const Twine &message) {
    if (!error)
      error = createStringError(inconvertibleErrorCode(),
                                formatv("device file '{0}': device '{1}': {2}",
                                        path, id, message.str()));
  }

  const json::Object &getEntry() const { return entry; }
  Error takeError() { return error ? std::move(*error) : Error::success(); }

private:
  StringRef path;
  StringRef id;
  const json::Object &entry;
  std::optional<Error> error;
};

/// Largest device file read (the shipped one is a few KB).
constexpr uint64_t kMaxDeviceFileBytes = 16 << 20;

Error fileError(StringRef path, const Twine &message) {
  return createStringError(
      inconvertibleErrorCode(),
      formatv("device file '{0}': {1}", path, message.str()));
}

} // namespace

Expected<DeviceModel> mlir::gpuopt::loadDeviceModel(StringRef path,
                                                    StringRef id) {
  // A regular file of bounded size: /dev/zero or a FIFO would be read
  // without end.
  sys::fs::file_status status;
  if (std::error_code ec = sys::fs::status(path, status))
    return fileError(path, "cannot read it: " + ec.message());
  if (!sys::fs::is_regular_file(status))
    return fileError(path, "cannot read it: not a regular file");
  if (status.getSize() > kMaxDeviceFileBytes)
    return fileError(path, formatv("cannot read it: {0} bytes, more than the "
                                   "{1} a device file may have",
                                   status.getSize(), kMaxDeviceFileBytes));
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fileError(path, "cannot read it: " + buffer.getError().message());
  Expected<json::Value> root = json::parse((*buffer)->getBuffer());
  if (!root) {
    // json::parse reports "[line:column, byte=N]: message".
    std::string message = toString(root.takeError());
    return fileError(path, "malformed JSON at " + message);
  }
  const json::Object *top = root->getAsObject();
  const json::Object *devices = top ? top->getObject("devices") : nullptr;
  if (!devices)
    return fileError(path, "expected an object with a \"devices\" object");
  const json::Object *entry = devices->getObject(id);
  if (!entry) {
    SmallVector<std::string> known;
    for (const auto &kv : *devices)
      known.push_back(kv.first.str());
    llvm::sort(known);
    return fileError(path, formatv("unknown device '{0}'; known devices: {1}",
                                   id, llvm::join(known, ", ")));
  }

  EntryReader reader(path, id, *entry);
  DeviceModel device;
  device.id = id.str();
  device.name = reader.string("name", id);
  device.kind = reader.string("kind", "gpu");
  if (device.kind != "gpu" && device.kind != "cpu")
    reader.fail("'kind' must be \"gpu\" or \"cpu\"");
  const json::Object *peaks = entry->getObject("peak_flops");
  if (!peaks || peaks->empty())
    reader.fail("missing 'peak_flops' (an object of FLOP/s by precision, "
                "e.g. {\"fp32\": 29.77e12})");
  else
    for (const auto &kv : *peaks) {
      std::optional<double> n = kv.second.getAsNumber();
      if (!n || !std::isfinite(*n) || !(*n > 0))
        reader.fail(
            formatv("'peak_flops.{0}' must be a number > 0", kv.first.str()));
      else
        device.peakFlops[kv.first.str()] = *n;
    }
  device.bandwidth = reader.number("bandwidth", /*required=*/true, 1);
  device.computeEfficiency =
      reader.number("compute_efficiency", /*required=*/false, 1,
                    /*allowZero=*/false, /*max=*/1);
  device.memoryEfficiency =
      reader.number("memory_efficiency", /*required=*/false, 1,
                    /*allowZero=*/false, /*max=*/1);
  device.launchSeconds = reader.number("launch_s", /*required=*/true, 0,
                                       /*allowZero=*/true);
  device.eagerLaunchSeconds =
      reader.number("eager_launch_s", /*required=*/true, 0, /*allowZero=*/true);
  if (const json::Value *generated =
          entry->get("generated_compute_efficiency")) {
    const json::Object *byPrecision = generated->getAsObject();
    if (!byPrecision)
      reader.fail("'generated_compute_efficiency' must be an object of "
                  "fractions by precision, e.g. {\"fp32\": 0.4}");
    else
      for (const auto &kv : *byPrecision) {
        std::optional<double> n = kv.second.getAsNumber();
        if (!n || !std::isfinite(*n) || !(*n > 0) || *n > 1)
          reader.fail(formatv("'generated_compute_efficiency.{0}' must be a "
                              "number > 0 and <= 1",
                              kv.first.str()));
        else
          device.generatedComputeEfficiency[kv.first.str()] = *n;
      }
  }
  device.libraryCallSeconds = reader.number(
      "library_call_s", /*required=*/false, 0, /*allowZero=*/true);
  device.units = static_cast<int64_t>(
      reader.number("units", /*required=*/false, 0, /*allowZero=*/true));
  if (const json::Value *tile = entry->get("gemm_tile")) {
    const json::Array *dims = tile->getAsArray();
    std::optional<int64_t> m, n;
    if (dims && dims->size() == 2) {
      m = (*dims)[0].getAsInteger();
      n = (*dims)[1].getAsInteger();
    }
    if (!m || !n || *m <= 0 || *n <= 0)
      reader.fail("'gemm_tile' must be [M, N] with positive integers");
    else {
      device.tileM = *m;
      device.tileN = *n;
    }
  }
  if (Error error = reader.takeError())
    return std::move(error);
  return device;
}
