//===- CudaArtifactFuzzer.cpp - libFuzzer target: CUDA artifact reader ----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes as a whole CUDA artifact (a FlatBuffer of
// runtime/include/gpuopt/Runtime/Artifact.fbs, CudaArtifact.h) to
// parseCudaArtifact, which runs the schema verifier (verifyArtifact) before
// reading anything. Any outcome but an error naming the file or a plan whose
// launches the runtime may pass to the driver unchecked is a finding. The
// seeds (fuzz/seeds-cuda-artifact) are real artifacts of small models.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Runtime/CudaModel.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace gpuopt::runtime;

namespace {

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "accepted a plan with %s\n", what.c_str());
  std::abort();
}

void checkSteps(const CudaArtifact &art, const std::vector<CudaStep> &steps) {
  for (const CudaStep &s : steps) {
    if (s.kernel >= art.kernels.size())
      finding("a step of an unknown kernel");
    const CudaKernel &k = art.kernels[s.kernel];
    if (s.args.size() != k.args.size())
      finding("a launch of the wrong argument count for '" + k.name + "'");
    for (size_t a = 0; a < s.args.size(); ++a) {
      if (s.args[a] >= art.buffers.size())
        finding("an argument outside 'buffers'");
      const CudaBuffer &b = art.buffers[s.args[a]];
      if (b.dtype != k.args[a].dtype || b.bytes != k.args[a].bytes)
        finding("an argument that does not match the signature of '" + k.name +
                "'");
    }
    if (uint64_t(s.block[0]) * s.block[1] * s.block[2] > 1024)
      finding("more than 1024 threads per block");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy of exactly `size` bytes, so that ASan sees any read past the end.
  // Its checksum is stamped, so that a mutation reaches the checks behind it.
  std::vector<uint8_t> file(data, data + size);
  stampArtifactChecksum(file);
  // `gpuopt-cuda-run --dump` prints whatever the verifier accepts.
  const gpuopt::artifact::Model *model = nullptr;
  if (verifyArtifact(file.data(), file.size(), "fuzz", model))
    (void)dumpArtifact(file.data());
  CudaArtifact art;
  Status status = parseCudaArtifact(file.data(), file.size(), "fuzz", art);
  if (!status) {
    if (status.message().rfind("fuzz: ", 0) != 0) {
      std::fprintf(stderr, "unlocated error: %s\n", status.message().c_str());
      std::abort();
    }
    return 0;
  }
  size_t imageBytes = 0;
  for (const CudaImage &image : art.images)
    imageBytes += image.bytes.size();
  // A PTX image gets a NUL appended; nothing else may come from nowhere.
  if (imageBytes > size + art.images.size())
    finding("images larger than the file");
  for (const CudaBuffer &b : art.buffers) {
    uint64_t bytes;
    if (!denseByteSize(b.shape, b.dtype, bytes) || bytes != b.bytes)
      finding("a buffer whose bytes do not match its shape");
    if (b.offset % kCudaArenaAlignment || b.offset > art.arenaBytes ||
        b.bytes > art.arenaBytes - b.offset)
      finding("a buffer outside the arena");
  }
  for (const CudaBuffer &b : art.buffers)
    if (b.kind == "param" && b.name.empty())
      finding("a param buffer without a name");
  for (unsigned id : art.inputs)
    if (id >= art.buffers.size() || art.buffers[id].kind != "input" ||
        art.buffers[id].dtype != DType::F32)
      finding("an input that is not an f32 input buffer");
  for (unsigned id : art.outputs)
    if (id >= art.buffers.size() || art.buffers[id].kind != "output" ||
        art.buffers[id].dtype != DType::F32)
      finding("an output that is not an f32 output buffer");
  checkSteps(art, art.init);
  checkSteps(art, art.run);
  (void)selectCudaImage(art, 90);
  (void)selectCudaImage(art, 86);
  return 0;
}
