// The one parser of an NVPTX chip list (parseCudaChips) refuses what is not
// sm_NN[,sm_MM...] with NN >= 50; gpuopt-compile --cuda-arch uses the same
// parser (test/Target/Cuda/invalid.mlir).
// RUN: split-file %s %t
// RUN: gpuopt-opt %t/no-underscore.mlir --gpuopt-gpu-lowering="chip=sm90" -verify-diagnostics
// RUN: gpuopt-opt %t/too-old.mlir --gpuopt-gpu-lowering="chip=sm_90,sm_49" -verify-diagnostics
// RUN: gpuopt-opt %t/empty-chip.mlir --gpuopt-gpu-lowering="chip=sm_90," -verify-diagnostics
// RUN: gpuopt-opt %t/not-a-number.mlir --gpuopt-gpu-lowering="chip=sm_9a" -verify-diagnostics
// The convolution route and the library precision are checked the same way
// (gpuopt-compile --gpu-conv/--gpu-precision: test/Target/Cuda/invalid.mlir).
// RUN: gpuopt-opt %t/gpu-conv.mlir --gpuopt-gpu-lowering="gpu-conv=cublas" -verify-diagnostics
// RUN: gpuopt-opt %t/gpu-precision.mlir --gpuopt-gpu-lowering="gpu-precision=bf16" -verify-diagnostics
// A device model for the cost model's choice is an error without
// gpu-conv=auto, explicit or the default route.
// RUN: gpuopt-opt %t/device-library.mlir --gpuopt-gpu-lowering="gpu-conv=library gpu-conv-device=h200" -verify-diagnostics
// RUN: gpuopt-opt %t/device-generated.mlir --gpuopt-gpu-lowering="gpu-conv-device=h200" -verify-diagnostics

//--- no-underscore.mlir
// expected-error@unknown {{chip must be sm_NN[,sm_MM...] with NN >= 50, got 'sm90'}}
module {}

//--- too-old.mlir
// expected-error@unknown {{chip must be sm_NN[,sm_MM...] with NN >= 50, got 'sm_90,sm_49'}}
module {}

//--- empty-chip.mlir
// expected-error@unknown {{chip must be sm_NN[,sm_MM...] with NN >= 50, got 'sm_90,'}}
module {}

//--- not-a-number.mlir
// expected-error@unknown {{chip must be sm_NN[,sm_MM...] with NN >= 50, got 'sm_9a'}}
module {}

//--- gpu-conv.mlir
// expected-error@unknown {{gpu-conv must be generated, library or auto, got 'cublas'}}
module {}

//--- gpu-precision.mlir
// expected-error@unknown {{gpu-precision must be fp32 or tf32, got 'bf16'}}
module {}

//--- device-library.mlir
// expected-error@unknown {{gpu-conv-device applies to gpu-conv=auto, not gpu-conv=library}}
module {}

//--- device-generated.mlir
// expected-error@unknown {{gpu-conv-device applies to gpu-conv=auto, not gpu-conv=generated}}
module {}
