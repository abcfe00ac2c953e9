//===- ArtifactTest.cpp - the shared checks of verifyArtifact -------------===//
//
// Part of the gpuopt project.
//
// verifyArtifact (runtime/base/Artifact.cpp) on artifacts built here with the
// schema's object API: a valid one of each target is accepted, and each
// mutation of a property every target relies on is refused with its message;
// every proper prefix of a valid buffer is refused (truncation), as is every
// single-byte corruption but those that drop the checksum field itself (the
// CUDA reader refuses those); dumpArtifact names the
// fields and elides long byte vectors. One line per failing case and exit
// status 1 otherwise. Run by lit (test/Runtime/artifact.test).
//
//===----------------------------------------------------------------------===//
#include "gpuopt/Runtime/Artifact.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

using namespace gpuopt::runtime;
namespace fb = gpuopt::artifact;

static int fails = 0;

static void check(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++fails;
  }
}

static std::unique_ptr<fb::TensorTypeT> type(std::vector<int64_t> shape,
                                             fb::DType dtype = fb::DType::F32) {
  auto t = std::make_unique<fb::TensorTypeT>();
  t->dtype = dtype;
  t->shape = std::move(shape);
  return t;
}

/// A small valid CPU artifact: one parameter, one input, one output.
static fb::ModelT cpuModel() {
  fb::ModelT m;
  m.version = kArtifactVersion;
  m.entry = "forward";
  auto p = std::make_unique<fb::ParamT>();
  p->name = "conv.weight";
  p->type = type({4, 3, 3, 3});
  m.params.push_back(std::move(p));
  m.inputs.push_back(type({1, 3, 8, 8}));
  m.outputs.push_back(type({1, 4, 8, 8}));
  fb::CpuProgramT cpu;
  cpu.cpu = "x86-64-v3";
  cpu.cpu_features = {"avx2", "fma"};
  cpu.init = std::make_unique<fb::CpuFunctionT>();
  cpu.forward = std::make_unique<fb::CpuFunctionT>();
  m.program.Set(std::move(cpu));
  return m;
}

/// A small valid CUDA artifact with a 100-byte image.
static fb::ModelT cudaModel() {
  fb::ModelT m = cpuModel();
  fb::CudaProgramT cuda;
  auto image = std::make_unique<fb::CudaImageT>();
  image->chip = "sm_90";
  image->format = fb::ImageFormat::Cubin;
  image->data.assign(100, 0xab);
  cuda.images.push_back(std::move(image));
  m.program.Set(std::move(cuda));
  return m;
}

static std::vector<uint8_t> pack(const fb::ModelT &m) {
  return packArtifact(m);
}

static std::string verify(const std::vector<uint8_t> &bytes) {
  const fb::Model *model = nullptr;
  Status s = verifyArtifact(bytes.data(), bytes.size(), "m.gpuopt", model);
  if (s && !model)
    return "accepted without a model";
  return s ? "ok" : s.message();
}

static void expectRefused(const std::string &name,
                          const std::function<void(fb::ModelT &)> &mutate,
                          const std::string &message) {
  fb::ModelT m = cpuModel();
  mutate(m);
  std::string got = verify(pack(m));
  check(got == "m.gpuopt: invalid gpuopt artifact: " + message,
        name + ": got '" + got + "'");
}

static void testAccepted() {
  check(verify(pack(cpuModel())) == "ok",
        "a CPU artifact: " + verify(pack(cpuModel())));
  check(verify(pack(cudaModel())) == "ok",
        "a CUDA artifact: " + verify(pack(cudaModel())));
  std::vector<uint8_t> bytes = pack(cudaModel());
  const fb::Model *model = nullptr;
  check(verifyArtifact(bytes.data(), bytes.size(), "m", model) &&
            std::string(artifactTargetName(*model)) == "cuda",
        "the CUDA artifact's target name");
  check(toDType(fb::DType::BF16) == DType::BF16 &&
            toArtifactDType(DType::BOOL) == fb::DType::BOOL &&
            toDType(fb::DType::I64) == DType::I64,
        "dtype conversions");
}

static void testRefused() {
  expectRefused(
      "version", [](fb::ModelT &m) { m.version = 99; },
      "version 99, this runtime reads version " +
          std::to_string(kArtifactVersion));
  // A missing program is a missing required field: the verifier's refusal.
  expectRefused(
      "no program", [](fb::ModelT &m) { m.program.Reset(); },
      "the buffer does not verify against the schema (truncated or "
      "damaged)");
  // A program kind of a newer schema verifies (unions skip unknown kinds).
  {
    std::vector<uint8_t> bytes = pack(cpuModel());
    const fb::Model *model = fb::GetModel(bytes.data());
    // The union's type field is stored (ForceDefaults): rewrite it in place.
    flatbuffers::Table *table =
        reinterpret_cast<flatbuffers::Table *>(const_cast<fb::Model *>(model));
    check(table->SetField<uint8_t>(fb::Model::VT_PROGRAM_TYPE, 7, 0),
          "rewriting the program kind");
    check(stampArtifactChecksum(bytes), "stamping the rewritten buffer");
    std::string got = verify(bytes);
    check(got == "m.gpuopt: invalid gpuopt artifact: a program of unknown "
                 "kind 7 (made by a newer gpuopt?)",
          "an unknown program kind: got '" + got + "'");
  }
  expectRefused(
      "duplicate parameter",
      [](fb::ModelT &m) {
        auto p = std::make_unique<fb::ParamT>();
        p->name = "conv.weight";
        p->type = type({4});
        m.params.push_back(std::move(p));
      },
      "parameter 'conv.weight' appears twice");
  expectRefused(
      "unnamed parameter", [](fb::ModelT &m) { m.params[0]->name.clear(); },
      "parameter 0 has no name");
  expectRefused(
      "rank 9", [](fb::ModelT &m) { m.params[0]->type->shape.assign(9, 1); },
      "parameter 'conv.weight' has rank 9, more than 8");
  expectRefused(
      "negative dimension", [](fb::ModelT &m) { m.inputs[0]->shape[2] = -8; },
      "input 0 has a negative dimension");
  expectRefused(
      "byte size overflow",
      [](fb::ModelT &m) {
        m.outputs[0]->shape = {1ll << 31, 1ll << 31, 4};
      },
      "output 0 [2147483648, 2147483648, 4]: its byte size "
      "overflows int64");
  expectRefused(
      "f16 input", [](fb::ModelT &m) { m.inputs[0]->dtype = fb::DType::F16; },
      "input 0 is not f32");
  expectRefused(
      "unknown dtype",
      [](fb::ModelT &m) {
        m.params[0]->type->dtype = static_cast<fb::DType>(200);
      },
      "parameter 'conv.weight' has an unknown dtype 200");
}

static void testDamaged() {
  std::vector<uint8_t> good = pack(cudaModel());
  check(verify({}) ==
            "m.gpuopt: invalid gpuopt artifact: missing the GPOA identifier "
            "(not made by gpuopt-compile?)",
        "an empty buffer");
  std::vector<uint8_t> other = good;
  other[4] = 'X';
  check(verify(other).find("missing the GPOA identifier") != std::string::npos,
        "another identifier");
  // Every proper prefix: the verifier must refuse it without reading past it
  // (ASan builds of this test catch a read past the end).
  size_t acceptedPrefixes = 0;
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> prefix(good.begin(), good.begin() + n);
    if (verify(prefix) == "ok")
      ++acceptedPrefixes;
  }
  check(acceptedPrefixes == 0, "a truncated buffer was accepted (" +
                                   std::to_string(acceptedPrefixes) +
                                   " prefixes)");
  // Single-byte corruptions: the checksum refuses each one, except those that
  // drop the field itself (its vtable slot), which the CUDA reader refuses.
  // Whatever verifies must still satisfy the shared checks (the model is
  // walked by dumpArtifact without a crash).
  size_t accepted = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0xff;
    const fb::Model *model = nullptr;
    if (!verifyArtifact(bad.data(), bad.size(), "m", model))
      continue;
    ++accepted;
    check(!hasArtifactChecksum(bad.data(), bad.size()),
          "byte " + std::to_string(i) + " corrupted, and the checksum agrees");
    (void)dumpArtifact(bad.data());
  }
  check(accepted < 4, std::to_string(accepted) +
                          " single-byte corruptions accepted (a vtable slot "
                          "has 2 bytes)");
}

/// A CRC-32 mismatch names both values; a buffer without the field verifies
/// (the CUDA reader refuses it: test_cuda.py); the CRC is zlib's.
static void testChecksum() {
  std::vector<uint8_t> good = pack(cudaModel());
  check(hasArtifactChecksum(good.data(), good.size()), "a packed checksum");
  const fb::Model *model = fb::GetModel(good.data());
  check(model->checksum() == computeArtifactChecksum(good.data(), good.size()),
        "the packed checksum is the buffer's");
  // One bit of the kernel image (100 bytes of 171) flipped: the schema still
  // verifies.
  std::vector<uint8_t> bad = good;
  const uint8_t image[4] = {171, 171, 171, 171};
  auto at = std::search(bad.begin(), bad.end(), image, image + 4);
  check(at != bad.end(), "the image bytes");
  *at ^= 0x01;
  char want[160];
  std::snprintf(want, sizeof(want),
                "m.gpuopt: invalid gpuopt artifact: checksum mismatch: it "
                "records CRC-32 %08x, its bytes give %08x (damaged after "
                "gpuopt-compile wrote it)",
                model->checksum(),
                computeArtifactChecksum(bad.data(), bad.size()));
  std::string got = verify(bad);
  check(got == want, "one bit flipped: got '" + got + "'");
  check(stampArtifactChecksum(bad) && verify(bad) == "ok",
        "a restamped buffer verifies");

  // Without the field (a writer that does not store defaults, checksum 0).
  flatbuffers::FlatBufferBuilder builder;
  fb::ModelT object = cudaModel();
  object.checksum = 0;
  fb::FinishModelBuffer(builder, fb::Model::Pack(builder, &object));
  std::vector<uint8_t> bare(builder.GetBufferPointer(),
                            builder.GetBufferPointer() + builder.GetSize());
  check(!hasArtifactChecksum(bare.data(), bare.size()) &&
            !stampArtifactChecksum(bare) && verify(bare) == "ok",
        "a buffer without a checksum verifies, and has none to stamp");

  // The CRC-32 check value (of "123456789"; zlib.crc32 gives the same), on
  // bytes that are no artifact: the whole buffer is summed.
  const char *digits = "123456789";
  check(computeArtifactChecksum(reinterpret_cast<const uint8_t *>(digits), 9) ==
            0xCBF43926u,
        "CRC-32 of 123456789");
  check(!hasArtifactChecksum(nullptr, 0) &&
            computeArtifactChecksum(nullptr, 0) == 0,
        "an empty buffer");
}

static void testDump() {
  std::vector<uint8_t> bytes = pack(cudaModel());
  std::string text = dumpArtifact(bytes.data());
  for (const char *want :
       {"\"entry\": \"forward\"", "\"name\": \"conv.weight\"",
        "\"program_type\": \"CudaProgram\"", "\"chip\": \"sm_90\"",
        "\"format\": \"Cubin\"", "\"dtype\": \"F32\"",
        "\"shape\": [\n          4,\n          3,\n          3,\n          3\n "
        "       ]",
        "... (100 bytes)"})
    check(text.find(want) != std::string::npos,
          std::string("the dump lacks ") + want + ":\n" + text);
  // The first 16 bytes are printed, the 17th is not.
  check(text.find("171") != std::string::npos &&
            text.find(", ... (100 bytes)") != std::string::npos,
        "the dump shows the first image bytes");
  size_t shown = 0;
  for (size_t pos = 0; (pos = text.find("171", pos)) != std::string::npos;
       ++pos)
    ++shown;
  check(shown == 16, "16 image bytes shown, got " + std::to_string(shown));
}

int main() {
  testAccepted();
  testRefused();
  testDamaged();
  testChecksum();
  testDump();
  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
