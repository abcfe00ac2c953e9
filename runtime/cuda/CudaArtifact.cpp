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
    if (s.kind() == fb::StepKind::Library)
      return fail(path, located +
                            ": library steps are not supported by this "
                            "runtime" +
                            (s.library() ? " ('" + s.library()->str() + "')"
                                         : std::string()));
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
            s.kernel() < kernels.size()
                ? "'" + kernels.Get(s.kernel())->name()->str() + "'"
                : std::to_string(s.kernel());
        return " (argument " + std::to_string(a) + " of " + field + "[" +
               std::to_string(i) + "], kernel " + kernel +
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
  return planChecks ? checkCudaPlan(art, path) : Status::ok();
}

std::string gpuopt::runtime::describeCudaStep(const CudaArtifact &art,
                                              const char *plan, size_t index) {
  const CudaStep &s = (plan[0] == 'i' ? art.init : art.run)[index];
  std::string at = locationText(s.sources, s.loc);
  return std::string(plan) + "[" + std::to_string(index) + "] (kernel '" +
         art.kernels[s.kernel].name + "'" + (at.empty() ? "" : " " + at) + ")";
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
