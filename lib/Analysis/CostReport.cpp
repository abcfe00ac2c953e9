//===- CostReport.cpp - --seg-cost-report ---------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Prints SegCostAnalysis and its predicted latency on one device as the
// seed-style table or as JSON. The IR is left unchanged.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/CostModel.h"
#include "gpuopt/Analysis/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <numeric>

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_SEGCOSTREPORTPASS
#include "gpuopt/Analysis/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt;

namespace {

constexpr ExecMode kModes[] = {ExecMode::Eager, ExecMode::Compiled};

std::string withCommas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

/// `file:line:col` of the innermost file location, the file without its
/// directories; the printed location otherwise.
std::string shortLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}",
                         llvm::sys::path::filename(file.getFilename()),
                         file.getLine(), file.getColumn());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

std::string fullLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return llvm::formatv("{0}:{1}:{2}", file.getFilename().getValue(),
                         file.getLine(), file.getColumn());
  return shortLocation(loc);
}

std::string resultType(Operation *op) {
  if (op->getNumResults() == 0)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getResult(0).getType().print(os);
  return text;
}

/// The report of one function on one device.
struct FunctionReport {
  StringRef name;
  const SegCostAnalysis &analysis;
  const LatencyModel &model;
  TimeSplit totals[2];
  /// Per op and mode.
  std::vector<std::array<TimeSplit, 2>> perOp;

  FunctionReport(StringRef name, const SegCostAnalysis &analysis,
                 const LatencyModel &model)
      : name(name), analysis(analysis), model(model) {
    for (const OpCost &op : analysis.getOps())
      perOp.push_back({model.predict(op, ExecMode::Eager),
                       model.predict(op, ExecMode::Compiled)});
    for (ExecMode mode : kModes)
      totals[static_cast<int>(mode)] = model.predict(analysis, mode);
  }

  const TimeSplit &total(ExecMode mode) const {
    return totals[static_cast<int>(mode)];
  }

  /// The datasheet peak of the graph's precision (that of its first op).
  StringRef getPrecision() const {
    for (const OpCost &op : analysis.getOps())
      if (!op.loadTime)
        return model.getPrecision(op);
    return "fp32";
  }

  double utilization(ExecMode mode) const {
    double peak = model.getDevice().getPeakFlops(getPrecision());
    double seconds = total(mode).getSeconds();
    return peak > 0 && seconds > 0 ? total(mode).flops / (seconds * peak) : 0.0;
  }

  double fps(ExecMode mode) const {
    double seconds = total(mode).getSeconds();
    return seconds > 0 ? analysis.getBatch() / seconds : 0.0;
  }
};

void writeSplit(llvm::json::OStream &j, const TimeSplit &s) {
  j.attribute("kernels", s.kernels);
  j.attribute("flops", s.flops);
  j.attribute("bytes", s.bytes);
  j.attribute("intensity", s.bytes > 0 ? s.flops / s.bytes : 0.0);
  j.attribute("compute_s", s.computeSeconds);
  j.attribute("memory_s", s.memorySeconds);
  j.attribute("launch_s", s.launchSeconds);
  j.attribute("time_s", s.getSeconds());
  j.attribute("bound", s.kernels > 0 ? stringifyBound(s.getBound()) : "none");
}

/// One op as a single-line JSON object.
std::string opToJson(const FunctionReport &report, size_t i) {
  const OpCost &op = report.analysis.getOps()[i];
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("index", static_cast<int64_t>(i));
    j.attribute("name", op.op->getName().getStringRef());
    j.attribute("type", resultType(op.op));
    j.attribute("macs", op.macs);
    j.attribute("thop_macs", op.thopMacs);
    j.attribute("flops", op.flops);
    j.attribute("params", op.params);
    j.attribute("load_time", op.loadTime);
    j.attribute("modeled", op.modeled);
    j.attribute("precision", report.model.getPrecision(op));
    for (ExecMode mode : kModes)
      j.attributeObject(stringifyExecMode(mode), [&] {
        writeSplit(j, report.perOp[i][static_cast<int>(mode)]);
        if (mode == ExecMode::Compiled && op.fusedInto)
          j.attribute("fused_into", static_cast<int64_t>(*op.fusedInto));
        if (mode != ExecMode::Compiled)
          return;
        std::optional<ConvPrediction> conv = report.model.predictConv(op);
        if (!conv)
          return;
        j.attribute("route", conv->library ? "library" : "generated");
        if (!conv->tiling)
          return;
        const WorkgroupTileShape &t = conv->tiling->shape;
        j.attributeArray("tile", [&] {
          for (int64_t v : {t.bm, t.bn, t.rm, t.rn})
            j.value(v);
        });
        j.attribute("splits", conv->tiling->splits);
        // The tiled kernel's blocks (parts included) and their fill of the
        // units, as the prediction used them.
        const GemmShape &gemm = *op.compiled.front().gemm;
        int64_t rows = gemm.getTileRows(), cols = gemm.getTileCols();
        j.attribute("blocks", getWorkgroupTileBlocks(rows, cols, t) *
                                  conv->tiling->splits);
        j.attribute("utilization", getWorkgroupTilingUtilization(
                                       rows, cols, *conv->tiling,
                                       report.model.getDevice().units));
      });
    j.attribute("loc", fullLocation(op.op->getLoc()));
  });
  return text;
}

void writeFunction(llvm::json::OStream &j, const FunctionReport &report) {
  const SegCostAnalysis &analysis = report.analysis;
  j.object([&] {
    j.attribute("name", report.name);
    j.attribute("batch", analysis.getBatch());
    j.attribute("params", analysis.getParams());
    j.attribute("buffers", analysis.getBuffers());
    j.attribute("macs", analysis.getMacs());
    j.attribute("thop_macs", analysis.getThopMacs());
    j.attribute("flops", analysis.getFlops());
    j.attribute("precision", report.getPrecision());
    j.attribute("unmodeled_ops", analysis.getNumUnmodeled());
    for (ExecMode mode : kModes)
      j.attributeObject(stringifyExecMode(mode), [&] {
        writeSplit(j, report.total(mode));
        j.attribute("latency_s", report.total(mode).getSeconds());
        j.attribute("fps", report.fps(mode));
        j.attribute("utilization", report.utilization(mode));
      });
    j.attributeArray("ops", [&] {
      for (size_t i = 0, e = analysis.getOps().size(); i < e; ++i)
        j.rawValue(opToJson(report, i));
    });
  });
}

void writeDevice(llvm::json::OStream &j, const DeviceModel &device,
                 StringRef path) {
  j.object([&] {
    j.attribute("id", device.id);
    j.attribute("name", device.name);
    j.attribute("kind", device.kind);
    j.attribute("file", path);
    j.attributeObject("peak_flops", [&] {
      SmallVector<StringRef> precisions;
      for (const auto &kv : device.peakFlops)
        precisions.push_back(kv.getKey());
      llvm::sort(precisions);
      for (StringRef precision : precisions)
        j.attribute(precision, device.getPeakFlops(precision));
    });
    j.attribute("bandwidth", device.bandwidth);
    j.attribute("compute_efficiency", device.computeEfficiency);
    j.attribute("memory_efficiency", device.memoryEfficiency);
    j.attribute("units", device.units);
    j.attributeArray("gemm_tile", [&] {
      j.value(device.tileM);
      j.value(device.tileN);
    });
    j.attribute("launch_s", device.launchSeconds);
    j.attribute("eager_launch_s", device.eagerLaunchSeconds);
    j.attributeObject("generated_compute_efficiency", [&] {
      for (StringRef precision : {"fp32", "tf32"})
        j.attribute(precision, device.getGeneratedComputeEfficiency(precision));
    });
    j.attribute("library_call_s", device.libraryCallSeconds);
  });
}

/// The compiled column's route of the convolutions and linear layers, with
/// the generated kernels' tiling limits where they apply.
std::string describeRoute(const LatencyModel &model) {
  ConvRoute route = model.getConvRoute();
  if (route == ConvRoute::Model)
    return "model (compute efficiency and library tiles, as eager)";
  const WorkgroupTilingLimits &l = model.getTilingLimits();
  return llvm::formatv("--gpu-conv={0} (generated kernels: min-blocks {1}, "
                       "max-thread-outputs {2}, split-k {3})",
                       stringifyConvRoute(route), l.minBlocks,
                       l.maxThreadOutputs, l.maxSplits)
      .str();
}

void printTable(const FunctionReport &report, unsigned top, ExecMode order,
                raw_ostream &os) {
  const SegCostAnalysis &analysis = report.analysis;
  const DeviceModel &device = report.model.getDevice();
  StringRef precision = report.getPrecision();
  auto ms = [](double s) { return llvm::formatv("{0:F3}", s * 1e3).str(); };
  auto giga = [](double v) { return llvm::formatv("{0:F3}", v / 1e9).str(); };
  auto mega = [](double v) { return llvm::formatv("{0:F2}", v / 1e6).str(); };

  os << "=== seg-cost-report: @" << report.name << " on " << device.id << " ("
     << device.name << "), batch " << analysis.getBatch() << "\n";
  os << llvm::formatv("device: {0} peak {1:F2} TFLOP/s (x{2:F2} attainable), "
                      "{3:F1} GB/s (x{4:F2}), launch {5:F1} us eager / "
                      "{6:F1} us compiled\n",
                      precision, device.getPeakFlops(precision) / 1e12,
                      device.computeEfficiency, device.bandwidth / 1e9,
                      device.memoryEfficiency, device.eagerLaunchSeconds * 1e6,
                      device.launchSeconds * 1e6);
  os << "compiled convolutions/linears: " << describeRoute(report.model)
     << "\n";
  os << "params: " << withCommas(analysis.getParams()) << " learned, "
     << withCommas(analysis.getBuffers()) << " BatchNorm statistics\n";
  os << "GMACs " << giga(analysis.getMacs()) << " | GFLOPs (2 x MACs) "
     << giga(2.0 * analysis.getMacs()) << " | GFLOPs (2 x thop, the seed's) "
     << giga(2.0 * analysis.getThopMacs()) << "\n";
  if (int64_t unmodeled = analysis.getNumUnmodeled())
    os << "unmodeled ops (costed as one memory-bound kernel each): "
       << unmodeled << "\n";
  os << "\n";

  auto row = [&](StringRef label, std::string eager, std::string compiled) {
    os << llvm::formatv("{0,-40} {1,15} {2,17}\n", label, eager, compiled);
  };
  const TimeSplit &e = report.total(ExecMode::Eager);
  const TimeSplit &c = report.total(ExecMode::Compiled);
  auto intensity = [](const TimeSplit &s) {
    return llvm::formatv("{0:F2}", s.bytes > 0 ? s.flops / s.bytes : 0.0).str();
  };
  row("", "PyTorch eager", "gpuopt compiled");
  row("kernels", std::to_string(e.kernels), std::to_string(c.kernels));
  row("GFLOP executed", giga(e.flops), giga(c.flops));
  row("bytes moved (MB)", mega(e.bytes), mega(c.bytes));
  row("arithmetic intensity (FLOP/B)", intensity(e), intensity(c));
  row("compute-bound time (ms)", ms(e.computeSeconds), ms(c.computeSeconds));
  row("memory-bound time (ms)", ms(e.memorySeconds), ms(c.memorySeconds));
  row("launch time (ms)", ms(e.launchSeconds), ms(c.launchSeconds));
  row("predicted latency (ms)", ms(e.getSeconds()), ms(c.getSeconds()));
  row("FPS", llvm::formatv("{0:F1}", report.fps(ExecMode::Eager)),
      llvm::formatv("{0:F1}", report.fps(ExecMode::Compiled)));
  row("bound", stringifyBound(e.getBound()).str(),
      stringifyBound(c.getBound()).str());
  row(("predicted utilization (% of " + precision + " peak)").str(),
      llvm::formatv("{0:F2}", 100 * report.utilization(ExecMode::Eager)),
      llvm::formatv("{0:F2}", 100 * report.utilization(ExecMode::Compiled)));

  // Cost per op kind, most expensive (in `order`) first.
  struct Kind {
    int64_t ops = 0;
    TimeSplit split[2];
  };
  llvm::MapVector<StringRef, Kind> kinds;
  for (auto [i, op] : llvm::enumerate(analysis.getOps())) {
    if (op.loadTime)
      continue;
    Kind &kind = kinds[op.op->getName().getStringRef()];
    kind.ops += 1;
    for (ExecMode mode : kModes)
      kind.split[static_cast<int>(mode)] +=
          report.perOp[i][static_cast<int>(mode)];
  }
  int orderIndex = static_cast<int>(order);
  SmallVector<std::pair<StringRef, Kind>> sortedKinds(kinds.begin(),
                                                      kinds.end());
  llvm::stable_sort(sortedKinds, [&](const auto &a, const auto &b) {
    return a.second.split[orderIndex].getSeconds() >
           b.second.split[orderIndex].getSeconds();
  });
  os << "\nper op kind (per inference; load-time ops omitted), by "
     << stringifyExecMode(order) << " time:\n";
  os << llvm::formatv("  {0,-22} {1,6} {2,13} {3,9} {4,9} {5,9} {6,9} {7,11} "
                      "{8,11}\n",
                      "op", "ops", "kernels e/c", "GFLOP", "MB e", "MB c",
                      "FLOP/B e", "eager ms", "compiled ms");
  for (const auto &[name, kind] : sortedKinds) {
    const TimeSplit &ke = kind.split[0], &kc = kind.split[1];
    os << llvm::formatv(
        "  {0,-22} {1,6} {2,13} {3,9} {4,9} {5,9} {6,9} {7,11} "
        "{8,11}\n",
        name, kind.ops,
        std::to_string(ke.kernels) + "/" + std::to_string(kc.kernels),
        giga(ke.flops), mega(ke.bytes), mega(kc.bytes), intensity(ke),
        ms(ke.getSeconds()), ms(kc.getSeconds()));
  }

  // The `top` most expensive ops.
  SmallVector<size_t> indices(analysis.getOps().size());
  std::iota(indices.begin(), indices.end(), 0);
  llvm::stable_sort(indices, [&](size_t a, size_t b) {
    return report.perOp[a][orderIndex].getSeconds() >
           report.perOp[b][orderIndex].getSeconds();
  });
  indices.resize(std::min<size_t>(top, indices.size()));
  if (indices.empty())
    return;
  os << "\ntop " << indices.size() << " ops by " << stringifyExecMode(order)
     << " time:\n";
  os << llvm::formatv("  {0,-5} {1,-19} {2,-27} {3,7} {4,9} {5,9} {6,9} {7,11} "
                      "{8,11} {9,8}  {10}\n",
                      "#", "op", "result", "e/c", "GFLOP", "MB e", "FLOP/B e",
                      "eager ms", "compiled ms", "bound", "location");
  for (size_t i : indices) {
    const OpCost &op = analysis.getOps()[i];
    const TimeSplit &se = report.perOp[i][0], &sc = report.perOp[i][1];
    const TimeSplit &sorted = report.perOp[i][orderIndex];
    os << llvm::formatv(
        "  {0,-5} {1,-19} {2,-27} {3,7} {4,9} {5,9} {6,9} {7,11} {8,11} {9,8}  "
        "{10}\n",
        i, op.op->getName().getStringRef(), resultType(op.op),
        std::to_string(se.kernels) + "/" + std::to_string(sc.kernels),
        giga(op.flops), mega(se.bytes), intensity(se), ms(se.getSeconds()),
        ms(sc.getSeconds()),
        sorted.kernels ? stringifyBound(sorted.getBound()) : "-",
        shortLocation(op.op->getLoc()));
  }
}

struct SegCostReportPass
    : public gpuopt::impl::SegCostReportPassBase<SegCostReportPass> {
  using SegCostReportPassBase::SegCostReportPassBase;

  void runOnOperation() override;
};

void SegCostReportPass::runOnOperation() {
  SmallVector<FunctionOpInterface> funcs;
  for (auto func : getOperation().getOps<FunctionOpInterface>())
    if (!func.isExternal())
      funcs.push_back(func);
  if (funcs.empty())
    return;
  Location loc = funcs.front().getLoc();
  auto fail = [&](const Twine &message) {
    emitError(loc) << message;
    signalPassFailure();
  };

  if (format != "table" && format != "json")
    return fail("seg-cost-report: unknown format '" + format +
                "' (expected 'table' or 'json')");
  if (sort != "eager" && sort != "compiled")
    return fail("seg-cost-report: unknown sort '" + sort +
                "' (expected 'eager' or 'compiled')");
  std::string path =
      devices.empty() ? getDefaultDeviceFile().str() : std::string(devices);
  llvm::Expected<DeviceModel> device = loadDeviceModel(path, this->device);
  if (!device)
    return fail("seg-cost-report: " + llvm::toString(device.takeError()));
  std::optional<ConvRoute> route = parseConvRoute(gpuConv);
  if (!route)
    return fail("seg-cost-report: unknown gpu-conv '" + gpuConv +
                "' (expected 'model', 'generated', 'library' or 'auto')");
  if (*route != ConvRoute::Model && device->kind != "gpu")
    return fail("seg-cost-report: gpu-conv=" + gpuConv + " needs a GPU; '" +
                device->id + "' is a " + device->kind +
                " (use gpu-conv=model)");
  if (workgroupTileMinBlocks < 1)
    return fail("seg-cost-report: workgroup-tile-min-blocks must be at least "
                "1, got " +
                Twine(static_cast<int64_t>(workgroupTileMinBlocks)));
  if (workgroupTileMaxThreadOutputs < 4)
    return fail("seg-cost-report: workgroup-tile-max-thread-outputs must be "
                "at least 4, got " +
                Twine(static_cast<int64_t>(workgroupTileMaxThreadOutputs)));
  if (workgroupTileSplitK < 1 || !llvm::isPowerOf2_64(workgroupTileSplitK))
    return fail("seg-cost-report: workgroup-tile-split-k must be a power of "
                "two, got " +
                Twine(static_cast<int64_t>(workgroupTileSplitK)));
  WorkgroupTilingLimits limits{workgroupTileMinBlocks,
                               workgroupTileMaxThreadOutputs,
                               workgroupTileSplitK};
  LatencyModel model(*device, precision);
  model.setConvRoute(*route, limits);

  SmallVector<std::unique_ptr<SegCostAnalysis>> analyses;
  for (FunctionOpInterface func : funcs) {
    analyses.push_back(std::make_unique<SegCostAnalysis>(func));
    for (const OpCost &op : analyses.back()->getOps()) {
      (op.modeled ? numOpsModeled : numOpsUnmodeled) += 1;
      if (op.loadTime || device->getPeakFlops(model.getPrecision(op)) > 0)
        continue;
      emitError(op.op->getLoc())
          << "seg-cost-report: device '" << device->id << "' in '" << path
          << "' has no peak for '" << model.getPrecision(op)
          << "' (add it to 'peak_flops' or pass precision=...)";
      return signalPassFailure();
    }
  }

  // The report must not replace the graph it reports on (the file the
  // functions were read from, as their locations name it).
  if (output != "-")
    for (FunctionOpInterface func : funcs)
      if (auto source = func.getLoc()->findInstanceOf<FileLineColLoc>())
        if (llvm::sys::fs::equivalent(output, source.getFilename().getValue()))
          return fail("seg-cost-report: output '" + output + "' is the input " +
                      source.getFilename().getValue() +
                      "; refusing to overwrite an input");
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> file;
  if (output != "-") {
    file = openOutputFile(output, &errorMessage);
    if (!file)
      return fail("seg-cost-report: " + errorMessage);
  }
  raw_ostream &os = file ? file->os() : llvm::outs();

  ExecMode order = sort == "eager" ? ExecMode::Eager : ExecMode::Compiled;
  std::vector<FunctionReport> reports;
  for (auto [func, analysis] : llvm::zip(funcs, analyses))
    reports.emplace_back(func.getName(), *analysis, model);
  if (format == "json") {
    llvm::json::OStream j(os, /*IndentSize=*/2);
    j.object([&] {
      j.attribute("format", "gpuopt-cost-report-1");
      j.attributeBegin("device");
      writeDevice(j, *device, path);
      j.attributeEnd();
      j.attributeObject("gpu_conv", [&] {
        j.attribute("route", stringifyConvRoute(*route));
        j.attribute("min_blocks", limits.minBlocks);
        j.attribute("max_thread_outputs", limits.maxThreadOutputs);
        j.attribute("split_k", limits.maxSplits);
      });
      j.attributeArray("functions", [&] {
        for (const FunctionReport &report : reports)
          writeFunction(j, report);
      });
    });
    os << "\n";
  } else {
    for (const FunctionReport &report : reports)
      printTable(report, top, order, os);
  }
  os.flush();
  if (file)
    file->keep();
  markAllAnalysesPreserved();
}

} // namespace
