//===- CudaLibrariesMissing.cpp - a runtime built without cuDNN headers ---===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// CudaLibraries.h for a CUDA runtime built where cudnn.h or cublasLt.h was
// not found (runtime/cuda/CMakeLists.txt): plans without Library steps run
// as before; one with a Library step is refused at load, naming it.
//
//===----------------------------------------------------------------------===//

#include "CudaLibraries.h"

using namespace gpuopt::runtime;

const char gpuopt::runtime::kVendorLibraryMissing[] =
    "cannot load the vendor library";

struct CudaLibrarySteps::Call {};
struct CudaLibrarySteps::Handles {};

CudaLibrarySteps::~CudaLibrarySteps() = default;

static Status unavailable(const std::string &neededBy, const char *what) {
  return Status::error(neededBy + " needs " + what + ": " +
                       kVendorLibraryMissing +
                       ": this runtime was built without the cuDNN/cuBLASLt "
                       "headers (configure with -DGPUOPT_CUDNN_INCLUDE_DIR="
                       "DIR and -DGPUOPT_CUBLASLT_INCLUDE_DIR=DIR)");
}

Status gpuopt::runtime::openCudnn(const std::string &neededBy) {
  return unavailable(neededBy, "cuDNN");
}

Status gpuopt::runtime::openCublasLt(const std::string &neededBy) {
  return unavailable(neededBy, "cuBLASLt");
}

size_t gpuopt::runtime::cudnnVersion() { return 0; }
size_t gpuopt::runtime::cublasLtVersion() { return 0; }

Status CudaLibrarySteps::prepare(const CudaArtifact &art,
                                 std::unique_ptr<CudaLibrarySteps> &) {
  for (const char *plan : {"init", "run"}) {
    const std::vector<CudaStep> &steps = plan[0] == 'i' ? art.init : art.run;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].isLibrary)
        continue;
      LibraryCallPlan p;
      if (Status s = describeLibraryStep(art, plan, i, p); !s)
        return s;
      return p.needsCudnn() ? openCudnn(p.where) : openCublasLt(p.where);
    }
  }
  return Status::ok();
}

// Unreachable: prepare never creates steps.
Status CudaLibrarySteps::buildDescriptors() {
  return Status::error("no vendor libraries in this runtime");
}
Status CudaLibrarySteps::load(CUstream, CUdeviceptr, const CudaLibraryMemory &,
                              const CudaLibraryOptions &) {
  return buildDescriptors();
}
Status CudaLibrarySteps::enqueue(const char *, size_t) {
  return buildDescriptors();
}
const LibraryCallPlan *CudaLibrarySteps::plan(const char *, size_t) const {
  return nullptr;
}
