// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes format=json" -o /dev/null | FileCheck %s --check-prefix=MODEL
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes format=json gpu-conv=generated workgroup-tile-min-blocks=4" -o /dev/null | FileCheck %s --check-prefix=GEN
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes format=json gpu-conv=library workgroup-tile-min-blocks=4" -o /dev/null | FileCheck %s --check-prefix=LIB
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes format=json gpu-conv=auto workgroup-tile-min-blocks=4" -o /dev/null | FileCheck %s --check-prefix=AUTO
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes format=json gpu-conv=auto workgroup-tile-min-blocks=4 workgroup-tile-split-k=1" -o /dev/null | FileCheck %s --check-prefix=AUTO1
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes gpu-conv=generated workgroup-tile-min-blocks=4" -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=routes" -o /dev/null | FileCheck %s --check-prefix=TABLE-MODEL

// Device "routes": 1 FLOP/s, 1 B/s, 4 units, 64 x 64 library tiles, the
// generated kernels at half the rate, launches 1000 s, a library call
// 6e6 s more. Every time below is a FLOP or byte count.
//
// @deep: a 1x1 convolution of 1024 into 32 channels of 4 x 8 pixels,
// F = 2·32·32·1024 = 2097152 FLOPs, K = 1024 (64 steps); bytes 131072
// (input) + 131072 (weights) + 4096 (output) = 266240.
// - model: the library's one 32 x 32 tile on 4 units fills 1/4:
//   F · 4 = 8388608 s + a launch.
// - generated (split-k 8): the workgroup tiles split the reduction in 4
//   parts of 64 x 32 tiles (4 x 2 per thread), 4 blocks, half the slots:
//   F / (0.5 · 0.5) = 8388608 s; the parts' 4 · 4096 bytes replace the
//   output (278528 bytes, compute-bound); the second kernel adds 4096
//   FLOPs and moves 16384 + 4096 = 20480 bytes; 2 launches: 8411088 s.
// - library: the better fill of the two (1/2) at the full rate: 4194304 s
//   + a launch + the call: 10195304 s.
// - auto: generated. Without split-K (split-k 1) the generated kernel is
//   2 x 2 threads in 64 x 16 tiles, 1/4 of the slots: 16777216 + 1000 s,
//   the library 8388608 + 6001000 = 14389608 s: the library.
// MODEL: "gpu_conv": {
// MODEL-NEXT: "route": "model",
// MODEL: "name":"seg.conv2d","type":"tensor<1x32x4x8xf32>"{{.*}}"compiled":{"kernels":1,"flops":2097152,"bytes":266240,{{.*}}"compute_s":8388608,"memory_s":0,"launch_s":1000,"time_s":8389608,"bound":"compute"}
// GEN: "gpu_conv": {
// GEN-NEXT: "route": "generated",
// GEN-NEXT: "min_blocks": 4,
// GEN-NEXT: "max_thread_outputs": 64,
// GEN-NEXT: "split_k": 8
// GEN: "name":"seg.conv2d","type":"tensor<1x32x4x8xf32>"{{.*}}"compiled":{"kernels":2,"flops":2101248,"bytes":299008,{{.*}}"compute_s":8388608,"memory_s":20480,"launch_s":2000,"time_s":8411088,"bound":"compute","route":"generated","tile":[64,32,4,2],"splits":4,"blocks":4,"utilization":0.5}
// LIB: "name":"seg.conv2d","type":"tensor<1x32x4x8xf32>"{{.*}}"compiled":{"kernels":1,"flops":2097152,"bytes":266240,{{.*}}"compute_s":4194304,"memory_s":0,"launch_s":6001000,"time_s":10195304,"bound":"launch","route":"library"}
// AUTO: "name":"seg.conv2d","type":"tensor<1x32x4x8xf32>"{{.*}}"time_s":8411088,"bound":"compute","route":"generated","tile":[64,32,4,2],"splits":4,"blocks":4,"utilization":0.5}
// AUTO1: "name":"seg.conv2d","type":"tensor<1x32x4x8xf32>"{{.*}}"time_s":14389608,"bound":"compute","route":"library"}
//
// The shifted convolution has no library route: generated on every route
// but model, one 32 x 32 tile of 2 x 2 threads for 16 x 16 outputs (K = 18
// is not split). The ReLU is no convolution: no route.
// MODEL: "name":"seg.fused_conv2d"{{.*}}"compiled":{"kernels":1,{{.*}}"bound":"{{[a-z]+}}"}
// GEN: "name":"seg.fused_conv2d"{{.*}}"route":"generated","tile":[32,32,2,2],"splits":1,"blocks":1,"utilization":0.0625}
// LIB: "name":"seg.fused_conv2d"{{.*}}"route":"generated","tile":[32,32,2,2],"splits":1,"blocks":1,"utilization":0.0625}
// AUTO: "name":"seg.fused_conv2d"{{.*}}"route":"generated","tile":[32,32,2,2],"splits":1,"blocks":1,"utilization":0.0625}
// GEN: "name":"seg.relu"{{.*}}"compiled":{"kernels":1,{{.*}}"bound":"memory"}
// LIB: "name":"seg.relu"{{.*}}"compiled":{"kernels":1,{{.*}}"bound":"memory"}
//
//
// Linear layers are tiled as rows x output features (the input is the
// operand that does not index the output's innermost dimension): 64 token
// rows into 16 features, K = 64, is one 16 x 64 tile (2 x 2 threads) per
// 16 rows, 4 blocks, 1/4 of the slots (not 64 x 16 tiles of the features);
// a single row has fewer than 16 tile rows: register tiles, no tiling,
// however many features.
// GEN: "name":"seg.linear","type":"tensor<1x64x16xf32>"{{.*}}"route":"generated","tile":[16,64,2,2],"splits":1,"blocks":4,"utilization":0.25}
// GEN: "name":"seg.linear","type":"tensor<1x1x256xf32>"{{.*}}"route":"generated"}
// TABLE: compiled convolutions/linears: --gpu-conv=generated (generated kernels: min-blocks 4, max-thread-outputs 64, split-k 8)
// TABLE-MODEL: compiled convolutions/linears: model (compute efficiency and library tiles, as eager)
func.func @deep(%x: tensor<1x1024x4x8xf32>, %s: tensor<1x2x4x4xf32>, %t: tensor<1x64x64xf32>, %u: tensor<1x1x64xf32>) -> (tensor<1x32x4x8xf32>, tensor<1x16x4x4xf32>, tensor<1x64x16xf32>, tensor<1x1x256xf32>) {
  %w = seg.param "w" : tensor<32x1024x1x1xf32>
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1
       : tensor<1x1024x4x8xf32>, tensor<32x1024x1x1xf32> -> tensor<1x32x4x8xf32>
  %w2 = seg.param "w2" : tensor<16x2x3x3xf32>
  %z = seg.fused_conv2d %s, %w2 offsets_h = [0, 1] offsets_w = []
         mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1]
         groups = 1 activation = none
       : (tensor<1x2x4x4xf32>, tensor<16x2x3x3xf32>) -> tensor<1x16x4x4xf32>
  %r = seg.relu %z : tensor<1x16x4x4xf32>
  %lw = seg.param "lw" : tensor<16x64xf32>
  %l = seg.linear %t, %lw : tensor<1x64x64xf32>, tensor<16x64xf32> -> tensor<1x64x16xf32>
  %hw = seg.param "hw" : tensor<256x64xf32>
  %h = seg.linear %u, %hw : tensor<1x1x64xf32>, tensor<256x64xf32> -> tensor<1x1x256xf32>
  return %y, %r, %l, %h : tensor<1x32x4x8xf32>, tensor<1x16x4x4xf32>, tensor<1x64x16xf32>, tensor<1x1x256xf32>
}
