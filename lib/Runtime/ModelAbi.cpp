//===- ModelAbi.cpp - the C ABI of compiled gpuopt models -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements include/gpuopt/Runtime/ModelAbi.h over the model-specific part
// that gpuopt-compile emits (include/gpuopt/Runtime/CompiledModel.h): reads
// the metadata once, binds the weights by name, runs the load-time
// initializer at create time and the forward function per run. Linked into
// every compiled model library; no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ModelAbi.h"

#include "Json.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/CompiledModel.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>

extern "C" {
extern const char gpuopt_compiled_metadata[];
void gpuopt_compiled_init(void **descriptors);
void gpuopt_compiled_forward(void **descriptors);
}

namespace rt = gpuopt::runtime;
using rt::Status;

namespace {

/// A ranked memref descriptor over a dense row-major float buffer.
class Descriptor {
public:
  explicit Descriptor(const std::vector<int64_t> &shape) {
    words.assign(3, 0);
    words.insert(words.end(), shape.begin(), shape.end());
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;)
      strides[i - 1] = strides[i] * shape[i];
    words.insert(words.end(), strides.begin(), strides.end());
  }
  void setData(const void *data) {
    int64_t address = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
    words[0] = words[1] = address;
  }
  void *get() { return words.data(); }

private:
  std::vector<int64_t> words;
};

enum class ArgKind { Input, Param, Derived };

struct Arg {
  ArgKind kind;
  size_t index;
  std::vector<int64_t> shape;
};

struct Function {
  std::vector<Arg> args;
  std::vector<std::vector<int64_t>> results;
};

struct Param {
  std::string name;
  std::vector<int64_t> shape;
};

/// The parsed GPUOPT_COMPILED_METADATA.
struct Metadata {
  std::string cpu;
  std::vector<std::string> cpuFeatures;
  std::vector<Param> params;
  Function init, forward;
  std::vector<std::vector<int64_t>> inputs;
};

Status metadataError(const std::string &what) {
  return Status::error("corrupt model metadata: " + what);
}

Status parseShape(const rt::json::Value *v, std::vector<int64_t> &shape) {
  if (!v || v->kind != rt::json::Kind::Array)
    return metadataError("expected a shape");
  shape.clear();
  for (const rt::json::Value &dim : v->elements) {
    int64_t d = 0;
    if (!dim.getInt64(d) || d < 0)
      return metadataError("bad dimension");
    shape.push_back(d);
  }
  return Status::ok();
}

Status parseFunction(const rt::json::Value *v, Function &fn) {
  if (!v || v->kind != rt::json::Kind::Object)
    return metadataError("expected a function");
  const rt::json::Value *args = v->find("args");
  const rt::json::Value *results = v->find("results");
  if (!args || args->kind != rt::json::Kind::Array || !results ||
      results->kind != rt::json::Kind::Array)
    return metadataError("expected 'args' and 'results'");
  for (const rt::json::Value &a : args->elements) {
    const rt::json::Value *kind = a.find("kind");
    const rt::json::Value *index = a.find("index");
    Arg arg;
    uint64_t i = 0;
    if (!kind || kind->kind != rt::json::Kind::String || !index ||
        !index->getUInt64(i))
      return metadataError("bad argument");
    if (kind->string == "input")
      arg.kind = ArgKind::Input;
    else if (kind->string == "param")
      arg.kind = ArgKind::Param;
    else if (kind->string == "derived")
      arg.kind = ArgKind::Derived;
    else
      return metadataError("argument kind '" + kind->string + "'");
    arg.index = i;
    if (Status s = parseShape(a.find("shape"), arg.shape); !s)
      return s;
    fn.args.push_back(std::move(arg));
  }
  for (const rt::json::Value &r : results->elements) {
    fn.results.emplace_back();
    if (Status s = parseShape(&r, fn.results.back()); !s)
      return s;
  }
  return Status::ok();
}

Status parseMetadata(Metadata &md) {
  rt::json::Value root;
  if (Status s = rt::json::parse(gpuopt_compiled_metadata,
                                 std::strlen(gpuopt_compiled_metadata), root);
      !s)
    return metadataError(s.message());
  int64_t version = 0;
  const rt::json::Value *v = root.find("version");
  if (!v || !v->getInt64(version) ||
      version != GPUOPT_COMPILED_METADATA_VERSION)
    return metadataError("unsupported version");
  if (const rt::json::Value *cpu = root.find("cpu");
      cpu && cpu->kind == rt::json::Kind::String)
    md.cpu = cpu->string;
  if (const rt::json::Value *features = root.find("cpu_features")) {
    if (features->kind != rt::json::Kind::Array)
      return metadataError("expected 'cpu_features' to be an array");
    for (const rt::json::Value &f : features->elements) {
      if (f.kind != rt::json::Kind::String)
        return metadataError("expected CPU feature names");
      md.cpuFeatures.push_back(f.string);
    }
  }
  const rt::json::Value *params = root.find("params");
  if (!params || params->kind != rt::json::Kind::Array)
    return metadataError("expected 'params'");
  for (const rt::json::Value &p : params->elements) {
    const rt::json::Value *name = p.find("name");
    if (!name || name->kind != rt::json::Kind::String)
      return metadataError("parameter without a name");
    Param param{name->string, {}};
    if (Status s = parseShape(p.find("shape"), param.shape); !s)
      return s;
    md.params.push_back(std::move(param));
  }
  if (Status s = parseFunction(root.find("init"), md.init); !s)
    return s;
  if (Status s = parseFunction(root.find("forward"), md.forward); !s)
    return s;
  // Cross-check the indices so that binding can index without checks.
  for (const Function *fn : {&md.init, &md.forward}) {
    for (const Arg &arg : fn->args) {
      if (arg.kind == ArgKind::Param &&
          (arg.index >= md.params.size() ||
           md.params[arg.index].shape != arg.shape))
        return metadataError("bad parameter index");
      if (arg.kind == ArgKind::Derived &&
          (fn == &md.init || arg.index >= md.init.results.size() ||
           md.init.results[arg.index] != arg.shape))
        return metadataError("bad initializer result index");
      if (arg.kind == ArgKind::Input) {
        if (fn == &md.init)
          return metadataError("the initializer takes an input");
        if (md.inputs.size() <= arg.index)
          md.inputs.resize(arg.index + 1);
        md.inputs[arg.index] = arg.shape;
      }
    }
  }
  return Status::ok();
}

/// Whether this CPU has x86 extension `name` (one of the names gpuopt-compile
/// records); std::nullopt for a name this runtime cannot test.
std::optional<bool> cpuHas(const std::string &name) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  static const std::pair<const char *, bool> table[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2")},
      {"avx", __builtin_cpu_supports("avx")},
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"bmi", __builtin_cpu_supports("bmi")},
      {"bmi2", __builtin_cpu_supports("bmi2")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512dq", __builtin_cpu_supports("avx512dq")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")},
      {"avx512cd", __builtin_cpu_supports("avx512cd")},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni")},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16")}};
  for (const auto &[feature, present] : table)
    if (name == feature)
      return present;
#endif
  return std::nullopt;
}

/// The library's code uses every recorded extension: refuse to run it on a
/// CPU without one (it would die with SIGILL).
Status checkCpu(const Metadata &md) {
  for (const std::string &feature : md.cpuFeatures) {
    std::optional<bool> has = cpuHas(feature);
    if (!has)
      return Status::error("the model library needs CPU feature '" + feature +
                           "', which this runtime cannot check");
    if (!*has)
      return Status::error(
          "the model library was compiled for a CPU with '" + feature + "' (" +
          (md.cpu.empty() ? std::string("unknown") : md.cpu) +
          "); this CPU does not have it: compile the model on this machine");
  }
  return Status::ok();
}

/// The metadata, parsed once per library.
const Metadata *getMetadata(Status &status) {
  static Metadata md;
  static Status parsed = parseMetadata(md);
  status = parsed;
  return parsed ? &md : nullptr;
}

void setError(char *err, size_t errlen, const std::string &message) {
  if (err && errlen > 0)
    std::snprintf(err, errlen, "%s", message.c_str());
}

size_t numElements(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

} // namespace

struct gpuopt_model {
  const Metadata *md = nullptr;
  /// Parameters the forward function reads, by index into md->params.
  std::vector<rt::HostTensor> params;
  /// Results of the initializer.
  std::vector<std::vector<float>> derived;
  /// Descriptors of the forward function's arguments and results.
  std::vector<Descriptor> descriptors;
  std::vector<void *> pointers;
  /// Serialises gpuopt_model_run: the descriptors are shared by every call
  /// (callers such as Python's ctypes release their own lock around it).
  std::mutex runMutex;
};

namespace {

/// Binds the weights file to md.params (in `model->params`).
Status bindWeights(const Metadata &md, const char *path, bool strict,
                   gpuopt_model &model) {
  rt::SafetensorsFile file;
  if (Status s = rt::readSafetensors(path, file); !s)
    return s;
  std::string where = path;
  model.params.resize(md.params.size());
  for (size_t i = 0; i < md.params.size(); ++i) {
    const Param &p = md.params[i];
    auto it = file.tensors.find(p.name);
    if (it == file.tensors.end())
      return Status::error(where + ": parameter '" + p.name +
                           "' is missing (the model has " +
                           std::to_string(md.params.size()) + " parameters)");
    rt::HostTensor &t = it->second;
    if (t.dtype != rt::DType::F32)
      return Status::error(where + ": parameter '" + p.name + "' is " +
                           rt::dtypeName(t.dtype) +
                           "; compiled models take F32");
    if (t.shape != p.shape)
      return Status::error(where + ": parameter '" + p.name + "' has shape " +
                           rt::formatShape(t.shape) + ", the model expects " +
                           rt::formatShape(p.shape));
    model.params[i] = std::move(t);
    file.tensors.erase(it);
  }
  if (strict && !file.tensors.empty()) {
    std::string names;
    size_t shown = 0;
    for (const auto &entry : file.tensors) {
      if (shown++ == 3) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "'" : ", '") + entry.first + "'";
    }
    return Status::error(where + ": " + std::to_string(file.tensors.size()) +
                         " tensor(s) are not used by the model (" + names +
                         ")");
  }
  return Status::ok();
}

/// Runs the initializer and prepares the forward function's descriptors.
Status initialize(const Metadata &md, gpuopt_model &model) {
  std::vector<Descriptor> initDescriptors;
  for (const Arg &arg : md.init.args) {
    initDescriptors.emplace_back(arg.shape);
    initDescriptors.back().setData(model.params[arg.index].data.data());
  }
  for (const std::vector<int64_t> &shape : md.init.results) {
    model.derived.emplace_back(numElements(shape));
    initDescriptors.emplace_back(shape);
    initDescriptors.back().setData(model.derived.back().data());
  }
  std::vector<void *> initPointers;
  for (Descriptor &d : initDescriptors)
    initPointers.push_back(d.get());
  if (std::string error;
      !rt::callGenerated(gpuopt_compiled_init, initPointers.data(), error))
    return Status::error("the load-time initializer failed: " + error);

  // Parameters only the initializer read are not needed any more.
  std::vector<bool> used(md.params.size(), false);
  for (const Arg &arg : md.forward.args)
    if (arg.kind == ArgKind::Param)
      used[arg.index] = true;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      model.params[i] = rt::HostTensor();

  for (const Arg &arg : md.forward.args) {
    model.descriptors.emplace_back(arg.shape);
    if (arg.kind == ArgKind::Param)
      model.descriptors.back().setData(model.params[arg.index].data.data());
    else if (arg.kind == ArgKind::Derived)
      model.descriptors.back().setData(model.derived[arg.index].data());
  }
  for (const std::vector<int64_t> &shape : md.forward.results)
    model.descriptors.emplace_back(shape);
  for (Descriptor &d : model.descriptors)
    model.pointers.push_back(d.get());
  return Status::ok();
}

int getShape(const std::vector<std::vector<int64_t>> &shapes, int index,
             int64_t *shape) {
  if (index < 0 || static_cast<size_t>(index) >= shapes.size())
    return -1;
  const std::vector<int64_t> &s = shapes[index];
  if (shape)
    std::copy(s.begin(), s.end(), shape);
  return static_cast<int>(s.size());
}

} // namespace

extern "C" {

int gpuopt_model_abi_version(void) { return GPUOPT_MODEL_ABI_VERSION; }

gpuopt_model *gpuopt_model_create(const char *weights_path, int strict,
                                  char *err, size_t errlen) {
  Status status;
  const Metadata *md = getMetadata(status);
  if (!md) {
    setError(err, errlen, status.message());
    return nullptr;
  }
  if (Status s = checkCpu(*md); !s) {
    setError(err, errlen, s.message());
    return nullptr;
  }
  if (!weights_path && !md->params.empty()) {
    setError(err, errlen,
             "the model has " + std::to_string(md->params.size()) +
                 " parameters; no weights file given");
    return nullptr;
  }
  std::unique_ptr<gpuopt_model> model(new (std::nothrow) gpuopt_model);
  if (!model) {
    setError(err, errlen, "out of memory");
    return nullptr;
  }
  model->md = md;
  // Nothing may escape the C ABI: an allocation failure or a thread that
  // cannot start is an error message, not std::terminate (nor the abort of
  // LLVM's new-handler in a tool that loads the library).
  try {
    rt::BadAllocScope throwing;
    if (Status s = weights_path
                       ? bindWeights(*md, weights_path, strict != 0, *model)
                       : Status::ok();
        !s) {
      setError(err, errlen, s.message());
      return nullptr;
    }
    if (Status s = initialize(*md, *model); !s) {
      setError(err, errlen, s.message());
      return nullptr;
    }
  } catch (const std::exception &e) {
    setError(err, errlen, std::string("gpuopt_model_create: ") + e.what());
    return nullptr;
  }
  return model.release();
}

void gpuopt_model_destroy(gpuopt_model *model) { delete model; }

int gpuopt_model_num_inputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->md->inputs.size()) : -1;
}

int gpuopt_model_num_outputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->md->forward.results.size()) : -1;
}

int gpuopt_model_input_shape(const gpuopt_model *model, int index,
                             int64_t *shape) {
  return model ? getShape(model->md->inputs, index, shape) : -1;
}

int gpuopt_model_output_shape(const gpuopt_model *model, int index,
                              int64_t *shape) {
  return model ? getShape(model->md->forward.results, index, shape) : -1;
}

int gpuopt_model_run(gpuopt_model *model, const float *const *inputs,
                     float *const *outputs, char *err, size_t errlen) {
  if (!model) {
    setError(err, errlen, "gpuopt_model_run: model is NULL");
    return 1;
  }
  const Metadata &md = *model->md;
  size_t numInputs = md.inputs.size(), numOutputs = md.forward.results.size();
  if ((numInputs && !inputs) || (numOutputs && !outputs)) {
    setError(err, errlen, "gpuopt_model_run: inputs or outputs is NULL");
    return 1;
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!inputs[i]) {
      setError(err, errlen,
               "gpuopt_model_run: input " + std::to_string(i) + " is NULL");
      return 1;
    }
  for (size_t i = 0; i < numOutputs; ++i)
    if (!outputs[i]) {
      setError(err, errlen,
               "gpuopt_model_run: output " + std::to_string(i) + " is NULL");
      return 1;
    }
  std::lock_guard<std::mutex> lock(model->runMutex);
  for (size_t i = 0; i < md.forward.args.size(); ++i)
    if (md.forward.args[i].kind == ArgKind::Input)
      model->descriptors[i].setData(inputs[md.forward.args[i].index]);
  size_t numArgs = md.forward.args.size();
  for (size_t i = 0; i < numOutputs; ++i)
    model->descriptors[numArgs + i].setData(outputs[i]);
  try {
    if (std::string error; !rt::callGenerated(gpuopt_compiled_forward,
                                              model->pointers.data(), error)) {
      setError(err, errlen, "gpuopt_model_run: " + error);
      return 1;
    }
  } catch (const std::exception &e) {
    setError(err, errlen, std::string("gpuopt_model_run: ") + e.what());
    return 1;
  }
  return 0;
}

} // extern "C"
