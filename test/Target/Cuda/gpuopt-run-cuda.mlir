// gpuopt-run runs a CUDA artifact through the same model runtime as a CPU
// model library (runtime/api/). Without an NVIDIA driver it stops at
// CudaModel::create with one located line and exit code 1; everything
// checked before the driver is reported as on any machine.
// REQUIRES: cuda-runtime
// UNSUPPORTED: cuda-driver
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_86 --cuda-format=ptx -o %t.gpuopt
// RUN: %python %S/Inputs/write_conv_inputs.py %t
// RUN: rm -f %t.y.npy
// RUN: %python %S/Inputs/exit_code.py 1 gpuopt-run %t.gpuopt --weights=%t.safetensors --input=@%t.x.npy --output=@%t.y.npy > %t.out 2>&1
// RUN: FileCheck %s --check-prefix=DRIVER --match-full-lines --input-file=%t.out
// RUN: %python -c "import sys; sys.exit(len(open(sys.argv[1]).read().splitlines()) != 1)" %t.out
// RUN: not ls %t.y.npy
// DRIVER: gpuopt-run: error: {{.*}}.gpuopt: no NVIDIA driver: cannot load libcuda.so.1 ({{.*}})
// DRIVER-NOT: {{.}}

// The same through --device (the driver is opened before the device count).
// RUN: %python %S/Inputs/exit_code.py 1 gpuopt-run %t.gpuopt --weights=%t.safetensors --input=@%t.x.npy --device=3 2>&1 | FileCheck %s --check-prefix=DRIVER

// The weights are bound before the driver is opened.
// RUN: not gpuopt-run %t.gpuopt --weights=%t.wrong.safetensors --input=@%t.x.npy 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// WEIGHTS: gpuopt-run: error: {{.*}}.wrong.safetensors: missing parameter 'conv.bias' of shape [4]
// RUN: not gpuopt-run %t.gpuopt --input=@%t.x.npy 2>&1 | FileCheck %s --check-prefix=NO-WEIGHTS
// NO-WEIGHTS: gpuopt-run: error: {{.*}}.gpuopt: no weights file given (a CUDA model is created with one)
// RUN: not gpuopt-run %t.gpuopt --weights=%t.safetensors --max-tensors=1 --input=@%t.x.npy 2>&1 | FileCheck %s --check-prefix=LIMITS
// LIMITS: gpuopt-run: error: {{.*}}.safetensors: 2 tensors exceed the limit of 1

// Options that do not apply to a CUDA artifact.
// RUN: not gpuopt-run %t.gpuopt --weights=%t.safetensors --backend=cpu 2>&1 | FileCheck %s --check-prefix=BACKEND
// BACKEND: gpuopt-run: error: {{.*}}.gpuopt is a compiled CUDA model; --backend=cpu does not apply
// RUN: not gpuopt-run %t.gpuopt --weights=%t.safetensors --cpu=x86-64 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: gpuopt-run: error: {{.*}}.gpuopt is a compiled CUDA model; --cpu applies to gpuopt-compile
// RUN: not gpuopt-run %t.gpuopt --weights=%t.safetensors --device=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: gpuopt-run: error: --device must be a GPU ordinal (0, 1, ...) or 'emulate', got '-1'
// RUN: not gpuopt-run %s --device=1 2>&1 | FileCheck %s --check-prefix=MLIR
// MLIR: gpuopt-run: error: --device applies to CUDA artifacts

// A file with the artifact identifier "GPOA" at bytes 4..7 is a CUDA
// artifact whatever its name (not an MLIR file to parse).
// RUN: %python -c "open('%t.gpoa.bin', 'wb').write(b'\x10\0\0\0GPOA' + bytes(24))"
// RUN: not gpuopt-run %t.gpoa.bin --weights=%t.safetensors 2>&1 | FileCheck %s --check-prefix=GPOA
// GPOA: gpuopt-run: error: {{.*}}.gpoa.bin: invalid gpuopt artifact: the buffer does not verify against the schema (truncated or damaged)
// GPOA-NOT: gpoa.bin:{{[0-9]+}}:

// An artifact of the earlier format (magic GPUOCUDA + JSON header).
// RUN: %python -c "open('%t.old.gpuopt', 'wb').write(b'GPUOCUDA' + bytes(24))"
// RUN: not gpuopt-run %t.old.gpuopt --weights=%t.safetensors 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: gpuopt-run: error: {{.*}}.old.gpuopt is a CUDA artifact of an earlier gpuopt (magic GPUOCUDA, a JSON plan); compile it again with this gpuopt-compile

func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x1x1xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
