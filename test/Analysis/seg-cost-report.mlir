// RUN: gpuopt-opt %s -split-input-file --seg-cost-report="devices=%S/Inputs/devices.json device=unit format=json" -o /dev/null | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --seg-cost-report="devices=%S/Inputs/devices.json device=tiles format=json" -o /dev/null | FileCheck %s --check-prefix=TILES

// The "unit" device runs 1 FLOP/s and 1 B/s with no efficiency loss, launches
// cost 1000 s (compiled) and 10000 s (eager): every predicted time is a FLOP
// or byte count. A kernel takes max(FLOPs, bytes); f32 is 4 bytes.

// Conv 2->3, 3x3, pad 1, on 4x4: 48 outputs × 2·9 MACs = 864 MACs; FLOPs
// 2·864 + 48 (bias) = 1776. Bytes: input 128, weight 216, bias 12, output 192.
// Eager (cuDNN): the convolution (1728 FLOPs, 536 B: compute-bound) and a bias
// add (48 FLOPs, 2·192 + 12 = 396 B: memory-bound). Compiled: one kernel.
// On "tiles" (4 units, 16x16 tiles) the GEMM 16x3 (K = 18) fills one tile of
// one wave: 48 / (4·256) = 3/64 of the peak, 1776 · 64/3 = 37888 s.
// CHECK-LABEL: "name": "conv_bias"
// CHECK: "params": 57,
// CHECK-NEXT: "buffers": 0,
// CHECK-NEXT: "macs": 864,
// CHECK-NEXT: "thop_macs": 864,
// CHECK-NEXT: "flops": 1776,
// CHECK: {"index":2,"name":"seg.conv2d","type":"tensor<1x3x4x4xf32>","macs":864,"thop_macs":864,"flops":1776,"params":57,"load_time":false,"modeled":true,"precision":"fp32","eager":{"kernels":2,"flops":1776,"bytes":932,"intensity":{{[^,]+}},"compute_s":1728,"memory_s":396,"launch_s":20000,"time_s":22124,"bound":"launch"},"compiled":{"kernels":1,"flops":1776,"bytes":548,"intensity":{{[^,]+}},"compute_s":1776,"memory_s":0,"launch_s":1000,"time_s":2776,"bound":"compute"}
// TILES-LABEL: "name": "conv_bias"
// TILES: "name":"seg.conv2d"{{.*}}"eager":{"kernels":2,{{.*}}"compute_s":36864,"memory_s":396,{{.*}}"compiled":{"kernels":1,{{.*}}"compute_s":37888,"memory_s":0,"launch_s":1000,"time_s":38888,
func.func @conv_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = seg.param "w" : tensor<3x2x3x3xf32>
  %b = seg.param "b" : tensor<3xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Depthwise: PyTorch's own kernel adds the bias, no second kernel; it is not a
// GEMM (no tile quantization). 32 outputs × 9 MACs = 288; FLOPs 576 + 32.
// Bytes 128 + 72 + 8 + 128 = 336.
// CHECK-LABEL: "name": "negative_depthwise_bias_add"
// CHECK: "name":"seg.conv2d"{{.*}}"macs":288,{{.*}}"flops":608,{{.*}}"eager":{"kernels":1,"flops":608,"bytes":336,{{.*}}"compute_s":608,"memory_s":0,"launch_s":10000,
// TILES-LABEL: "name": "negative_depthwise_bias_add"
// TILES: "name":"seg.conv2d"{{.*}}"compiled":{"kernels":1,"flops":608,"bytes":336,{{.*}}"compute_s":608,
func.func @negative_depthwise_bias_add(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = seg.param "w" : tensor<2x1x3x3xf32>
  %b = seg.param "b" : tensor<2xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2
       : tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A Linear over a transposed (strided) token view: the permute is a view (no
// kernel, no bytes); ATen runs matmul (240 FLOPs; 96 + 80 + 120 B) and then
// adds the bias (30 FLOPs; 2·120 + 20 B). Compiled: one kernel of 270 FLOPs
// and 96 + 80 + 20 + 120 = 316 B.
// CHECK-LABEL: "name": "linear_strided"
// CHECK: "name":"seg.permute"{{.*}}"eager":{"kernels":0,"flops":0,"bytes":0,{{.*}}"compiled":{"kernels":0,
// CHECK: "name":"seg.linear"{{.*}}"macs":120,"thop_macs":120,"flops":270,"params":25,{{.*}}"eager":{"kernels":2,"flops":270,"bytes":556,{{.*}}"memory_s":556,"launch_s":20000,{{.*}}"compiled":{"kernels":1,"flops":270,"bytes":316,{{.*}}"memory_s":316,"launch_s":1000,"time_s":1316,"bound":"launch"}
func.func @linear_strided(%x: tensor<1x4x6xf32>) -> tensor<1x6x5xf32> {
  %w = seg.param "w" : tensor<5x4xf32>
  %b = seg.param "b" : tensor<5xf32>
  %t = seg.permute %x dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %y = seg.linear %t, %w, %b : tensor<1x6x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<1x6x5xf32>
  return %y : tensor<1x6x5xf32>
}

// -----

// Contiguous input: one addmm with the bias.
// CHECK-LABEL: "name": "negative_linear_contiguous"
// CHECK: "name":"seg.linear"{{.*}}"eager":{"kernels":1,"flops":270,"bytes":316,
func.func @negative_linear_contiguous(%x: tensor<1x6x4xf32>) -> tensor<1x6x5xf32> {
  %w = seg.param "w" : tensor<5x4xf32>
  %b = seg.param "b" : tensor<5xf32>
  %y = seg.linear %x, %w, %b : tensor<1x6x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<1x6x5xf32>
  return %y : tensor<1x6x5xf32>
}

// -----

// PyTorch's view rules: flattening a transposed view copies (2·96 B); splitting
// its last dim, or any reshape of a contiguous tensor, is a view. Compiled
// code folds every layout op.
// CHECK-LABEL: "name": "reshape_views"
// CHECK: "index":0,"name":"seg.permute"{{.*}}"eager":{"kernels":0,
// CHECK: "index":1,"name":"seg.reshape","type":"tensor<1x24xf32>"{{.*}}"eager":{"kernels":1,"flops":0,"bytes":192,{{.*}}"compiled":{"kernels":0,
// CHECK: "index":2,"name":"seg.reshape","type":"tensor<1x6x2x2xf32>"{{.*}}"eager":{"kernels":0,
// CHECK: "index":3,"name":"seg.reshape","type":"tensor<24xf32>"{{.*}}"eager":{"kernels":0,
func.func @reshape_views(%x: tensor<1x4x6xf32>) -> (tensor<1x24xf32>, tensor<1x6x2x2xf32>, tensor<24xf32>) {
  %t = seg.permute %x dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %flat = seg.reshape %t : tensor<1x6x4xf32> -> tensor<1x24xf32>
  %split = seg.reshape %t : tensor<1x6x4xf32> -> tensor<1x6x2x2xf32>
  %plain = seg.reshape %x : tensor<1x4x6xf32> -> tensor<24xf32>
  return %flat, %split, %plain : tensor<1x24xf32>, tensor<1x6x2x2xf32>, tensor<24xf32>
}

// -----

// Compiled: the ReLU (8 FLOPs, 64 B) fuses into the GELU (64 FLOPs, 64 B):
// one kernel of 72 FLOPs moving 64 B (the intermediate is never stored).
// CHECK-LABEL: "name": "elementwise_fusion"
// CHECK: "compiled": {
// CHECK-NEXT: "kernels": 1,
// CHECK: "index":0,"name":"seg.relu"{{.*}}"eager":{"kernels":1,"flops":8,"bytes":64,{{.*}}"compiled":{"kernels":0,{{.*}}"fused_into":1}
// CHECK: "index":1,"name":"seg.gelu"{{.*}}"eager":{"kernels":1,"flops":64,"bytes":64,{{.*}}"compiled":{"kernels":1,"flops":72,"bytes":64,{{.*}}"compute_s":72,"memory_s":0,
func.func @elementwise_fusion(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %r = seg.relu %x : tensor<1x8xf32>
  %g = seg.gelu %r : tensor<1x8xf32>
  return %g : tensor<1x8xf32>
}

// -----

// The ReLU's result is also returned: it must be stored, no fusion.
// CHECK-LABEL: "name": "negative_elementwise_fusion_two_uses"
// CHECK: "compiled": {
// CHECK-NEXT: "kernels": 2,
// CHECK: "name":"seg.relu"{{.*}}"compiled":{"kernels":1,"flops":8,"bytes":64,{{[^}]*}}"bound":"launch"},"loc"
func.func @negative_elementwise_fusion_two_uses(%x: tensor<1x8xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  %r = seg.relu %x : tensor<1x8xf32>
  %g = seg.gelu %r : tensor<1x8xf32>
  return %r, %g : tensor<1x8xf32>, tensor<1x8xf32>
}

// -----

// ShiftViT's residual y = x + shift(x) on 8 elements (32 B): the shift's
// gather (reads 32 B, writes 32 B) fuses into the add (reads x and the shifted
// value, writes y: 96 B), which then reads x twice and never stores the
// shifted map: one kernel of 96 + 64 − 2·32 = 96 B.
// CHECK-LABEL: "name": "shift_into_elementwise"
// CHECK: "compiled": {
// CHECK-NEXT: "kernels": 1,
// CHECK: "index":0,"name":"seg.channel_shift"{{.*}}"eager":{"kernels":1,"flops":0,"bytes":64,{{.*}}"compiled":{"kernels":0,{{.*}}"fused_into":1}
// CHECK: "index":1,"name":"seg.add"{{.*}}"compiled":{"kernels":1,"flops":8,"bytes":96,
func.func @shift_into_elementwise(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %s = seg.channel_shift %x offsets_h = [1, 0] offsets_w = [0, -1] mode = zero : tensor<1x2x2x2xf32>
  %y = seg.add %x, %s : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// BatchNorm: thop counts 4·numel = 32; the running mean and variance are
// buffers, not learned parameters. Bytes 32 + 4·8 + 32 = 96.
// CHECK-LABEL: "name": "batch_norm_buffers"
// CHECK: "params": 4,
// CHECK-NEXT: "buffers": 4,
// CHECK-NEXT: "macs": 0,
// CHECK-NEXT: "thop_macs": 32,
// CHECK: "name":"seg.batch_norm"{{.*}}"thop_macs":32,"flops":32,"params":8,{{.*}}"eager":{"kernels":1,"flops":32,"bytes":96,
func.func @batch_norm_buffers(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %m = seg.param "bn.running_mean" : tensor<2xf32>
  %v = seg.param "bn.running_var" : tensor<2xf32>
  %g = seg.param "bn.weight" : tensor<2xf32>
  %b = seg.param "bn.bias" : tensor<2xf32>
  %y = seg.batch_norm %x, %m, %v, %g, %b epsilon = 1.0e-05
       : tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// A 2x2/stride-2 transposed convolution: every one of the 16 input elements
// meets 3·2·2 weights (192 MACs); thop counts 48 outputs × 4 channels × 2·2
// = 768, four times as many.
// CHECK-LABEL: "name": "conv_transpose_thop"
// CHECK: "name":"seg.conv_transpose2d"{{.*}}"macs":192,"thop_macs":768,"flops":432,
func.func @conv_transpose_thop(%x: tensor<1x4x2x2xf32>) -> tensor<1x3x4x4xf32> {
  %w = seg.param "w" : tensor<4x3x2x2xf32>
  %b = seg.param "b" : tensor<3xf32>
  %y = seg.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [0, 0]
       output_padding = [0, 0] dilation = [1, 1] groups = 1
       : tensor<1x4x2x2xf32>, tensor<4x3x2x2xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// The load-time fold costs nothing per inference. The fused convolution is one
// compiled kernel (FLOPs 2·64 + 32 bias + 32 ReLU + 32 residual = 224; bytes
// 128 in + 16 w + 8 b + 128 residual + 128 out = 408) and five eager kernels:
// the shift (256 B), the convolution (272 B), the bias add (264 B), the ReLU
// (256 B) and the residual add (384 B), all memory-bound.
// CHECK-LABEL: "name": "fused_conv_load_time"
// CHECK: "params": 10,
// CHECK-NEXT: "buffers": 4,
// CHECK: "name":"seg.fold_batch_norm"{{.*}}"load_time":true,{{.*}}"eager":{"kernels":0,{{.*}}"compiled":{"kernels":0,
// CHECK: "name":"seg.fused_conv2d"{{.*}}"macs":64,"thop_macs":64,"flops":224,"params":6,{{.*}}"eager":{"kernels":5,"flops":224,"bytes":1432,{{.*}}"compute_s":0,"memory_s":1432,"launch_s":50000,{{.*}}"compiled":{"kernels":1,"flops":224,"bytes":408,{{.*}}"memory_s":408,"launch_s":1000,"time_s":1408,
func.func @fused_conv_load_time(%x: tensor<1x2x4x4xf32>, %r: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = seg.param "conv.weight" : tensor<2x2x1x1xf32>
  %b = seg.param "conv.bias" : tensor<2xf32>
  %m = seg.param "bn.running_mean" : tensor<2xf32>
  %v = seg.param "bn.running_var" : tensor<2xf32>
  %g = seg.param "bn.weight" : tensor<2xf32>
  %be = seg.param "bn.bias" : tensor<2xf32>
  %w2, %b2 = seg.fold_batch_norm %w bias %b, %m, %v, %g, %be epsilon = 1.0e-05
             : (tensor<2x2x1x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
                tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x1x1xf32>, tensor<2xf32>)
  %y = seg.fused_conv2d %x, %w2, %b2 residual %r offsets_h = [0, 1] offsets_w = []
         mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1]
         groups = 1 activation = relu
       : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>, tensor<1x2x4x4xf32>)
         -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// TSM's frame shift folded into a 1x1 convolution (4 images of 2 channels
// of 2x2, no bias): 32 outputs × 2 MACs = 64, FLOPs 128. Compiled: one kernel
// and no extra bytes (128 in + 16 w + 128 out = 272). Eager: the shift
// (2·128 = 256 B) and the convolution (272 B), both memory-bound.
// CHECK-LABEL: "name": "frame_shifted_conv"
// CHECK: "name":"seg.fused_conv2d"{{.*}}"macs":64,"thop_macs":64,"flops":128,{{.*}}"eager":{"kernels":2,"flops":128,"bytes":528,{{.*}}"compute_s":0,"memory_s":528,"launch_s":20000,{{.*}}"compiled":{"kernels":1,"flops":128,"bytes":272,{{.*}}"memory_s":272,"launch_s":1000,"time_s":1272,
func.func @frame_shifted_conv(%x: tensor<4x2x2x2xf32>) -> tensor<4x2x2x2xf32> {
  %w = seg.param "conv.weight" : tensor<2x2x1x1xf32>
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero
         frame_shift = <frames = 2, offsets = [1, -1]>
         stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1
         activation = none
       : (tensor<4x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<4x2x2x2xf32>
  return %y : tensor<4x2x2x2xf32>
}

// -----

// Rolling-UNet's idiom: channel slices of a strided NCHW view of tokens, each
// rolled. PyTorch's roll reads contiguous memory: the map (48 B) is copied
// once (96 B), at the first roll; each roll then moves 24 + 24 B.
// CHECK-LABEL: "name": "rolls_of_strided_map"
// CHECK: "name":"seg.roll"{{.*}}"eager":{"kernels":2,"flops":0,"bytes":144,{{.*}}"compiled":{"kernels":1,"flops":0,"bytes":48,
// CHECK: "name":"seg.roll"{{.*}}"eager":{"kernels":1,"flops":0,"bytes":48,{{.*}}"compiled":{"kernels":1,"flops":0,"bytes":48,
// CHECK: "name":"seg.concat"{{.*}}"eager":{"kernels":1,"flops":0,"bytes":96,
func.func @rolls_of_strided_map(%t: tensor<1x6x2xf32>) -> tensor<1x2x2x3xf32> {
  %p = seg.permute %t dims = [0, 2, 1] : tensor<1x6x2xf32> -> tensor<1x2x6xf32>
  %m = seg.reshape %p : tensor<1x2x6xf32> -> tensor<1x2x2x3xf32>
  %s0 = seg.slice %m start = [0, 0, 0, 0] size = [1, 1, 2, 3] step = [1, 1, 1, 1]
        : tensor<1x2x2x3xf32> -> tensor<1x1x2x3xf32>
  %s1 = seg.slice %m start = [0, 1, 0, 0] size = [1, 1, 2, 3] step = [1, 1, 1, 1]
        : tensor<1x2x2x3xf32> -> tensor<1x1x2x3xf32>
  %r0 = seg.roll %s0 shifts = [1] dims = [2] : tensor<1x1x2x3xf32>
  %r1 = seg.roll %s1 shifts = [1] dims = [3] : tensor<1x1x2x3xf32>
  %c = seg.concat %r0, %r1 dim = 1 : tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32> -> tensor<1x2x2x3xf32>
  return %c : tensor<1x2x2x3xf32>
}

// -----

// Slices of a contiguous map are contiguous: no copy. A roll along two dims
// is two ATen kernels; compiled code does it in one.
// CHECK-LABEL: "name": "negative_rolls_of_contiguous_map"
// CHECK: "name":"seg.roll"{{.*}}"eager":{"kernels":1,"flops":0,"bytes":48,
// CHECK: "name":"seg.roll"{{.*}}"eager":{"kernels":2,"flops":0,"bytes":96,{{.*}}"compiled":{"kernels":1,"flops":0,"bytes":48,
func.func @negative_rolls_of_contiguous_map(%m: tensor<1x2x2x3xf32>) -> (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>) {
  %s0 = seg.slice %m start = [0, 0, 0, 0] size = [1, 1, 2, 3] step = [1, 1, 1, 1]
        : tensor<1x2x2x3xf32> -> tensor<1x1x2x3xf32>
  %s1 = seg.slice %m start = [0, 1, 0, 0] size = [1, 1, 2, 3] step = [1, 1, 1, 1]
        : tensor<1x2x2x3xf32> -> tensor<1x1x2x3xf32>
  %r0 = seg.roll %s0 shifts = [1] dims = [2] : tensor<1x1x2x3xf32>
  %r1 = seg.roll %s1 shifts = [1, 2] dims = [2, 3] : tensor<1x1x2x3xf32>
  return %r0, %r1 : tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>
}

// -----

// ATen's constant pad fills the output (64 B), then copies the input in
// (2·16 B); compiled code reads 16 B and writes 64 B once.
// CHECK-LABEL: "name": "pad_fill_and_copy"
// CHECK: "name":"seg.pad"{{.*}}"eager":{"kernels":2,"flops":0,"bytes":96,{{.*}}"compiled":{"kernels":1,"flops":0,"bytes":80,
func.func @pad_fill_and_copy(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %y = seg.pad %x low = [0, 0, 1, 1] high = [0, 0, 1, 1] value = 0.0
       : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %y : tensor<1x1x4x4xf32>
}

// -----

// The constant offsets are load-time; the deformable convolution reads them
// at every inference. 48 outputs × 2 MACs = 96; the im2col matrix has
// 2·4·4 = 32 bilinear samples (8 FLOPs each): FLOPs 192 + 256 + 48 (bias).
// Eager (torchvision): im2col (128 + 256 + 128 B), GEMM (128 + 24 + 192 B),
// bias add (2·192 + 12 B). Compiled: 128 + 256 + 24 + 12 + 192 = 612 B.
// CHECK-LABEL: "name": "deform_conv"
// CHECK: "name":"seg.shift_offsets"{{.*}}"load_time":true,{{.*}}"eager":{"kernels":0,
// CHECK: "name":"seg.deform_conv2d"{{.*}}"macs":96,"thop_macs":96,"flops":496,"params":73,{{.*}}"eager":{"kernels":3,"flops":496,"bytes":1252,{{.*}}"memory_s":1252,"launch_s":30000,{{.*}}"compiled":{"kernels":1,"flops":496,"bytes":612,
func.func @deform_conv(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = seg.param "w" : tensor<3x2x1x1xf32>
  %b = seg.param "b" : tensor<3xf32>
  %off = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic
           input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0]
           dilation = [1, 1] : tensor<1x4x4x4xf32>
  %y = seg.deform_conv2d %x, %off, %w, %b stride = [1, 1] padding = [0, 0]
         dilation = [1, 1] groups = 1 offset_groups = 2
       : (tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>)
         -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// Ops outside the model are costed as one memory-bound kernel and counted.
// CHECK-LABEL: "name": "unmodeled_op"
// CHECK: "unmodeled_ops": 1,
// CHECK: "name":"arith.addf"{{.*}}"modeled":false,{{.*}}"eager":{"kernels":1,"flops":0,"bytes":48,
func.func @unmodeled_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
