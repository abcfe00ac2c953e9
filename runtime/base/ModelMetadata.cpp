//===- ModelMetadata.cpp - parse the metadata of a compiled model ---------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The metadata is compiled into the library next to a hash of it, which
// ModelAbi.cpp checks before parsing; the parser still treats the text as
// untrusted (the fuzz target feeds it any bytes), so that every index the
// runtime later uses without a check is proven in range here.
//
//===----------------------------------------------------------------------===//

#include "ModelMetadata.h"

#include "Json.h"
#include "gpuopt/Runtime/CompiledModel.h"

#include <limits>
#include <set>

using namespace gpuopt::runtime;

namespace {

Status metadataError(const std::string &what) {
  return Status::error("corrupt model metadata: " + what);
}

Status parseShape(const json::Value *v, std::vector<int64_t> &shape) {
  if (!v || v->kind != json::Kind::Array)
    return metadataError("expected a shape");
  shape.clear();
  for (const json::Value &dim : v->elements) {
    int64_t d = 0;
    if (!dim.getInt64(d) || d < 0)
      return metadataError("bad dimension");
    shape.push_back(d);
  }
  // The runtime allocates and describes f32 buffers of these shapes.
  uint64_t bytes = 0;
  if (!denseByteSize(shape, DType::F32, bytes) ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return metadataError("the byte size of shape " + formatShape(shape) +
                         " overflows int64");
  return Status::ok();
}

Status parseFunction(const json::Value *v, ModelFunction &fn) {
  if (!v || v->kind != json::Kind::Object)
    return metadataError("expected a function");
  const json::Value *args = v->find("args");
  const json::Value *results = v->find("results");
  if (!args || args->kind != json::Kind::Array || !results ||
      results->kind != json::Kind::Array)
    return metadataError("expected 'args' and 'results'");
  for (const json::Value &a : args->elements) {
    const json::Value *kind = a.find("kind");
    const json::Value *index = a.find("index");
    ModelArg arg;
    uint64_t i = 0;
    if (!kind || kind->kind != json::Kind::String || !index ||
        !index->getUInt64(i))
      return metadataError("bad argument");
    if (kind->string == "input")
      arg.kind = ModelArgKind::Input;
    else if (kind->string == "param")
      arg.kind = ModelArgKind::Param;
    else if (kind->string == "derived")
      arg.kind = ModelArgKind::Derived;
    else
      return metadataError("argument kind '" + kind->string + "'");
    arg.index = i;
    if (Status s = parseShape(a.find("shape"), arg.shape); !s)
      return s;
    fn.args.push_back(std::move(arg));
  }
  for (const json::Value &r : results->elements) {
    fn.results.emplace_back();
    if (Status s = parseShape(&r, fn.results.back()); !s)
      return s;
  }
  return Status::ok();
}

} // namespace

Status gpuopt::runtime::parseModelMetadata(const char *text, size_t size,
                                           ModelMetadata &md) {
  json::Value root;
  if (Status s = json::parse(text, size, root); !s)
    return metadataError(s.message());
  if (root.kind != json::Kind::Object)
    return metadataError("expected an object");
  int64_t version = 0;
  const json::Value *v = root.find("version");
  if (!v || !v->getInt64(version) ||
      version != GPUOPT_COMPILED_METADATA_VERSION)
    return metadataError("unsupported version");
  if (const json::Value *cpu = root.find("cpu");
      cpu && cpu->kind == json::Kind::String)
    md.cpu = cpu->string;
  if (const json::Value *features = root.find("cpu_features")) {
    if (features->kind != json::Kind::Array)
      return metadataError("expected 'cpu_features' to be an array");
    for (const json::Value &f : features->elements) {
      if (f.kind != json::Kind::String)
        return metadataError("expected CPU feature names");
      md.cpuFeatures.push_back(f.string);
    }
  }
  const json::Value *params = root.find("params");
  if (!params || params->kind != json::Kind::Array)
    return metadataError("expected 'params'");
  std::set<std::string> names;
  for (const json::Value &p : params->elements) {
    const json::Value *name = p.find("name");
    if (!name || name->kind != json::Kind::String)
      return metadataError("parameter without a name");
    if (!names.insert(name->string).second)
      return metadataError("parameter '" + name->string + "' appears twice");
    ModelParam param{name->string, {}};
    if (Status s = parseShape(p.find("shape"), param.shape); !s)
      return s;
    md.params.push_back(std::move(param));
  }
  if (Status s = parseFunction(root.find("init"), md.init); !s)
    return s;
  if (Status s = parseFunction(root.find("forward"), md.forward); !s)
    return s;
  // Cross-check the indices so that binding can index without checks.
  for (const ModelFunction *fn : {&md.init, &md.forward}) {
    for (const ModelArg &arg : fn->args) {
      if (arg.kind == ModelArgKind::Param &&
          (arg.index >= md.params.size() ||
           md.params[arg.index].shape != arg.shape))
        return metadataError("bad parameter index");
      if (arg.kind == ModelArgKind::Derived &&
          (fn == &md.init || arg.index >= md.init.results.size() ||
           md.init.results[arg.index] != arg.shape))
        return metadataError("bad initializer result index");
      if (arg.kind == ModelArgKind::Input) {
        if (fn == &md.init)
          return metadataError("the initializer takes an input");
        // gpuopt-compile numbers the inputs in argument order; anything else
        // would leave holes (or ask for a huge table).
        if (arg.index != md.inputs.size())
          return metadataError("input " + std::to_string(arg.index) +
                               " out of order");
        md.inputs.push_back(arg.shape);
      }
    }
  }
  return Status::ok();
}

Status
gpuopt::runtime::checkModelMetadataLimits(const ModelMetadata &md,
                                          const SafetensorsLimits &limits) {
  if (md.params.size() > limits.maxTensors)
    return Status::error("the model has " + std::to_string(md.params.size()) +
                         " parameters, more than the limit of " +
                         std::to_string(limits.maxTensors) + " tensors");
  auto checkRank = [&](const std::vector<int64_t> &shape,
                       const std::string &what) {
    if (shape.size() <= limits.maxRank)
      return Status::ok();
    return Status::error(
        "the model's " + what + " has rank " + std::to_string(shape.size()) +
        ", more than the limit of " + std::to_string(limits.maxRank));
  };
  for (const ModelParam &p : md.params)
    if (Status s = checkRank(p.shape, "parameter '" + p.name + "'"); !s)
      return s;
  for (size_t i = 0; i < md.inputs.size(); ++i)
    if (Status s = checkRank(md.inputs[i], "input " + std::to_string(i)); !s)
      return s;
  for (size_t i = 0; i < md.forward.results.size(); ++i)
    if (Status s =
            checkRank(md.forward.results[i], "output " + std::to_string(i));
        !s)
      return s;
  return Status::ok();
}
