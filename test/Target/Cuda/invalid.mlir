// RUN: not gpuopt-compile %s --target=cuda --cuda-arch=sm90 -o %t 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not gpuopt-compile %s --target=cuda --cuda-arch=sm_90,sm_49 -o %t 2>&1 | FileCheck %s --check-prefix=ARCH2
// RUN: not gpuopt-compile %s --target=cuda --cuda-format=sass -o %t 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not gpuopt-compile %s --target=cpu --cuda-arch=sm_90 -o %t 2>&1 | FileCheck %s --check-prefix=CROSS
// RUN: not gpuopt-compile %s --target=cuda --cuda-block-size=2048 -o %t 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not gpuopt-compile %s --target=cuda --cuda-register-tile=0 -o %t 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not gpuopt-compile %s --target=cuda --cuda-register-tile=-3 -o %t 2>&1 | FileCheck %s --check-prefix=TILE3
// RUN: not gpuopt-compile %s --target=cuda --cuda-workgroup-tile-stages=1 -o %t 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not gpuopt-compile %s --target=cuda --cuda-workgroup-tile-max-thread-outputs=2 -o %t 2>&1 | FileCheck %s --check-prefix=THREAD-OUTPUTS
// RUN: not gpuopt-compile %s --target=cuda --cuda-workgroup-tile-split-k=6 -o %t 2>&1 | FileCheck %s --check-prefix=SPLIT-K
// RUN: not gpuopt-compile %s --target=cuda --gpu-conv=cudnn -o %t 2>&1 | FileCheck %s --check-prefix=CONV
// RUN: not gpuopt-compile %s --target=cuda --gpu-precision=fp16 -o %t 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: not gpuopt-compile %s --target=cpu --gpu-conv=library -o %t 2>&1 | FileCheck %s --check-prefix=CROSS-CONV
// RUN: not gpuopt-compile %s --target=cuda --gpu-conv-device=a100 -o %t 2>&1 | FileCheck %s --check-prefix=CONV-DEVICE
// RUN: not gpuopt-compile %s --target=cuda --gpu-conv=auto --gpu-conv-device=nope -o %t 2>&1 | FileCheck %s --check-prefix=AUTO-UNKNOWN
// RUN: not gpuopt-compile %s --target=cuda --gpu-conv=auto --gpu-conv-device=cpu -o %t 2>&1 | FileCheck %s --check-prefix=AUTO-CPU
// RUN: not gpuopt-compile %s --target=cuda --entry=nope -o %t 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not gpuopt-compile %s --target=cuda --pipeline=no-such-pass -o %t 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not gpuopt-compile %s --target=cuda -o %t.dir/missing/x.gpuopt 2>&1 | FileCheck %s --check-prefix=WRITE
// RUN: cp %s %t.in.mlir
// RUN: not gpuopt-compile %t.in.mlir --target=cuda -o %t.gpuopt --cuda-write-kernels=%t.in.mlir 2>&1 | FileCheck %s --check-prefix=KERNELS-INPUT
// RUN: FileCheck %s --check-prefix=INTACT < %t.in.mlir
// RUN: not gpuopt-compile %s --target=cuda -o %t.gpuopt --cuda-write-kernels=%t.gpuopt 2>&1 | FileCheck %s --check-prefix=KERNELS-OUTPUT
// RUN: not gpuopt-compile %s --target=cuda -o %t.in.mlir --cuda-host-kernels=%t.in.mlir 2>&1 | FileCheck %s --check-prefix=HOST-INPUT
// RUN: not gpuopt-compile %s --target=cuda -o %t.gpuopt --cuda-host-kernels=/dev/zero 2>&1 | FileCheck %s --check-prefix=HOST-DEVICE

// ARCH: gpuopt-compile: error: --cuda-arch must be sm_NN[,sm_MM...] with NN >= 50, got 'sm90'
// ARCH2: gpuopt-compile: error: --cuda-arch must be sm_NN[,sm_MM...] with NN >= 50, got 'sm_90,sm_49'
// CROSS: gpuopt-compile: error: --cuda-arch applies to --target=cuda, not --target=cpu
// FORMAT: gpuopt-compile: error: --cuda-format must be fatbin, cubin or ptx, got 'sass'
// BLOCK: error: CUDA block size must be in [1, 1024], got 2048
// TILE: gpuopt-compile: error: --cuda-register-tile must be at least 1, got 0
// TILE3: gpuopt-compile: error: --cuda-register-tile must be at least 1, got -3
// STAGES: gpuopt-compile: error: --cuda-workgroup-tile-stages must be at least 2, got 1
// THREAD-OUTPUTS: gpuopt-compile: error: --cuda-workgroup-tile-max-thread-outputs must be at least 4, got 2
// SPLIT-K: gpuopt-compile: error: --cuda-workgroup-tile-split-k must be a power of two (1: no split), got 6
// CONV: gpuopt-compile: error: --gpu-conv must be generated, library or auto, got 'cudnn'
// PRECISION: gpuopt-compile: error: --gpu-precision must be fp32 or tf32, got 'fp16'
// CROSS-CONV: gpuopt-compile: error: --gpu-conv applies to --target=cuda, not --target=cpu
// CONV-DEVICE: gpuopt-compile: error: --gpu-conv-device applies to --gpu-conv=auto, not --gpu-conv=generated
// AUTO-UNKNOWN: invalid.mlir:{{[0-9]+}}:1: error: convert-seg-to-cuda-library: device file '{{.*}}devices.json': unknown device 'nope'; known devices: {{.*}}h200
// AUTO-CPU: invalid.mlir:{{[0-9]+}}:1: error: convert-seg-to-cuda-library: device 'cpu' is a cpu, not a GPU: it has no library route to predict
// ENTRY: error: no function 'nope' with a body to compile
// PIPE: error: invalid pipeline 'no-such-pass'
// WRITE: error: {{.*}}x.gpuopt: cannot create
// KERNELS-INPUT: gpuopt-compile: error: --cuda-write-kernels {{.*}}.in.mlir is the input {{.*}}.in.mlir; refusing to overwrite an input
// INTACT: gpuopt-compile %s --target=cuda
// KERNELS-OUTPUT: gpuopt-compile: error: --cuda-write-kernels {{.*}}.gpuopt is also -o {{.*}}.gpuopt: two outputs in one file
// HOST-INPUT: gpuopt-compile: error: -o {{.*}}.in.mlir is --cuda-host-kernels {{.*}}.in.mlir; refusing to overwrite an input
// HOST-DEVICE: error: cannot read the host kernels: /dev/zero: not a regular file (character device)
func.func @forward(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %r = seg.relu %x : tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}
