// gpuopt-run --device=emulate runs a CUDA artifact's host image and launch
// plan on this CPU (runtime/cuda/CudaEmulator.cpp): the answer equals the
// reference backend's on random weights, bias and input. No GPU needed.
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_86 --cuda-format=ptx -o %t.gpuopt
// RUN: %python %S/Inputs/write_conv_inputs.py %t
// RUN: gpuopt-run %t.gpuopt --device=emulate --weights=%t.safetensors --input=@%t.x.npy --output=@%t.emu.npy
// RUN: gpuopt-run %s --backend=reference --weights=%t.safetensors --input=@%t.x.npy --output=@%t.ref.npy
// RUN: %python -c "import numpy as np, sys; e, r = np.load(sys.argv[1]), np.load(sys.argv[2]); d = np.linalg.norm(e - r) / np.linalg.norm(r); print('rel-l2', 'ok' if e.shape == r.shape and d <= 1e-6 else d)" %t.emu.npy %t.ref.npy | FileCheck %s
// CHECK: rel-l2 ok

// A device that is neither an ordinal nor 'emulate'.
// RUN: not gpuopt-run %t.gpuopt --device=host --weights=%t.safetensors --input=@%t.x.npy 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: gpuopt-run: error: --device must be a GPU ordinal (0, 1, ...) or 'emulate', got 'host'

func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x1x1xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
