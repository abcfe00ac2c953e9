//===- CudaArtifact.cpp - reader of compiled CUDA models ------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Reads the CudaProgram of an artifact (runtime/include/gpuopt/Runtime/
// Artifact.fbs, CudaArtifact.h) into a CudaArtifact. The file is untrusted:
// verifyArtifact proves the buffer well formed against the schema first,
// then every enum, index, offset and size of the launch plan is checked
// here before anything uses it, each step against its kernel's signature.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CpuKernelAbi.h"
#include "gpuopt/Runtime/CudaModel.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <algorithm>
#include <map>
#include <set>

using namespace gpuopt::runtime;
namespace fb = gpuopt::artifact;

namespace {

Status fail(const std::string &path, const std::string &what) {
  return Status::error(path + ": invalid CUDA artifact: " + what);
}

const char *bufferKindName(fb::BufferKind kind) {
  switch (kind) {
  case fb::BufferKind::Input:
    return "input";
  case fb::BufferKind::Output:
    return "output";
  case fb::BufferKind::Param:
    return "param";
  case fb::BufferKind::Constant:
    return "constant";
  case fb::BufferKind::Temp:
    return "temp";
  }
  return nullptr;
}

const char *imageFormatName(fb::ImageFormat format) {
  switch (format) {
  case fb::ImageFormat::Fatbin:
    return "fatbin";
  case fb::ImageFormat::Cubin:
    return "cubin";
  case fb::ImageFormat::Ptx:
    return "ptx";
  case fb::ImageFormat::HostSo:
    return "host-so";
  }
  return nullptr;
}

/// "at a.py:4:9, a.py:5:9 and 2 more" (empty without any location).
std::string locationText(const std::vector<std::string> &sources,
                         const std::string &loc) {
  if (sources.empty())
    return loc.empty() ? "" : "at " + loc;
  constexpr size_t kShown = 3;
  std::string text = "at ";
  for (size_t i = 0; i < sources.size() && i < kShown; ++i)
    text += (i ? ", " : "") + sources[i];
  if (sources.size() > kShown)
    text += " and " + std::to_string(sources.size() - kShown) + " more";
  return text;
}

/// The routines a Library step may call (the subset of CpuKernelAbi.def
/// the CUDA runtime's libraries compute).
bool isLibraryRoutine(const std::string &name) {
  return name == "conv2d" || name == "conv_transpose2d" || name == "linear";
}

std::string listText(const std::vector<int64_t> &v) {
  std::string text = "[";
  for (size_t i = 0; i < v.size(); ++i)
    text += (i ? ", " : "") + std::to_string(v[i]);
  return text + "]";
}

/// Reads and checks the Library step `s` into `step`: the routine, its
/// operands against its CpuKernelAbi.def signature and their buffers, its
/// `args`, and the subset of the routine the CUDA library route computes
/// (CudaArtifact.h). `where` is "run[3]", `at` its locations.
Status readLibraryStep(const std::string &path, const fb::CudaStep &s,
                       const std::string &where, const std::string &at,
                       const CudaArtifact &art, CudaStep &step) {
  step.isLibrary = true;
  step.library = s.library() ? s.library()->str() : "";
  std::string located = where + (at.empty() ? "" : " (" + at + ")");
  const CpuKernelSignature *sig = nullptr;
  for (const CpuKernelSignature &k : kCpuKernelSignatures)
    if (std::string(k.name) == "gpuopt_cpu_" + step.library)
      sig = &k;
  if (!sig || !isLibraryRoutine(step.library))
    return fail(path, located + ": unknown library routine '" + step.library +
                          "' (expected conv2d, conv_transpose2d or linear)");
  std::string lib = where + " (library '" + step.library + "'" +
                    (at.empty() ? "" : " " + at) + ")";
  auto bad = [&](const std::string &what) {
    return fail(path, lib + ": " + what);
  };
  std::vector<const CpuKernelArg *> memrefs;
  size_t numScalars = 0;
  for (int a = 0; a < sig->numArgs; ++a) {
    if (sig->args[a].rank)
      memrefs.push_back(&sig->args[a]);
    else
      ++numScalars;
  }
  size_t numOperands = s.operands() ? s.operands()->size() : 0;
  size_t givenScalars = s.scalars() ? s.scalars()->size() : 0;
  if (numOperands != memrefs.size() || givenScalars != numScalars)
    return bad(std::to_string(numOperands) + " operands and " +
               std::to_string(givenScalars) + " scalars, '" + step.library +
               "' takes " + std::to_string(memrefs.size()) + " and " +
               std::to_string(numScalars));
  if (s.scalars())
    step.scalars.assign(s.scalars()->begin(), s.scalars()->end());
  for (size_t i = 0; i < numOperands; ++i) {
    const fb::CudaOperand &o = *s.operands()->Get(i);
    std::string operand = "operand " + std::to_string(i);
    CudaOperand op;
    op.buffer = o.buffer();
    op.offset = o.offset();
    op.sizes.assign(o.sizes()->begin(), o.sizes()->end());
    op.strides.assign(o.strides()->begin(), o.strides()->end());
    int rank = memrefs[i]->rank;
    if (op.sizes.size() != size_t(rank) || op.strides.size() != size_t(rank))
      return bad(operand + " must have " + std::to_string(rank) +
                 " sizes and strides");
    for (int64_t v : op.sizes)
      if (v < 0)
        return bad(operand + " has a negative size");
    if (op.empty()) {
      step.operands.push_back(std::move(op));
      continue;
    }
    if (op.buffer >= art.buffers.size())
      return bad(operand + ": 'buffer' must index 'buffers'");
    const CudaBuffer &b = art.buffers[op.buffer];
    DType want = memrefs[i]->isF32 ? DType::F32 : DType::I64;
    if (b.dtype != want)
      return bad(operand + " is a view of buffers[" +
                 std::to_string(op.buffer) + "] (" + dtypeName(b.dtype) +
                 "), the routine takes " + dtypeName(want));
    // The last element the view addresses, in 128 bits (no overflow for
    // any int64 sizes and strides of rank <= 4).
    __int128 last = op.offset;
    bool negative = op.offset < 0;
    for (int d = 0; d < rank; ++d) {
      negative |= op.strides[d] < 0;
      last += __int128(op.sizes[d] - 1) * op.strides[d];
    }
    uint64_t elements = b.bytes / dtypeSize(b.dtype);
    if (negative)
      return bad(operand + " has a negative offset or stride");
    if (last >= __int128(elements))
      return bad(operand + " (offset " + std::to_string(op.offset) +
                 ", sizes " + listText(op.sizes) + ", strides " +
                 listText(op.strides) + ") lies outside buffers[" +
                 std::to_string(op.buffer) + "] of " +
                 std::to_string(elements) + " elements");
    step.operands.push_back(std::move(op));
  }
  std::vector<unsigned> distinct;
  for (const CudaOperand &o : step.operands)
    if (!o.empty() &&
        std::find(distinct.begin(), distinct.end(), o.buffer) == distinct.end())
      distinct.push_back(o.buffer);
  std::vector<unsigned> args(s.args()->begin(), s.args()->end());
  if (args != distinct)
    return bad("'args' must be the distinct buffers of its operands, operand "
               "0's first");
  step.args = args;

  const std::vector<CudaOperand> &ops = step.operands;
  const std::vector<int64_t> &sc = step.scalars;
  auto unsupported = [&](const std::string &what) {
    return bad(what + " is not supported by the CUDA library route");
  };
  auto shape = [&](size_t i) { return listText(ops[i].sizes); };
  for (size_t i : {size_t(0), size_t(1), size_t(2)})
    if (ops[i].empty())
      return bad("operand " + std::to_string(i) + " (" +
                 (i == 0   ? "output"
                  : i == 1 ? "input"
                           : "weight") +
                 ") must not be empty");
  // Weights are packed (row-major, dense).
  {
    int64_t expect = 1;
    for (size_t d = ops[2].sizes.size(); d-- > 0;) {
      if (ops[2].sizes[d] != 1 && ops[2].strides[d] != expect)
        return unsupported("a weight of strides " + listText(ops[2].strides) +
                           " (not contiguous)");
      expect *= ops[2].sizes[d];
    }
  }
  auto checkBias = [&](bool has, int64_t channels) -> Status {
    if (!has) {
      if (!ops[3].empty())
        return bad("operand 3 (bias) must be empty without a bias");
      return Status::ok();
    }
    if (ops[3].sizes[0] != channels)
      return bad("operand 3 (bias) has shape " + shape(3) + ", expected [" +
                 std::to_string(channels) + "]");
    return Status::ok();
  };
  auto mismatch = [&](size_t i, const std::vector<int64_t> &want) {
    return bad("operand " + std::to_string(i) + " has shape " + shape(i) +
               ", expected " + listText(want));
  };
  if (step.library == "conv2d") {
    const std::vector<int64_t> &out = ops[0].sizes, &in = ops[1].sizes,
                               &w = ops[2].sizes;
    int64_t strideH = sc[0], strideW = sc[1], padH = sc[2], padW = sc[3],
            dilH = sc[4], dilW = sc[5], groups = sc[6], frames = sc[7],
            flags = sc[8], act = sc[9];
    if (!ops[5].empty() || !ops[6].empty() || !ops[7].empty() || frames != 0)
      return unsupported("a shifted conv2d (non-empty shift operands or "
                         "frames)");
    if (act != kActNone && act != kActRelu)
      return unsupported("activation " + std::to_string(act) +
                         " (only none and relu)");
    if (flags & ~(kConvHasBias | kConvHasResidual | kConvZeroMode))
      return bad("unknown flags " + std::to_string(flags));
    bool residual = flags & kConvHasResidual;
    if (act == kActRelu && residual)
      return unsupported("relu with a residual");
    constexpr int64_t kLimit = int64_t(1) << 31;
    for (int64_t v : {strideH, strideW, dilH, dilW, groups})
      if (v < 1 || v >= kLimit)
        return bad("strides, dilations and groups must be in [1, 2^31)");
    for (int64_t v : {padH, padW})
      if (v < 0 || v >= kLimit)
        return bad("paddings must be in [0, 2^31)");
    if (in[1] % groups || w[0] % groups || w[1] * groups != in[1])
      return bad("input " + shape(1) + " and weight " + shape(2) +
                 " do not match groups " + std::to_string(groups));
    // In 128 bits: a dilation below 2^31 times a kernel extent below 2^40.
    auto extent = [](int64_t size, int64_t pad, int64_t dil, int64_t k,
                     int64_t stride) -> int64_t {
      __int128 span =
          __int128(size) + 2 * __int128(pad) - __int128(dil) * (k - 1) - 1;
      return span < 0 ? 0 : int64_t(span / stride + 1);
    };
    int64_t oh = extent(in[2], padH, dilH, w[2], strideH);
    int64_t ow = extent(in[3], padW, dilW, w[3], strideW);
    if (oh == 0 || ow == 0 || out != std::vector<int64_t>{in[0], w[0], oh, ow})
      return mismatch(0, {in[0], w[0], oh, ow});
    if (Status st = checkBias(flags & kConvHasBias, w[0]); !st)
      return st;
    if (residual && ops[4].sizes != out)
      return mismatch(4, out);
  } else if (step.library == "conv_transpose2d") {
    const std::vector<int64_t> &in = ops[1].sizes, &w = ops[2].sizes;
    if (sc[0] != 0 && sc[0] != 1)
      return bad("hasBias must be 0 or 1");
    if (w[0] != in[1])
      return bad("weight " + shape(2) + " does not match input " + shape(1));
    std::vector<int64_t> want = {in[0], w[1], in[2] * w[2], in[3] * w[3]};
    if (ops[0].sizes != want)
      return mismatch(0, want);
    if (Status st = checkBias(sc[0], w[1]); !st)
      return st;
  } else {
    const std::vector<int64_t> &in = ops[1].sizes, &w = ops[2].sizes;
    if (sc[0] != 0 && sc[0] != 1)
      return bad("hasBias must be 0 or 1");
    if (w[1] != in[1])
      return bad("weight " + shape(2) + " does not match input " + shape(1));
    if (ops[0].sizes != std::vector<int64_t>{in[0], w[0]})
      return mismatch(0, {in[0], w[0]});
    for (size_t i : {size_t(0), size_t(1)})
      if (ops[i].sizes[1] != 1 && ops[i].strides[1] != 1)
        return unsupported("operand " + std::to_string(i) +
                           " with rows of stride " +
                           std::to_string(ops[i].strides[1]));
    if (Status st = checkBias(sc[0], w[0]); !st)
      return st;
  }
  return Status::ok();
}

Status
readSteps(const std::string &path,
          const flatbuffers::Vector<flatbuffers::Offset<fb::CudaStep>> &steps,
          const char *field, const CudaArtifact &art,
          std::vector<CudaStep> &out) {
  for (flatbuffers::uoffset_t i = 0; i < steps.size(); ++i) {
    const fb::CudaStep &s = *steps.Get(i);
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    CudaStep step;
    if (s.loc())
      step.loc = s.loc()->str();
    if (s.sources())
      for (const flatbuffers::String *source : *s.sources())
        step.sources.push_back(source->str());
    // Until the kernel is known: the step and where it came from.
    std::string at = locationText(step.sources, step.loc);
    std::string located = where + (at.empty() ? "" : " (" + at + ")");
    if (s.kind() == fb::StepKind::Library) {
      if (Status st = readLibraryStep(path, s, where, at, art, step); !st)
        return st;
      out.push_back(std::move(step));
      continue;
    }
    if (s.kind() != fb::StepKind::Kernel)
      return fail(path, located + ": unknown step kind " +
                            std::to_string(static_cast<int>(s.kind())));
    if (s.kernel() >= art.kernels.size())
      return fail(path, where + " (kernel " + std::to_string(s.kernel()) +
                            (at.empty() ? "" : " " + at) +
                            "): 'kernel' must index 'kernels' (" +
                            std::to_string(art.kernels.size()) + " kernels)");
    step.kernel = s.kernel();
    const CudaKernel &k = art.kernels[step.kernel];
    std::string launch = where + " (kernel '" + k.name + "'" +
                         (at.empty() ? "" : " " + at) + ")";
    for (const char *dimField : {"grid", "block"}) {
      const fb::Dim3 *d = dimField[0] == 'g' ? s.grid() : s.block();
      if (!d)
        return fail(path, launch + ": '" + dimField + "' must be [x, y, z]");
      unsigned *dims = dimField[0] == 'g' ? step.grid : step.block;
      dims[0] = d->x();
      dims[1] = d->y();
      dims[2] = d->z();
      for (int k = 0; k < 3; ++k)
        if (dims[k] < 1 || dims[k] > 0x7fffffffu)
          return fail(path, launch + ": '" + dimField +
                                "' sizes must be in [1, 2^31)");
    }
    if (uint64_t(step.block[0]) * step.block[1] * step.block[2] > 1024)
      return fail(path, launch + ": more than 1024 threads per block");
    for (uint32_t a : *s.args()) {
      if (a >= art.buffers.size())
        return fail(path, launch + ": 'args' must index 'buffers'");
      step.args.push_back(a);
    }
    // The driver takes one pointer per kernel parameter and cannot tell a
    // missing or wrong one: check the plan against the kernel's signature.
    if (step.args.size() != k.args.size())
      return fail(path, launch + ": " + std::to_string(step.args.size()) +
                            " arguments, the kernel takes " +
                            std::to_string(k.args.size()));
    for (size_t a = 0; a < step.args.size(); ++a) {
      const CudaBuffer &b = art.buffers[step.args[a]];
      if (b.dtype != k.args[a].dtype || b.bytes != k.args[a].bytes)
        return fail(path, launch + ": argument " + std::to_string(a) +
                              " is buffers[" + std::to_string(step.args[a]) +
                              "] (" + dtypeName(b.dtype) + ", " +
                              std::to_string(b.bytes) +
                              " bytes), the kernel takes " +
                              dtypeName(k.args[a].dtype) + ", " +
                              std::to_string(k.args[a].bytes) + " bytes");
    }
    out.push_back(std::move(step));
  }
  return Status::ok();
}

/// The plan's input or output buffers: `ids` index f32 buffers of `kind`,
/// one per tensor of the model's `types`, of the same shapes and in order.
Status readEndpoints(
    const std::string &path, const flatbuffers::Vector<uint32_t> &ids,
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorType>> &types,
    const char *field, const std::string &kind, const CudaArtifact &art,
    std::vector<unsigned> &out) {
  std::string what = kind == "input" ? "inputs" : "outputs";
  if (ids.size() != types.size())
    return fail(path, "'" + what + "' names " + std::to_string(ids.size()) +
                          " buffers, the model has " +
                          std::to_string(types.size()) + " " + what);
  for (flatbuffers::uoffset_t i = 0; i < ids.size(); ++i) {
    uint32_t id = ids.Get(i);
    if (id >= art.buffers.size())
      return fail(path, "'inputs' and 'outputs' must index 'buffers'");
    const CudaBuffer &b = art.buffers[id];
    if (b.kind != kind || b.dtype != DType::F32)
      return fail(path, "'" + what + "' must name f32 " + kind + " buffers");
    std::vector<int64_t> shape = tensorShape(*types.Get(i));
    if (b.shape != shape)
      return fail(path, std::string(field) + " " + std::to_string(i) +
                            " is buffers[" + std::to_string(id) +
                            "] of shape " + formatShape(b.shape) +
                            ", the model's " + field + " " + std::to_string(i) +
                            " is " + formatShape(shape));
    out.push_back(id);
  }
  return Status::ok();
}

/// " (argument 2 of run[3], kernel 'k' at a.py:4:9)": the first launch of
/// the raw plan that passes buffers[id], for messages about the buffer;
/// empty when none does.
std::string firstUse(const fb::CudaProgram &program, uint32_t id) {
  for (const char *field : {"init", "run"}) {
    const auto &steps = field[0] == 'i' ? *program.init() : *program.run();
    for (flatbuffers::uoffset_t i = 0; i < steps.size(); ++i) {
      const fb::CudaStep &s = *steps.Get(i);
      const flatbuffers::Vector<uint32_t> &args = *s.args();
      for (flatbuffers::uoffset_t a = 0; a < args.size(); ++a) {
        if (args.Get(a) != id)
          continue;
        std::vector<std::string> sources;
        if (s.sources())
          for (const flatbuffers::String *source : *s.sources())
            sources.push_back(source->str());
        std::string at =
            locationText(sources, s.loc() ? s.loc()->str() : std::string());
        const auto &kernels = *program.kernels();
        std::string kernel =
            s.kind() == fb::StepKind::Library
                ? "library '" +
                      (s.library() ? s.library()->str() : std::string()) + "'"
            : s.kernel() < kernels.size()
                ? "kernel '" + kernels.Get(s.kernel())->name()->str() + "'"
                : "kernel " + std::to_string(s.kernel());
        return " (argument " + std::to_string(a) + " of " + field + "[" +
               std::to_string(i) + "], " + kernel +
               (at.empty() ? "" : " " + at) + ")";
      }
    }
  }
  return "";
}

} // namespace

Status gpuopt::runtime::readCudaArtifact(const std::string &path,
                                         CudaArtifact &art, bool planChecks) {
  std::vector<uint8_t> bytes;
  if (Status s = readFileBytes(path, bytes, kMaxCudaArtifactBytes); !s)
    return s;
  return parseCudaArtifact(bytes.data(), bytes.size(), path, art, planChecks);
}

Status gpuopt::runtime::parseCudaArtifact(const uint8_t *data, size_t size,
                                          const std::string &path,
                                          CudaArtifact &art, bool planChecks) {
  const fb::Model *model = nullptr;
  if (Status s = verifyArtifact(data, size, path, model); !s)
    return s;
  const fb::CudaProgram *program = model->program_as_CudaProgram();
  if (!program)
    return fail(path, std::string("a ") + artifactTargetName(*model) +
                          " artifact, not a CUDA one (compiled without "
                          "--target=cuda?)");
  art.entry = model->entry()->str();

  for (flatbuffers::uoffset_t i = 0; i < program->images()->size(); ++i) {
    const fb::CudaImage &im = *program->images()->Get(i);
    CudaImage image;
    image.chip = im.chip()->str();
    const char *format = imageFormatName(im.format());
    bool host = im.format() == fb::ImageFormat::HostSo;
    bool chipOk =
        host ? image.chip.size() > 5 && image.chip.compare(0, 5, "host-") == 0
             : image.computeCapability() >= 0;
    if (!format || !chipOk)
      return fail(path, "images[" + std::to_string(i) +
                            "] must give chip sm_NN and format "
                            "fatbin|cubin|ptx, or chip host-ARCH and format "
                            "HostSo");
    image.format = format;
    image.bytes.assign(im.data()->begin(), im.data()->end());
    if (im.format() == fb::ImageFormat::Ptx)
      image.bytes.push_back(0); // the driver reads PTX as a C string
    art.images.push_back(std::move(image));
  }

  // The model's parameters by name, for the param buffers' bindings.
  std::map<std::string, const fb::Param *> params;
  for (const fb::Param *p : *model->params())
    params[p->name()->str()] = p;

  art.arenaBytes = program->arena_bytes();
  for (flatbuffers::uoffset_t i = 0; i < program->buffers()->size(); ++i) {
    const fb::CudaBuffer &b = *program->buffers()->Get(i);
    std::string where = "buffers[" + std::to_string(i) + "]";
    auto bad = [&](const std::string &what) {
      return fail(path, what + firstUse(*program, i));
    };
    CudaBuffer buf;
    const char *kind = bufferKindName(b.kind());
    if (!kind)
      return bad(where + ": unknown kind " +
                 std::to_string(static_cast<int>(b.kind())));
    buf.kind = kind;
    if (b.name())
      buf.name = b.name()->str();
    if (Status s = checkTensorType(*b.type(), where); !s)
      return bad(s.message());
    buf.dtype = toDType(b.type()->dtype());
    buf.shape = tensorShape(*b.type());
    buf.bytes = b.bytes();
    buf.offset = b.offset();
    uint64_t expect;
    if (!denseByteSize(buf.shape, buf.dtype, expect) || expect != buf.bytes)
      return bad(where + ": 'bytes' does not match shape and dtype");
    if (buf.offset % kCudaArenaAlignment != 0)
      return bad(where + ": offset " + std::to_string(buf.offset) +
                 " is not a multiple of " +
                 std::to_string(kCudaArenaAlignment));
    if (buf.offset > art.arenaBytes || buf.bytes > art.arenaBytes - buf.offset)
      return bad(where + ": " + std::to_string(buf.bytes) +
                 " bytes at offset " + std::to_string(buf.offset) +
                 " lie outside the arena of " + std::to_string(art.arenaBytes) +
                 " bytes");
    if (buf.kind == "param") {
      if (buf.name.empty())
        return bad(where + ": a param buffer needs a 'name'");
      auto it = params.find(buf.name);
      if (it == params.end())
        return bad(where + ": parameter '" + buf.name +
                   "' is not among the model's params");
      const fb::TensorType &type = *it->second->type();
      if (toDType(type.dtype()) != buf.dtype || tensorShape(type) != buf.shape)
        return bad(where + ": parameter '" + buf.name + "' is " +
                   dtypeName(buf.dtype) + " " + formatShape(buf.shape) +
                   ", the model's params give " +
                   dtypeName(toDType(type.dtype())) + " " +
                   formatShape(tensorShape(type)));
    }
    art.buffers.push_back(std::move(buf));
  }
  if (Status s = readEndpoints(path, *program->inputs(), *model->inputs(),
                               "input", "input", art, art.inputs);
      !s)
    return s;
  if (Status s = readEndpoints(path, *program->outputs(), *model->outputs(),
                               "output", "output", art, art.outputs);
      !s)
    return s;

  for (flatbuffers::uoffset_t i = 0; i < program->kernels()->size(); ++i) {
    const fb::CudaKernel &k = *program->kernels()->Get(i);
    std::string where = "kernels[" + std::to_string(i) + "]";
    CudaKernel kernel;
    kernel.name = k.name()->str();
    if (kernel.name.empty())
      return fail(path, where + " must give a 'name' and 'args'");
    // Every launch passes 0 bytes of dynamic shared memory.
    if (k.shared_bytes() != 0)
      return fail(path, where + " ('" + kernel.name + "') needs " +
                            std::to_string(k.shared_bytes()) +
                            " bytes of dynamic shared memory, which this "
                            "runtime does not provide");
    for (flatbuffers::uoffset_t a = 0; a < k.args()->size(); ++a) {
      const fb::KernelArg &arg = *k.args()->Get(a);
      std::string argument =
          where + " ('" + kernel.name + "'): argument " + std::to_string(a);
      if (arg.dtype() > fb::DType::MAX)
        return fail(path, argument + " has an unknown dtype");
      // The plan checks need to know what each launch reads and writes.
      if (!arg.reads() || !arg.writes())
        return fail(path, argument +
                              " does not record whether the kernel reads "
                              "and writes it (an artifact of an earlier "
                              "gpuopt-compile): recompile it");
      CudaKernelArg ka;
      ka.dtype = toDType(arg.dtype());
      ka.bytes = arg.bytes();
      ka.reads = *arg.reads();
      ka.writes = *arg.writes();
      ka.inPlace = arg.in_place();
      if (ka.inPlace != (ka.reads && ka.writes))
        return fail(path, argument + " is " + (ka.inPlace ? "" : "not ") +
                              "in place, but the kernel " +
                              (ka.reads ? "reads" : "does not read") +
                              (ka.reads == ka.writes ? " and " : " but ") +
                              (ka.writes ? "writes" : "does not write") +
                              " it");
      kernel.args.push_back(ka);
    }
    art.kernels.push_back(std::move(kernel));
  }
  if (!art.kernels.empty() && art.images.empty())
    return fail(path, "kernels but no image");

  if (Status s = readSteps(path, *program->init(), "init", art, art.init); !s)
    return s;
  if (Status s = readSteps(path, *program->run(), "run", art, art.run); !s)
    return s;
  if (program->precision() != fb::Precision::FP32 &&
      program->precision() != fb::Precision::TF32)
    return fail(path, "unknown precision " + std::to_string(static_cast<int>(
                                                 program->precision())));
  art.precision = program->precision() == fb::Precision::TF32
                      ? CudaPrecision::TF32
                      : CudaPrecision::FP32;
  // Nothing else proves a launch grid, an offset or an image byte intact
  // (checked last: a damaged structure is named first).
  if (!hasArtifactChecksum(data, size))
    return fail(path, "no checksum (written by an older gpuopt-compile, or "
                      "damaged): compile the model again");
  return planChecks ? checkCudaPlan(art, path) : Status::ok();
}

std::string gpuopt::runtime::describeCudaStep(const CudaArtifact &art,
                                              const char *plan, size_t index) {
  const CudaStep &s = (plan[0] == 'i' ? art.init : art.run)[index];
  std::string at = locationText(s.sources, s.loc);
  std::string what = s.isLibrary
                         ? "library '" + s.library + "'"
                         : "kernel '" + art.kernels[s.kernel].name + "'";
  return std::string(plan) + "[" + std::to_string(index) + "] (" + what +
         (at.empty() ? "" : " " + at) + ")";
}

std::string gpuopt::runtime::describeCudaBuffer(const CudaArtifact &art,
                                                unsigned id) {
  const CudaBuffer &b = art.buffers[id];
  std::string detail = b.kind;
  if (b.kind == "param") {
    detail += " '" + b.name + "'";
  } else if (b.kind == "input" || b.kind == "output") {
    const std::vector<unsigned> &ids =
        b.kind == "input" ? art.inputs : art.outputs;
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it != ids.end())
      detail += " " + std::to_string(it - ids.begin());
  }
  return "buffers[" + std::to_string(id) + "] (" + detail + ")";
}

int CudaImage::computeCapability() const {
  if (chip.size() < 4 || chip.compare(0, 3, "sm_") != 0 || chip.size() > 7)
    return -1;
  int cc = 0;
  for (size_t i = 3; i < chip.size(); ++i) {
    if (chip[i] < '0' || chip[i] > '9')
      return -1;
    cc = cc * 10 + (chip[i] - '0');
  }
  return cc;
}

const CudaImage *gpuopt::runtime::selectCudaImage(const CudaArtifact &art,
                                                  int cc) {
  const CudaImage *best = nullptr;
  for (const CudaImage &image : art.images) {
    if (image.format == "host-so")
      continue; // for the emulator, never for a GPU
    int icc = image.computeCapability();
    if (icc == cc && image.format != "ptx")
      return &image;
    if (icc <= cc && image.format != "cubin" &&
        (!best || icc > best->computeCapability()))
      best = &image;
  }
  return best;
}

Status gpuopt::runtime::checkCudaWeights(const CudaArtifact &art,
                                         const SafetensorsFile &weights,
                                         const std::string &weightsPath,
                                         bool strict) {
  std::set<std::string> used;
  for (const CudaBuffer &b : art.buffers) {
    if (b.kind != "param")
      continue;
    auto it = weights.tensors.find(b.name);
    if (it == weights.tensors.end())
      return Status::error(weightsPath + ": missing parameter '" + b.name +
                           "' of shape " + formatShape(b.shape));
    if (it->second.dtype != b.dtype || it->second.shape != b.shape)
      return Status::error(weightsPath + ": parameter '" + b.name + "' is " +
                           dtypeName(it->second.dtype) + " " +
                           formatShape(it->second.shape) + ", expected " +
                           dtypeName(b.dtype) + " " + formatShape(b.shape));
    used.insert(b.name);
  }
  if (strict)
    for (const auto &[name, t] : weights.tensors)
      if (!used.count(name) && !isTrainingCounter(name))
        return Status::error(weightsPath + ": tensor '" + escapeName(name) +
                             "' is not a parameter of the model (strict)");
  return Status::ok();
}
