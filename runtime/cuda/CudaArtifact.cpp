//===- CudaArtifact.cpp - reader of compiled CUDA models ------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Parses the file format of runtime/include/gpuopt/Runtime/CudaArtifact.h. The file
// is untrusted: every count, index, offset and size is checked before use.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Runtime/CudaModel.h"
#include "gpuopt/Runtime/FileIO.h"

#include "../base/Json.h"

#include <cstring>

using namespace gpuopt::runtime;

namespace {

/// Header bytes accepted (a plan of ~100k launches).
constexpr uint64_t kMaxHeaderBytes = 64ull << 20;

Status fail(const std::string &path, const std::string &what) {
  return Status::error(path + ": invalid CUDA artifact: " + what);
}

bool getUInt(const json::Value *v, uint64_t &out) {
  return v && v->getUInt64(out);
}

bool getString(const json::Value *v, std::string &out) {
  if (!v || v->kind != json::Kind::String)
    return false;
  out = v->string;
  return true;
}

bool parseDType(const std::string &name, DType &out) {
  static const DType all[] = {DType::F16, DType::BF16, DType::F32, DType::F64,
                              DType::I8,  DType::I16,  DType::I32, DType::I64,
                              DType::U8,  DType::BOOL};
  for (DType d : all)
    if (name == dtypeName(d)) {
      out = d;
      return true;
    }
  return false;
}

/// Reads an array of unsigned integers below `limit`.
bool getIndices(const json::Value *v, uint64_t limit,
                std::vector<unsigned> &out) {
  if (!v || v->kind != json::Kind::Array)
    return false;
  for (const json::Value &e : v->elements) {
    uint64_t x;
    if (!e.getUInt64(x) || x >= limit)
      return false;
    out.push_back(static_cast<unsigned>(x));
  }
  return true;
}

Status parseSteps(const std::string &path, const json::Value *v,
                  const char *field, const CudaArtifact &art,
                  std::vector<CudaStep> &out) {
  if (!v || v->kind != json::Kind::Array)
    return fail(path, std::string("'") + field + "' must be an array");
  for (size_t i = 0; i < v->elements.size(); ++i) {
    const json::Value &s = v->elements[i];
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    CudaStep step;
    uint64_t kernel;
    if (s.kind != json::Kind::Object || !getUInt(s.find("kernel"), kernel) ||
        kernel >= art.kernels.size())
      return fail(path, where + ": 'kernel' must index 'kernels'");
    step.kernel = static_cast<unsigned>(kernel);
    for (const char *dimField : {"grid", "block"}) {
      const json::Value *d = s.find(dimField);
      if (!d || d->kind != json::Kind::Array || d->elements.size() != 3)
        return fail(path, where + ": '" + dimField + "' must be [x, y, z]");
      for (int k = 0; k < 3; ++k) {
        uint64_t x;
        if (!d->elements[k].getUInt64(x) || x < 1 || x > 0x7fffffffu)
          return fail(path, where + ": '" + dimField +
                                "' sizes must be in [1, 2^31)");
        (dimField[0] == 'g' ? step.grid : step.block)[k] =
            static_cast<unsigned>(x);
      }
    }
    if (uint64_t(step.block[0]) * step.block[1] * step.block[2] > 1024)
      return fail(path, where + ": more than 1024 threads per block");
    if (!getIndices(s.find("args"), art.buffers.size(), step.args))
      return fail(path, where + ": 'args' must index 'buffers'");
    getString(s.find("loc"), step.loc);
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

} // namespace

Status gpuopt::runtime::readCudaArtifact(const std::string &path,
                                         CudaArtifact &art) {
  std::vector<uint8_t> bytes;
  if (Status s = readFileBytes(path, bytes, kMaxCudaArtifactBytes); !s)
    return s;
  return parseCudaArtifact(bytes.data(), bytes.size(), path, art);
}

Status gpuopt::runtime::parseCudaArtifact(const uint8_t *data, size_t fileSize,
                                          const std::string &path,
                                          CudaArtifact &art) {
  if (fileSize < 16 || std::memcmp(data, kCudaArtifactMagic, 8) != 0)
    return fail(path, "missing the GPUOCUDA magic (not made by "
                      "gpuopt-compile --target=cuda?)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | data[8 + i];
  if (n > kMaxHeaderBytes || n > fileSize - 16)
    return fail(path, "header length " + std::to_string(n) +
                          " exceeds the file or the limit");
  json::Value root;
  if (Status s =
          json::parse(reinterpret_cast<const char *>(data) + 16, n, root);
      !s)
    return fail(path, "header: " + s.message());
  if (root.kind != json::Kind::Object)
    return fail(path, "header must be a JSON object");
  uint64_t version;
  if (!getUInt(root.find("version"), version) ||
      version != static_cast<uint64_t>(kCudaArtifactVersion))
    return fail(path, "unsupported version (expected " +
                          std::to_string(kCudaArtifactVersion) + ")");
  getString(root.find("entry"), art.entry);

  const json::Value *images = root.find("images");
  uint64_t payload = fileSize - 16 - n;
  if (!images || images->kind != json::Kind::Array)
    return fail(path, "'images' must be an array");
  for (size_t i = 0; i < images->elements.size(); ++i) {
    const json::Value &im = images->elements[i];
    CudaImage image;
    uint64_t off, size;
    if (im.kind != json::Kind::Object ||
        !getString(im.find("chip"), image.chip) ||
        !getString(im.find("format"), image.format) ||
        (image.format != "cubin" && image.format != "ptx" &&
         image.format != "fatbin") ||
        image.computeCapability() < 0 || !getUInt(im.find("offset"), off) ||
        !getUInt(im.find("size"), size) || off > payload ||
        size > payload - off)
      return fail(path, "images[" + std::to_string(i) +
                            "] must give chip sm_NN, format "
                            "fatbin|cubin|ptx and an offset and size inside "
                            "the payload");
    const uint8_t *base = data + 16 + n + off;
    image.bytes.assign(base, base + size);
    if (image.format == "ptx")
      image.bytes.push_back(0); // the driver reads PTX as a C string
    art.images.push_back(std::move(image));
  }

  if (!getUInt(root.find("arena_bytes"), art.arenaBytes))
    return fail(path, "'arena_bytes' must be an unsigned integer");
  const json::Value *buffers = root.find("buffers");
  if (!buffers || buffers->kind != json::Kind::Array)
    return fail(path, "'buffers' must be an array");
  for (size_t i = 0; i < buffers->elements.size(); ++i) {
    const json::Value &b = buffers->elements[i];
    std::string where = "buffers[" + std::to_string(i) + "]";
    CudaBuffer buf;
    std::string dtype;
    if (b.kind != json::Kind::Object || !getString(b.find("kind"), buf.kind) ||
        !getString(b.find("dtype"), dtype) || !parseDType(dtype, buf.dtype) ||
        !getUInt(b.find("bytes"), buf.bytes) ||
        !getUInt(b.find("offset"), buf.offset))
      return fail(path, where + ": needs kind, dtype, shape, bytes, offset");
    if (buf.kind != "input" && buf.kind != "output" && buf.kind != "param" &&
        buf.kind != "constant" && buf.kind != "temp")
      return fail(path, where + ": unknown kind '" + buf.kind + "'");
    getString(b.find("name"), buf.name);
    const json::Value *shape = b.find("shape");
    if (!shape || shape->kind != json::Kind::Array ||
        shape->elements.size() > 8)
      return fail(path, where + ": 'shape' must be an array of rank <= 8");
    for (const json::Value &d : shape->elements) {
      int64_t x;
      if (!d.getInt64(x) || x < 0)
        return fail(path, where + ": negative or non-integer dimension");
      buf.shape.push_back(x);
    }
    uint64_t expect;
    if (!denseByteSize(buf.shape, buf.dtype, expect) || expect != buf.bytes)
      return fail(path, where + ": 'bytes' does not match shape and dtype");
    if (buf.offset % kCudaArenaAlignment != 0 || buf.offset > art.arenaBytes ||
        buf.bytes > art.arenaBytes - buf.offset)
      return fail(path, where + ": misaligned or outside the arena");
    if (buf.kind == "param" && buf.name.empty())
      return fail(path, where + ": a param buffer needs a 'name'");
    art.buffers.push_back(std::move(buf));
  }
  if (!getIndices(root.find("inputs"), art.buffers.size(), art.inputs) ||
      !getIndices(root.find("outputs"), art.buffers.size(), art.outputs))
    return fail(path, "'inputs' and 'outputs' must index 'buffers'");
  for (unsigned id : art.inputs)
    if (art.buffers[id].kind != "input" || art.buffers[id].dtype != DType::F32)
      return fail(path, "'inputs' must name f32 input buffers");
  for (unsigned id : art.outputs)
    if (art.buffers[id].kind != "output" || art.buffers[id].dtype != DType::F32)
      return fail(path, "'outputs' must name f32 output buffers");
  const json::Value *kernels = root.find("kernels");
  if (!kernels || kernels->kind != json::Kind::Array)
    return fail(path, "'kernels' must be an array");
  for (size_t i = 0; i < kernels->elements.size(); ++i) {
    const json::Value &k = kernels->elements[i];
    std::string where = "kernels[" + std::to_string(i) + "]";
    CudaKernel kernel;
    const json::Value *args = k.find("args");
    if (k.kind != json::Kind::Object ||
        !getString(k.find("name"), kernel.name) || kernel.name.empty() ||
        !args || args->kind != json::Kind::Array)
      return fail(path, where + " must give a 'name' and 'args'");
    for (const json::Value &a : args->elements) {
      CudaKernelArg arg;
      std::string dtype;
      if (a.kind != json::Kind::Object || !getString(a.find("dtype"), dtype) ||
          !parseDType(dtype, arg.dtype) || !getUInt(a.find("bytes"), arg.bytes))
        return fail(path, where + " ('" + kernel.name +
                              "'): each of 'args' needs a dtype and bytes");
      kernel.args.push_back(arg);
    }
    art.kernels.push_back(std::move(kernel));
  }
  if (!art.kernels.empty() && art.images.empty())
    return fail(path, "kernels but no image");
  if (Status s = parseSteps(path, root.find("init"), "init", art, art.init); !s)
    return s;
  return parseSteps(path, root.find("run"), "run", art, art.run);
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
    int icc = image.computeCapability();
    if (icc == cc && image.format != "ptx")
      return &image;
    if (icc <= cc && image.format != "cubin" &&
        (!best || icc > best->computeCapability()))
      best = &image;
  }
  return best;
}
