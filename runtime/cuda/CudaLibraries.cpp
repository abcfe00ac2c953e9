//===- CudaLibraries.cpp - cuDNN and cuBLASLt for Library steps -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// cuDNN 9's legacy convolution API and cuBLASLt, resolved with dlopen/dlsym
// (the headers give the types: `decltype(&cudnnConvolutionForward)`), so
// the runtime links without them and a plan without Library steps never
// opens them. Every call is checked and reported with its name, the
// library's status string and the step. Written from the headers and the
// vendors' documentation without a GPU to run it on: see docs/CUDABackend.md
// "Vendor libraries" for what is unverified.
//
//===----------------------------------------------------------------------===//

#include "CudaLibraries.h"

#include <cublasLt.h>
#include <cudnn.h>
#include <dlfcn.h>

#if CUDNN_MAJOR != 9
#error "the library route is written against cuDNN 9's headers"
#endif

#include <algorithm>
#include <cstdlib>
#include <mutex>

using namespace gpuopt::runtime;

const char gpuopt::runtime::kVendorLibraryMissing[] =
    "cannot load the vendor library";

namespace {

#define GPUOPT_LIB_STR2(x) #x
#define GPUOPT_LIB_STR(x) GPUOPT_LIB_STR2(x)

// Every cuDNN function the runtime calls.
#define GPUOPT_CUDNN_FUNCTIONS(X)                                              \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnSetTensor4dDescriptorEx)                                              \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnGetConvolution2dForwardOutputDim)                                     \
  X(cudnnCreateActivationDescriptor)                                           \
  X(cudnnSetActivationDescriptor)                                              \
  X(cudnnDestroyActivationDescriptor)                                          \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)                               \
  X(cudnnFindConvolutionForwardAlgorithmEx)                                    \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)                          \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)                               \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnConvolutionBiasActivationForward)                                     \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnAddTensor)                                                            \
  X(cudnnActivationForward)                                                    \
  X(cudnnTransformTensor)

// Every cuBLASLt function the runtime calls.
#define GPUOPT_CUBLASLT_FUNCTIONS(X)                                           \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

#define GPUOPT_LIB_FIELD(name) decltype(&::name) name = nullptr;
struct CudnnApi {
  GPUOPT_CUDNN_FUNCTIONS(GPUOPT_LIB_FIELD)
};
struct CublasLtApi {
  GPUOPT_CUBLASLT_FUNCTIONS(GPUOPT_LIB_FIELD)
};
#undef GPUOPT_LIB_FIELD

/// One library, opened once per process.
template <typename Api> struct Opened {
  std::once_flag once;
  Api api;
  std::string error;
  bool ok = false;
};

Opened<CudnnApi> cudnnLib;
Opened<CublasLtApi> cublasLtLib;

/// dlopen of the first of `names` that loads; `tried` lists each with its
/// dlerror.
void *openFirst(const std::vector<std::string> &names, std::string &tried) {
  for (const std::string &name : names) {
    if (void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return lib;
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " +
             (why ? why : "unknown reason");
  }
  return nullptr;
}

/// The path in `env` when set (alone: an explicit choice that fails is an
/// error, not a silent fallback to another copy), else `names`.
std::vector<std::string> candidates(const char *env,
                                    std::vector<std::string> names) {
  const char *given = std::getenv(env);
  if (given && *given)
    return {given};
  return names;
}

const CudnnApi &cudnnApi() { return cudnnLib.api; }
const CublasLtApi &ltApi() { return cublasLtLib.api; }

Status cudnnFailure(const std::string &where, const char *call,
                    cudnnStatus_t status) {
  const char *text = cudnnApi().cudnnGetErrorString
                         ? cudnnApi().cudnnGetErrorString(status)
                         : nullptr;
  return Status::error(
      where + ": " + call + " failed: " +
      (text ? text : "cuDNN status " + std::to_string(int(status))));
}

Status cublasLtFailure(const std::string &where, const char *call,
                       cublasStatus_t status) {
  const char *name = ltApi().cublasLtGetStatusName
                         ? ltApi().cublasLtGetStatusName(status)
                         : nullptr;
  return Status::error(
      where + ": " + call + " failed: " +
      (name ? name : "cuBLAS status " + std::to_string(int(status))));
}

} // namespace

// `where` names the step in every message.
#define CUDNN_CHECK(name, ...)                                                 \
  do {                                                                         \
    cudnnStatus_t cudnnStatus = cudnnApi().name(__VA_ARGS__);                  \
    if (cudnnStatus != CUDNN_STATUS_SUCCESS)                                   \
      return cudnnFailure(where, #name, cudnnStatus);                          \
  } while (0)

#define CUBLASLT_CHECK(name, ...)                                              \
  do {                                                                         \
    cublasStatus_t ltStatus = ltApi().name(__VA_ARGS__);                       \
    if (ltStatus != CUBLAS_STATUS_SUCCESS)                                     \
      return cublasLtFailure(where, #name, ltStatus);                          \
  } while (0)

namespace {

/// Resolves `fn` as `name` of `lib` unless an earlier symbol was missing.
template <typename Fn>
void resolveSymbol(void *lib, const char *name, Fn &fn,
                   const std::string &library, std::string &error) {
  if (!error.empty())
    return;
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn)
    error =
        std::string(kVendorLibraryMissing) + " " + library + " lacks " + name;
}

/// Opens `what` (the first of `env`'s path or `names` that loads) once;
/// `resolveAll(lib, library)` then resolves its functions; the version
/// check comes after. On failure `state.error` says what was tried and
/// `hint` how to help it.
template <typename State, typename Resolve>
void openVendorLibrary(State &state, const char *what, const char *env,
                       std::vector<std::string> names, const char *hint,
                       Resolve resolveAll) {
  std::call_once(state.once, [&] {
    std::string tried;
    names = candidates(env, std::move(names));
    void *lib = openFirst(names, tried);
    if (!lib) {
      state.error = std::string(kVendorLibraryMissing) + " " + what +
                    " (tried " + tried + "); set " + env + " to " + hint +
                    " or add its directory to LD_LIBRARY_PATH";
      return;
    }
    resolveAll(lib, std::string(what) + ": " + names.front());
    state.ok = state.error.empty();
  });
}

} // namespace

Status gpuopt::runtime::openCudnn(const std::string &neededBy) {
  openVendorLibrary(
      cudnnLib, "cuDNN 9", "GPUOPT_CUDNN_LIBRARY", {"libcudnn.so.9"},
      "libcudnn.so.9 (PyTorch's wheel ships it under "
      "site-packages/nvidia/cudnn/lib)",
      [](void *lib, const std::string &library) {
        CudnnApi &api = cudnnLib.api;
#define GPUOPT_LIB_LOAD(name)                                                  \
  resolveSymbol(lib, GPUOPT_LIB_STR(name), api.name, library, cudnnLib.error);
        GPUOPT_CUDNN_FUNCTIONS(GPUOPT_LIB_LOAD)
#undef GPUOPT_LIB_LOAD
        if (cudnnLib.error.empty() && api.cudnnGetVersion() / 10000 != 9)
          cudnnLib.error = std::string(kVendorLibraryMissing) +
                           " cuDNN 9: the library loaded is version " +
                           std::to_string(api.cudnnGetVersion());
      });
  if (!cudnnLib.ok)
    return Status::error(neededBy + " needs cuDNN: " + cudnnLib.error);
  return Status::ok();
}

Status gpuopt::runtime::openCublasLt(const std::string &neededBy) {
  openVendorLibrary(
      cublasLtLib, "cuBLASLt", "GPUOPT_CUBLASLT_LIBRARY",
      {"libcublasLt.so.13", "libcublasLt.so.12"},
      "libcublasLt.so.* (PyTorch's wheel ships it under "
      "site-packages/nvidia/cublas/lib or nvidia/cu13/lib)",
      [](void *lib, const std::string &library) {
        CublasLtApi &api = cublasLtLib.api;
#define GPUOPT_LIB_LOAD(name)                                                  \
  resolveSymbol(lib, GPUOPT_LIB_STR(name), api.name, library,                  \
                cublasLtLib.error);
        GPUOPT_CUBLASLT_FUNCTIONS(GPUOPT_LIB_LOAD)
#undef GPUOPT_LIB_LOAD
        if (cublasLtLib.error.empty() && api.cublasLtGetVersion() < 120000)
          cublasLtLib.error =
              std::string(kVendorLibraryMissing) +
              " cuBLASLt 12 or 13: the library loaded is version " +
              std::to_string(api.cublasLtGetVersion());
      });
  if (!cublasLtLib.ok)
    return Status::error(neededBy + " needs cuBLASLt: " + cublasLtLib.error);
  return Status::ok();
}

size_t gpuopt::runtime::cudnnVersion() {
  return cudnnLib.ok ? cudnnApi().cudnnGetVersion() : 0;
}

size_t gpuopt::runtime::cublasLtVersion() {
  return cublasLtLib.ok ? ltApi().cublasLtGetVersion() : 0;
}

//===----------------------------------------------------------------------===//
// One step's descriptors and algorithm
//===----------------------------------------------------------------------===//

struct CudaLibrarySteps::Call {
  LibraryCallPlan plan;
  /// The sequence in use: plan.ops, or plan.fallback once cuDNN refused
  /// the fused call.
  std::vector<LibraryOp> ops;

  // cuDNN: the packed tensors the convolution reads and writes, the
  // strided views staged from/to, the residual's view, the bias.
  cudnnTensorDescriptor_t xPacked = nullptr, xView = nullptr, yPacked = nullptr,
                          yView = nullptr, residual = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  cudnnConvolutionFwdAlgo_t fwdAlgo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwdAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t algoBytes = 0;

  // cuBLASLt.
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};

  // Device addresses, set at load.
  CUdeviceptr x = 0, y = 0, w = 0, biasPtr = 0, residualPtr = 0;
  CUdeviceptr xStage = 0, yStage = 0;

  ~Call() {
    if (cudnnLib.ok) {
      for (cudnnTensorDescriptor_t t :
           {xPacked, xView, yPacked, yView, residual, bias})
        if (t)
          cudnnApi().cudnnDestroyTensorDescriptor(t);
      if (filter)
        cudnnApi().cudnnDestroyFilterDescriptor(filter);
      if (conv)
        cudnnApi().cudnnDestroyConvolutionDescriptor(conv);
      if (relu)
        cudnnApi().cudnnDestroyActivationDescriptor(relu);
    }
    if (cublasLtLib.ok) {
      for (cublasLtMatrixLayout_t l : {a, b, d})
        if (l)
          ltApi().cublasLtMatrixLayoutDestroy(l);
      if (matmul)
        ltApi().cublasLtMatmulDescDestroy(matmul);
    }
  }

  Status tensor(cudnnTensorDescriptor_t &desc, const int64_t *dims,
                const int64_t *strides) {
    const std::string &where = plan.where;
    CUDNN_CHECK(cudnnCreateTensorDescriptor, &desc);
    CUDNN_CHECK(cudnnSetTensor4dDescriptorEx, desc, CUDNN_DATA_FLOAT,
                int(dims[0]), int(dims[1]), int(dims[2]), int(dims[3]),
                int(strides[0]), int(strides[1]), int(strides[2]),
                int(strides[3]));
    return Status::ok();
  }

  static void packed(const int64_t *d, int64_t *s) {
    s[3] = 1;
    s[2] = d[3];
    s[1] = d[2] * d[3];
    s[0] = d[1] * d[2] * d[3];
  }

  Status convDescriptors() {
    const LibraryCallPlan &p = plan;
    const std::string &where = p.where;
    int64_t xs[4], ys[4];
    packed(p.in.dims, xs);
    packed(p.out.dims, ys);
    if (Status s = tensor(xPacked, p.in.dims, xs); !s)
      return s;
    if (Status s = tensor(yPacked, p.out.dims, ys); !s)
      return s;
    if (!p.in.packed)
      if (Status s = tensor(xView, p.in.dims, p.in.strides); !s)
        return s;
    if (!p.out.packed)
      if (Status s = tensor(yView, p.out.dims, p.out.strides); !s)
        return s;
    if (p.hasResidual)
      if (Status s = tensor(residual, p.residual.dims, p.residual.strides); !s)
        return s;
    if (p.hasBias) {
      int64_t bd[4] = {1, p.biasSize, 1, 1}, bs[4] = {p.biasSize, 1, 1, 1};
      if (Status s = tensor(bias, bd, bs); !s)
        return s;
    }
    CUDNN_CHECK(cudnnCreateFilterDescriptor, &filter);
    CUDNN_CHECK(cudnnSetFilter4dDescriptor, filter, CUDNN_DATA_FLOAT,
                CUDNN_TENSOR_NCHW, int(p.filter[0]), int(p.filter[1]),
                int(p.filter[2]), int(p.filter[3]));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor, &conv);
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor, conv, int(p.pad[0]),
                int(p.pad[1]), int(p.stride[0]), int(p.stride[1]),
                int(p.dilation[0]), int(p.dilation[1]), CUDNN_CROSS_CORRELATION,
                CUDNN_DATA_FLOAT);
    CUDNN_CHECK(cudnnSetConvolutionGroupCount, conv, int(p.groups));
    // FP32 strict: FMA kernels only (CUDNN_DEFAULT_MATH may pick TF32
    // tensor cores on Ampere and later); TF32: tensor cores allowed.
    CUDNN_CHECK(cudnnSetConvolutionMathType, conv,
                p.precision == CudaPrecision::TF32 ? CUDNN_TENSOR_OP_MATH
                                                   : CUDNN_FMA_MATH);
    if (p.relu) {
      CUDNN_CHECK(cudnnCreateActivationDescriptor, &relu);
      // NaN propagates, as through the CPU kernel's and PyTorch's ReLU.
      CUDNN_CHECK(cudnnSetActivationDescriptor, relu, CUDNN_ACTIVATION_RELU,
                  CUDNN_PROPAGATE_NAN, 0.0);
    }
    // cuDNN's own output size of the forward convolution must be the
    // plan's: out for conv2d, in for conv_transpose2d (whose forward maps
    // out to in).
    bool forward = p.routine == LibraryRoutine::Conv2d;
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim, conv,
                forward ? xPacked : yPacked, filter, &n, &c, &h, &w);
    const int64_t *want = forward ? p.out.dims : p.in.dims;
    if (n != want[0] || c != want[1] || h != want[2] || w != want[3])
      return Status::error(
          where + ": cuDNN computes a " + std::to_string(n) + "x" +
          std::to_string(c) + "x" + std::to_string(h) + "x" +
          std::to_string(w) + " convolution output where the step has " +
          std::to_string(want[0]) + "x" + std::to_string(want[1]) + "x" +
          std::to_string(want[2]) + "x" + std::to_string(want[3]));
    return Status::ok();
  }

  Status layout(cublasLtMatrixLayout_t &l, const LibraryMatrix &m) {
    const std::string &where = plan.where;
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate, &l, CUDA_R_32F, uint64_t(m.rows),
                   uint64_t(m.cols), m.ld);
    return Status::ok();
  }

  Status matmulDescriptors() {
    const LibraryCallPlan &p = plan;
    const std::string &where = p.where;
    CUBLASLT_CHECK(cublasLtMatmulDescCreate, &matmul,
                   p.precision == CudaPrecision::TF32
                       ? CUBLAS_COMPUTE_32F_FAST_TF32
                       : CUBLAS_COMPUTE_32F,
                   CUDA_R_32F);
    cublasOperation_t ta = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N,
                      tb = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute, matmul,
                   CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute, matmul,
                   CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
    cublasLtEpilogue_t epilogue =
        p.hasBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute, matmul,
                   CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
    if (Status s = layout(a, p.a); !s)
      return s;
    if (Status s = layout(b, p.b); !s)
      return s;
    return layout(d, p.d);
  }
};

struct CudaLibrarySteps::Handles {
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  CudaLibraryMemory mem;
  CUdeviceptr workspace = 0, scratch = 0;
  CUstream stream = nullptr;

  ~Handles() {
    // Best effort, as the driver's releases in CudaModel.
    if (cudnn)
      cudnnApi().cudnnDestroy(cudnn);
    if (lt)
      ltApi().cublasLtDestroy(lt);
    if (workspace)
      mem.free(workspace);
    if (scratch)
      mem.free(scratch);
  }
};

CudaLibrarySteps::~CudaLibrarySteps() {
  // The descriptors go before the handles.
  init.clear();
  run_.clear();
  handles.reset();
}

Status CudaLibrarySteps::prepare(const CudaArtifact &art,
                                 std::unique_ptr<CudaLibrarySteps> &out) {
  std::unique_ptr<CudaLibrarySteps> l(new CudaLibrarySteps());
  l->art = &art;
  bool any = false;
  for (const char *plan : {"init", "run"}) {
    const std::vector<CudaStep> &steps = plan[0] == 'i' ? art.init : art.run;
    std::vector<std::unique_ptr<Call>> &calls =
        plan[0] == 'i' ? l->init : l->run_;
    calls.resize(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].isLibrary)
        continue;
      any = true;
      auto c = std::make_unique<Call>();
      if (Status s = describeLibraryStep(art, plan, i, c->plan); !s)
        return s;
      c->ops = c->plan.ops;
      if (c->plan.needsCudnn() && !l->cudnnNeeded) {
        if (Status s = openCudnn(c->plan.where); !s)
          return s;
        l->cudnnNeeded = true;
      }
      if (c->plan.needsCublasLt() && !l->cublasLtNeeded) {
        if (Status s = openCublasLt(c->plan.where); !s)
          return s;
        l->cublasLtNeeded = true;
      }
      calls[i] = std::move(c);
    }
  }
  if (any)
    out = std::move(l);
  return Status::ok();
}

const LibraryCallPlan *CudaLibrarySteps::plan(const char *plan,
                                              size_t index) const {
  const std::vector<std::unique_ptr<Call>> &calls =
      plan[0] == 'i' ? init : run_;
  return index < calls.size() && calls[index] ? &calls[index]->plan : nullptr;
}

Status CudaLibrarySteps::buildDescriptors() {
  if (descriptorsBuilt)
    return Status::ok();
  descriptorsBuilt = true;
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &c : *calls) {
      if (!c)
        continue;
      Status s =
          c->plan.needsCudnn() ? c->convDescriptors() : c->matmulDescriptors();
      if (!s)
        return s;
    }
  return Status::ok();
}

namespace {

/// The math a found algorithm may report at `precision`: strict FP32 no
/// tensor-op math (the descriptor stays CUDNN_FMA_MATH, which is what the
/// calls run with); TF32 anything but down-conversion to FP16/BF16.
bool mathFits(cudnnMathType_t math, CudaPrecision precision) {
  if (precision == CudaPrecision::FP32)
    return math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
  return math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/// The math type the calls run with once `math` was chosen: FP32 keeps
/// CUDNN_FMA_MATH (CUDNN_DEFAULT_MATH may use TF32 tensor cores on Ampere
/// and later); TF32 takes the chosen algorithm's.
cudnnMathType_t runMath(cudnnMathType_t math, CudaPrecision precision) {
  return precision == CudaPrecision::FP32 ? CUDNN_FMA_MATH : math;
}

/// The first (fastest) result that ran, fits the precision and the
/// workspace; `statuses` lists why the others did not.
template <typename Perf>
const Perf *pickAlgorithm(const std::vector<Perf> &results, int count,
                          CudaPrecision precision, uint64_t limit,
                          std::string &statuses) {
  for (int i = 0; i < count; ++i) {
    const Perf &r = results[i];
    if (r.status == CUDNN_STATUS_SUCCESS && mathFits(r.mathType, precision) &&
        r.memory <= limit)
      return &r;
    statuses += (statuses.empty() ? "" : ", ") + std::string("algo ") +
                std::to_string(int(r.algo)) + ": " +
                (r.status != CUDNN_STATUS_SUCCESS
                     ? cudnnApi().cudnnGetErrorString(r.status)
                 : !mathFits(r.mathType, precision)
                     ? "math type " + std::to_string(int(r.mathType)) +
                           " not allowed at this precision"
                     : std::to_string(r.memory) + " bytes of workspace");
  }
  return nullptr;
}

/// The workspace cudnnFind*AlgorithmEx may use per convolution.
constexpr uint64_t kFindWorkspaceBytes = 256ull << 20;
/// The workspace cuBLASLt's heuristic may ask for.
constexpr uint64_t kMatmulWorkspaceBytes = 32ull << 20;

} // namespace

Status CudaLibrarySteps::chooseAlgorithms(const CudaLibraryOptions &options,
                                          CUdeviceptr findSpace,
                                          uint64_t findBytes) {
  Handles &H = *handles;
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &cp : *calls) {
      if (!cp)
        continue;
      Call &c = *cp;
      const LibraryCallPlan &p = c.plan;
      const std::string &where = p.where;
      void *x = reinterpret_cast<void *>(c.plan.in.packed ? c.x : c.xStage);
      void *y = reinterpret_cast<void *>(c.plan.out.packed ? c.y : c.yStage);
      void *w = reinterpret_cast<void *>(c.w);
      std::string statuses;
      if (p.routine == LibraryRoutine::Conv2d) {
        int max = 0;
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount, H.cudnn, &max);
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max, 1));
        int count = 0;
        if (options.heuristics)
          CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7, H.cudnn,
                      c.xPacked, c.filter, c.conv, c.yPacked, int(perf.size()),
                      &count, perf.data());
        else
          CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx, H.cudnn,
                      c.xPacked, x, c.filter, w, c.conv, c.yPacked, y,
                      int(perf.size()), &count, perf.data(),
                      reinterpret_cast<void *>(findSpace), findBytes);
        const auto *r =
            pickAlgorithm(perf, count, p.precision, findBytes, statuses);
        if (!r)
          return Status::error(where + ": no cuDNN forward algorithm fits (" +
                               statuses + ")");
        c.fwdAlgo = r->algo;
        c.algoBytes = r->memory;
        CUDNN_CHECK(cudnnSetConvolutionMathType, c.conv,
                    runMath(r->mathType, p.precision));
      } else if (p.routine == LibraryRoutine::ConvTranspose2d) {
        int max = 0;
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount, H.cudnn,
                    &max);
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max, 1));
        int count = 0;
        // Backward data: dy = in (x here), dx = out (y here).
        if (options.heuristics)
          CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7, H.cudnn,
                      c.filter, c.xPacked, c.conv, c.yPacked, int(perf.size()),
                      &count, perf.data());
        else
          CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx, H.cudnn,
                      c.filter, w, c.xPacked, x, c.conv, c.yPacked, y,
                      int(perf.size()), &count, perf.data(),
                      reinterpret_cast<void *>(findSpace), findBytes);
        const auto *r =
            pickAlgorithm(perf, count, p.precision, findBytes, statuses);
        if (!r)
          return Status::error(where +
                               ": no cuDNN backward-data algorithm fits (" +
                               statuses + ")");
        c.bwdAlgo = r->algo;
        c.algoBytes = r->memory;
        CUDNN_CHECK(cudnnSetConvolutionMathType, c.conv,
                    runMath(r->mathType, p.precision));
      } else {
        cublasLtMatmulPreference_t pref = nullptr;
        CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate, &pref);
        struct Release {
          cublasLtMatmulPreference_t pref;
          ~Release() { ltApi().cublasLtMatmulPreferenceDestroy(pref); }
        } release{pref};
        uint64_t limit = kMatmulWorkspaceBytes;
        CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute, pref,
                       CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                       sizeof(limit));
        // The views' real alignment (the heuristic assumes 256 bytes).
        uint32_t align[4] = {p.a.alignment, p.b.alignment, p.d.alignment,
                             p.d.alignment};
        cublasLtMatmulPreferenceAttributes_t attrs[4] = {
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
            CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
        for (int i = 0; i < 4; ++i)
          CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute, pref, attrs[i],
                         &align[i], sizeof(align[i]));
        cublasLtMatmulHeuristicResult_t result{};
        int count = 0;
        CUBLASLT_CHECK(cublasLtMatmulAlgoGetHeuristic, H.lt, c.matmul, c.a, c.b,
                       c.d, c.d, pref, 1, &result, &count);
        if (count < 1 || result.state != CUBLAS_STATUS_SUCCESS)
          return Status::error(where +
                               ": cuBLASLt's heuristic returned no algorithm "
                               "for this GEMM");
        c.algo = result.algo;
        c.algoBytes = result.workspaceSize;
      }
      workspaceSize = std::max<uint64_t>(workspaceSize, c.algoBytes);
    }
  return Status::ok();
}

Status CudaLibrarySteps::load(CUstream stream, CUdeviceptr arena,
                              const CudaLibraryMemory &mem,
                              const CudaLibraryOptions &options) {
  handles = std::make_unique<Handles>();
  Handles &H = *handles;
  H.mem = mem;
  H.stream = stream;
  std::string where = "loading the vendor libraries";
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &c : *calls)
      if (c) {
        where = c->plan.where;
        break;
      }
  // cudaStream_t and CUstream are the same type (struct CUstream_st *).
  if (cudnnNeeded) {
    CUDNN_CHECK(cudnnCreate, &H.cudnn);
    CUDNN_CHECK(cudnnSetStream, H.cudnn, stream);
  }
  if (cublasLtNeeded)
    CUBLASLT_CHECK(cublasLtCreate, &H.lt);
  if (Status s = buildDescriptors(); !s)
    return s;

  // Device addresses and the staging scratch (one region, reused by every
  // step: they run one after another on the stream).
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &c : *calls)
      if (c)
        scratchSize = std::max(scratchSize, c->plan.scratchBytes());
  if (scratchSize)
    if (Status s = mem.alloc(scratchSize, H.scratch); !s)
      return Status::error(where + ": staging scratch of " +
                           std::to_string(scratchSize) +
                           " bytes: " + s.message());
  auto address = [&](unsigned buffer, int64_t offset) {
    return arena + art->buffers[buffer].offset + uint64_t(offset) * 4;
  };
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &cp : *calls) {
      if (!cp)
        continue;
      Call &c = *cp;
      const LibraryCallPlan &p = c.plan;
      if (p.routine == LibraryRoutine::Linear) {
        c.x = address(p.b.buffer, p.b.offset);
        c.w = address(p.a.buffer, p.a.offset);
        c.y = address(p.d.buffer, p.d.offset);
      } else {
        c.x = address(p.in.buffer, p.in.offset);
        c.y = address(p.out.buffer, p.out.offset);
        c.w = address(p.weightBuffer, p.weightOffset);
        if (p.hasResidual)
          c.residualPtr = address(p.residual.buffer, p.residual.offset);
        c.xStage = H.scratch;
        c.yStage =
            H.scratch + (uint64_t(p.stagedInElements) * 4 + 255) / 256 * 256;
      }
      if (p.hasBias)
        c.biasPtr = address(p.biasBuffer, p.biasOffset);
      if (p.routine == LibraryRoutine::Linear) {
        const std::string &where = p.where;
        const void *biasArg = reinterpret_cast<const void *>(c.biasPtr);
        if (p.hasBias)
          CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute, c.matmul,
                         CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasArg,
                         sizeof(biasArg));
      }
    }

  // Algorithms: Find runs each candidate on the real buffers with a
  // bounded workspace, freed before the one workspace is allocated.
  CUdeviceptr findSpace = 0;
  uint64_t findBytes = 0;
  if (cudnnNeeded && !options.heuristics) {
    findBytes = kFindWorkspaceBytes;
    if (Status s = mem.alloc(findBytes, findSpace); !s)
      return Status::error(where + ": workspace for cudnnFind*AlgorithmEx (" +
                           std::to_string(findBytes >> 20) +
                           " MiB): " + s.message());
  } else if (cudnnNeeded) {
    findBytes = kFindWorkspaceBytes;
  }
  Status chosen = chooseAlgorithms(options, findSpace, findBytes);
  if (findSpace)
    mem.free(findSpace);
  if (!chosen)
    return chosen;
  if (workspaceSize)
    if (Status s = mem.alloc(workspaceSize, H.workspace); !s)
      return Status::error(where + ": library workspace of " +
                           std::to_string(workspaceSize) +
                           " bytes: " + s.message());

  // One trial call of each step: a fused call cuDNN refuses falls back to
  // the unfused sequence; the libraries load their kernels now, not inside
  // a graph capture.
  for (auto *calls : {&init, &run_})
    for (std::unique_ptr<Call> &cp : *calls) {
      if (!cp)
        continue;
      Call &c = *cp;
      Status s = run(c, c.ops);
      if (!s && !c.plan.fallback.empty()) {
        c.ops = c.plan.fallback;
        s = run(c, c.ops);
      }
      if (!s)
        return s;
    }
  return Status::ok();
}

Status CudaLibrarySteps::enqueue(const char *plan, size_t index) {
  std::vector<std::unique_ptr<Call>> &calls = plan[0] == 'i' ? init : run_;
  if (index >= calls.size() || !calls[index])
    return Status::error(std::string(plan) + "[" + std::to_string(index) +
                         "] is not a Library step");
  return run(*calls[index], calls[index]->ops);
}

Status CudaLibrarySteps::run(Call &c, const std::vector<LibraryOp> &ops) {
  const LibraryCallPlan &p = c.plan;
  const std::string &where = p.where;
  Handles &H = *handles;
  const float one = 1, zero = 0, beta = p.convBeta;
  auto ptr = [](CUdeviceptr v) { return reinterpret_cast<void *>(v); };
  // The convolution's packed operands: the views or their scratch.
  void *x = ptr(p.in.packed ? c.x : c.xStage);
  void *y = ptr(p.out.packed ? c.y : c.yStage);
  void *ws = ptr(H.workspace);
  for (LibraryOp op : ops) {
    switch (op) {
    case LibraryOp::StageInput:
      CUDNN_CHECK(cudnnTransformTensor, H.cudnn, &one, c.xView, ptr(c.x), &zero,
                  c.xPacked, x);
      break;
    case LibraryOp::CopyResidual:
      CUDNN_CHECK(cudnnTransformTensor, H.cudnn, &one, c.residual,
                  ptr(c.residualPtr), &zero, c.yPacked, y);
      break;
    case LibraryOp::ConvForward:
      CUDNN_CHECK(cudnnConvolutionForward, H.cudnn, &one, c.xPacked, x,
                  c.filter, ptr(c.w), c.conv, c.fwdAlgo, ws, c.algoBytes, &beta,
                  c.yPacked, y);
      break;
    case LibraryOp::ConvBiasRelu:
      // y = relu(conv(x) + 0 * z + bias), z = y.
      CUDNN_CHECK(cudnnConvolutionBiasActivationForward, H.cudnn, &one,
                  c.xPacked, x, c.filter, ptr(c.w), c.conv, c.fwdAlgo, ws,
                  c.algoBytes, &zero, c.yPacked, y, c.bias, ptr(c.biasPtr),
                  c.relu, c.yPacked, y);
      break;
    case LibraryOp::ConvBackwardData:
      CUDNN_CHECK(cudnnConvolutionBackwardData, H.cudnn, &one, c.filter,
                  ptr(c.w), c.xPacked, x, c.conv, c.bwdAlgo, ws, c.algoBytes,
                  &zero, c.yPacked, y);
      break;
    case LibraryOp::AddBias:
      CUDNN_CHECK(cudnnAddTensor, H.cudnn, &one, c.bias, ptr(c.biasPtr), &one,
                  c.yPacked, y);
      break;
    case LibraryOp::Relu:
      CUDNN_CHECK(cudnnActivationForward, H.cudnn, c.relu, &one, c.yPacked, y,
                  &zero, c.yPacked, y);
      break;
    case LibraryOp::UnstageOutput:
      CUDNN_CHECK(cudnnTransformTensor, H.cudnn, &one, c.yPacked, y, &zero,
                  c.yView, ptr(c.y));
      break;
    case LibraryOp::Matmul:
      CUBLASLT_CHECK(cublasLtMatmul, H.lt, c.matmul, &one, ptr(c.w), c.a,
                     ptr(c.x), c.b, &zero, ptr(c.y), c.d, ptr(c.y), c.d,
                     &c.algo, ws, c.algoBytes, H.stream);
      break;
    }
  }
  return Status::ok();
}
