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

/// The dtype and shape of a tensor type of the plan, with the checks
/// verifyArtifact makes for the model's own types (checkTensorType).
Status readType(const std::string &path, const fb::TensorType &type,
                const std::string &where, DType &dtype,
                std::vector<int64_t> &shape) {
  if (Status s = checkTensorType(type, where); !s)
    return fail(path, s.message());
  dtype = toDType(type.dtype());
  shape = tensorShape(type);
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
    if (s.kind() == fb::StepKind::Library)
      return fail(path, where +
                            ": library steps are not supported by this "
                            "runtime" +
                            (s.library() ? " ('" + s.library()->str() + "')"
                                         : std::string()));
    if (s.kind() != fb::StepKind::Kernel)
      return fail(path, where + ": unknown step kind " +
                            std::to_string(static_cast<int>(s.kind())));
    CudaStep step;
    if (s.kernel() >= art.kernels.size())
      return fail(path, where + ": 'kernel' must index 'kernels'");
    step.kernel = s.kernel();
    for (const char *dimField : {"grid", "block"}) {
      const fb::Dim3 *d = dimField[0] == 'g' ? s.grid() : s.block();
      if (!d)
        return fail(path, where + ": '" + dimField + "' must be [x, y, z]");
      unsigned *dims = dimField[0] == 'g' ? step.grid : step.block;
      dims[0] = d->x();
      dims[1] = d->y();
      dims[2] = d->z();
      for (int k = 0; k < 3; ++k)
        if (dims[k] < 1 || dims[k] > 0x7fffffffu)
          return fail(path, where + ": '" + dimField +
                                "' sizes must be in [1, 2^31)");
    }
    if (uint64_t(step.block[0]) * step.block[1] * step.block[2] > 1024)
      return fail(path, where + ": more than 1024 threads per block");
    for (uint32_t a : *s.args()) {
      if (a >= art.buffers.size())
        return fail(path, where + ": 'args' must index 'buffers'");
      step.args.push_back(a);
    }
    if (s.loc())
      step.loc = s.loc()->str();
    // The driver takes one pointer per kernel parameter and cannot tell a
    // missing or wrong one: check the plan against the kernel's signature.
    const CudaKernel &k = art.kernels[step.kernel];
    std::string launch = where + " (kernel '" + k.name + "'" +
                         (step.loc.empty() ? "" : " at " + step.loc) + ")";
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

} // namespace

Status gpuopt::runtime::readCudaArtifact(const std::string &path,
                                         CudaArtifact &art) {
  std::vector<uint8_t> bytes;
  if (Status s = readFileBytes(path, bytes, kMaxCudaArtifactBytes); !s)
    return s;
  return parseCudaArtifact(bytes.data(), bytes.size(), path, art);
}

Status gpuopt::runtime::parseCudaArtifact(const uint8_t *data, size_t size,
                                          const std::string &path,
                                          CudaArtifact &art) {
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
    CudaBuffer buf;
    const char *kind = bufferKindName(b.kind());
    if (!kind)
      return fail(path, where + ": unknown kind " +
                            std::to_string(static_cast<int>(b.kind())));
    buf.kind = kind;
    if (b.name())
      buf.name = b.name()->str();
    if (Status s = readType(path, *b.type(), where, buf.dtype, buf.shape); !s)
      return s;
    buf.bytes = b.bytes();
    buf.offset = b.offset();
    uint64_t expect;
    if (!denseByteSize(buf.shape, buf.dtype, expect) || expect != buf.bytes)
      return fail(path, where + ": 'bytes' does not match shape and dtype");
    if (buf.offset % kCudaArenaAlignment != 0 || buf.offset > art.arenaBytes ||
        buf.bytes > art.arenaBytes - buf.offset)
      return fail(path, where + ": misaligned or outside the arena");
    if (buf.kind == "param") {
      if (buf.name.empty())
        return fail(path, where + ": a param buffer needs a 'name'");
      auto it = params.find(buf.name);
      if (it == params.end())
        return fail(path, where + ": parameter '" + buf.name +
                              "' is not among the model's params");
      const fb::TensorType &type = *it->second->type();
      if (toDType(type.dtype()) != buf.dtype || tensorShape(type) != buf.shape)
        return fail(path, where + ": parameter '" + buf.name + "' is " +
                              dtypeName(buf.dtype) + " " +
                              formatShape(buf.shape) +
                              ", the model's params "
                              "give " +
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
      if (arg.dtype() > fb::DType::MAX)
        return fail(path, where + " ('" + kernel.name + "'): argument " +
                              std::to_string(a) + " has an unknown dtype");
      kernel.args.push_back({toDType(arg.dtype()), arg.bytes()});
    }
    art.kernels.push_back(std::move(kernel));
  }
  if (!art.kernels.empty() && art.images.empty())
    return fail(path, "kernels but no image");
  if (Status s = readSteps(path, *program->init(), "init", art, art.init); !s)
    return s;
  return readSteps(path, *program->run(), "run", art, art.run);
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
