//===- ModelMetadata.cpp - parse the metadata of a compiled model ---------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The metadata is an artifact (runtime/include/gpuopt/Runtime/Artifact.fbs)
// compiled into the library next to a hash of it, which ModelAbi.cpp checks
// before parsing; the parser still treats the bytes as untrusted (the fuzz
// target feeds it any bytes): verifyArtifact proves the buffer well formed,
// and the checks below prove in range every index the runtime later uses
// without a check.
//
//===----------------------------------------------------------------------===//

#include "ModelMetadata.h"

#include "gpuopt/Runtime/Artifact.h"

#include <limits>

using namespace gpuopt::runtime;
namespace fb = gpuopt::artifact;

namespace {

Status metadataError(const std::string &what) {
  return Status::error("corrupt model metadata: " + what);
}

/// The shape of a function's argument or result: f32 and what
/// checkTensorType proves (verifyArtifact checks only the parameters, inputs
/// and outputs).
Status parseShape(const fb::TensorType &type, const std::string &where,
                  std::vector<int64_t> &shape) {
  if (Status s = checkTensorType(type, where); !s)
    return metadataError(s.message());
  if (type.dtype() != fb::DType::F32)
    return metadataError(where + " is not f32");
  shape = tensorShape(type);
  return Status::ok();
}

Status parseFunction(const fb::CpuFunction &fn, const std::string &name,
                     ModelFunction &out) {
  for (flatbuffers::uoffset_t i = 0; i < fn.args()->size(); ++i) {
    const fb::FunctionArg &a = *fn.args()->Get(i);
    std::string where = name + " argument " + std::to_string(i);
    ModelArg arg;
    switch (a.kind()) {
    case fb::ArgKind::Input:
      arg.kind = ModelArgKind::Input;
      break;
    case fb::ArgKind::Param:
      arg.kind = ModelArgKind::Param;
      break;
    case fb::ArgKind::Derived:
      arg.kind = ModelArgKind::Derived;
      break;
    default:
      return metadataError(where + " has an unknown kind (" +
                           std::to_string(static_cast<int>(a.kind())) + ")");
    }
    arg.index = a.index();
    if (Status s = parseShape(*a.type(), where, arg.shape); !s)
      return s;
    out.args.push_back(std::move(arg));
  }
  for (flatbuffers::uoffset_t i = 0; i < fn.results()->size(); ++i) {
    out.results.emplace_back();
    if (Status s = parseShape(*fn.results()->Get(i),
                              name + " result " + std::to_string(i),
                              out.results.back());
        !s)
      return s;
  }
  return Status::ok();
}

/// Whether the model's inputs or outputs are exactly `shapes`.
bool sameShapes(
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorType>> &types,
    const std::vector<std::vector<int64_t>> &shapes) {
  if (types.size() != shapes.size())
    return false;
  for (flatbuffers::uoffset_t i = 0; i < types.size(); ++i)
    if (tensorShape(*types.Get(i)) != shapes[i])
      return false;
  return true;
}

} // namespace

Status gpuopt::runtime::parseModelMetadata(const uint8_t *data, size_t size,
                                           ModelMetadata &md) {
  // Every message of the verifier starts with "corrupt model metadata: ".
  const fb::Model *model = nullptr;
  if (Status s = verifyArtifact(data, size, "corrupt model metadata", model);
      !s)
    return s;
  const fb::CpuProgram *program = model->program_as_CpuProgram();
  if (!program)
    return metadataError(std::string("the artifact's program is for ") +
                         artifactTargetName(*model) + ", not cpu");
  md.cpu = program->cpu()->str();
  for (const flatbuffers::String *feature : *program->cpu_features())
    md.cpuFeatures.push_back(feature->str());
  for (const fb::Param *p : *model->params()) {
    // verifyArtifact checked the name and the shape.
    if (p->type()->dtype() != fb::DType::F32)
      return metadataError("parameter '" + p->name()->str() + "' is not f32");
    md.params.push_back({p->name()->str(), tensorShape(*p->type())});
  }
  if (Status s = parseFunction(*program->init(), "init", md.init); !s)
    return s;
  if (Status s = parseFunction(*program->forward(), "forward", md.forward); !s)
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
  // The model's interface, which every target's reader shows, is the forward
  // function's.
  if (!sameShapes(*model->inputs(), md.inputs))
    return metadataError("the model's inputs differ from the forward "
                         "function's");
  if (!sameShapes(*model->outputs(), md.forward.results))
    return metadataError("the model's outputs differ from the forward "
                         "function's results");
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
