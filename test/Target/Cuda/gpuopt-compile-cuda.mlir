// REQUIRES: ptxas, cuda-runtime
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_90,sm_86 --pipeline=gpuopt-optimize -o %t.sm90.gpuopt
// RUN: gpuopt-cuda-run %t.sm90.gpuopt --inspect | FileCheck %s --check-prefix=SM90
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_86 --cuda-format=ptx -o %t.ptx.gpuopt
// RUN: gpuopt-cuda-run %t.ptx.gpuopt --inspect | FileCheck %s --check-prefix=PTX
// RUN: gpuopt-cuda-run %t.sm90.gpuopt --dump | FileCheck %s --check-prefix=DUMP
// RUN: gpuopt-cuda-run %t.ptx.gpuopt --dump | FileCheck %s --check-prefix=DUMP-PTX

// One artifact for two chips: a fatbin (cubin and PTX) each, and the
// kernels built for the host (--cuda-host-image, on by default), which the
// emulator runs.
// After --gpuopt-optimize the BatchNorm is folded into the convolution's
// weights by a load-time computation: its kernel runs once at load time
// and writes "constant" buffers; the forward launches read them.
// SM90: entry forward, {{[0-9]+}} kernels; images: fatbin sm_90 ({{[0-9]+}} bytes) fatbin sm_86 ({{[0-9]+}} bytes) host-so host-x86_64 ({{[0-9]+}} bytes){{$}}
// SM90: buffers: 1 input, 1 output, 6 param, {{[1-9][0-9]*}} constant
// SM90: launches: {{[1-9][0-9]*}} at load time, {{[1-9][0-9]*}} per forward

// Without the optimization the BatchNorm runs in the forward pass.
// PTX: entry forward, {{[0-9]+}} kernels; images: ptx sm_86 ({{[0-9]+}} bytes) host-so host-x86_64 ({{[0-9]+}} bytes){{$}}
// PTX: buffers: 1 input, 1 output, 6 param, 0 constant
// PTX: launches: 0 at load time, {{[1-9][0-9]*}} per forward
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %m = seg.param "bn.running_mean" : tensor<4xf32>
  %v = seg.param "bn.running_var" : tensor<4xf32>
  %g = seg.param "bn.weight" : tensor<4xf32>
  %be = seg.param "bn.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %y, %m, %v, %g, %be epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %n : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// The artifact, field by field (--dump: Artifact.fbs as text). The model's
// weights, inputs and outputs, in the order of the graph:
// DUMP:      "version": 1,
// DUMP-NEXT: "entry": "forward",
// DUMP-NEXT: "params": [
// DUMP-NEXT:   {
// DUMP-NEXT:     "name": "conv.weight",
// DUMP-NEXT:     "type": {
// DUMP-NEXT:       "dtype": "F32",
// DUMP-NEXT:       "shape": [
// DUMP-NEXT:         4,
// DUMP-NEXT:         3,
// DUMP-NEXT:         3,
// DUMP-NEXT:         3
// DUMP-NEXT:       ]
// DUMP:          "name": "conv.bias",
// DUMP:          "name": "bn.running_mean",
// DUMP:          "name": "bn.running_var",
// DUMP:          "name": "bn.weight",
// DUMP:          "name": "bn.bias",
// DUMP:      "inputs": [
// DUMP-NEXT:   {
// DUMP-NEXT:     "dtype": "F32",
// DUMP-NEXT:     "shape": [
// DUMP-NEXT:       1,
// DUMP-NEXT:       3,
// DUMP-NEXT:       8,
// DUMP-NEXT:       8
// DUMP-NEXT:     ]
// DUMP-NEXT:   }
// DUMP-NEXT: ],
// DUMP-NEXT: "outputs": [
// DUMP-NEXT:   {
// DUMP-NEXT:     "dtype": "F32",
// DUMP-NEXT:     "shape": [
// DUMP-NEXT:       1,
// DUMP-NEXT:       4,
// DUMP-NEXT:       8,
// DUMP-NEXT:       8
// DUMP-NEXT:     ]
// DUMP-NEXT:   }
// DUMP-NEXT: ],
// A fatbin per chip (magic 0xba55ed50), shown by its first 16 bytes:
// DUMP-NEXT: "program_type": "CudaProgram",
// DUMP-NEXT: "program": {
// DUMP-NEXT:   "images": [
// DUMP-NEXT:     {
// DUMP-NEXT:       "chip": "sm_90",
// DUMP-NEXT:       "format": "Fatbin",
// DUMP-NEXT:       "data": [
// DUMP-NEXT:         80,
// DUMP-NEXT:         237,
// DUMP-NEXT:         85,
// DUMP-NEXT:         186,
// DUMP-COUNT-11:     {{^ *[0-9]+,$}}
// DUMP-NEXT:         {{^ *[0-9]+, \.\.\. \([1-9][0-9]* bytes\)$}}
// DUMP-NEXT:       ]
// DUMP:            "chip": "sm_86",
// DUMP-NEXT:       "format": "Fatbin",
// DUMP-NEXT:       "data": [
// DUMP-NEXT:         80,
// The host image, an ELF shared object:
// DUMP:            "chip": "host-x86_64",
// DUMP-NEXT:       "format": "HostSo",
// DUMP-NEXT:       "data": [
// DUMP-NEXT:         127,
// DUMP-NEXT:         69,
// DUMP-NEXT:         76,
// DUMP-NEXT:         70,
// Buffers: the parameters (bound by name, 4*3*3*3 f32 = 432 bytes), the
// folded weight and bias (constant), the input, the output.
// DUMP:        "arena_bytes": {{[1-9][0-9]*}},
// DUMP-NEXT:   "buffers": [
// DUMP-NEXT:     {
// DUMP-NEXT:       "kind": "Param",
// DUMP-NEXT:       "name": "conv.weight",
// DUMP-NEXT:       "type": {
// DUMP-NEXT:         "dtype": "F32",
// DUMP:            "bytes": 432,
// DUMP-NEXT:       "offset": {{[0-9]+}}
// DUMP-COUNT-5:    "kind": "Param",
// DUMP:            "kind": "Constant",
// DUMP-NEXT:       "type": {
// DUMP-NEXT:         "dtype": "F32",
// DUMP:            "bytes": 432,
// DUMP:            "kind": "Constant",
// DUMP:            "bytes": 16,
// DUMP:            "kind": "Input",
// DUMP:            "bytes": 768,
// DUMP:            "kind": "Output",
// DUMP:            "bytes": 1024,
// No temporary: the convolution's accumulator stays in registers
// (--eliminate-private-kernel-buffers).
// DUMP-NOT:        "kind": "Temp",
// DUMP:        "inputs": [
// DUMP-NEXT:     {{^ *[0-9]+$}}
// DUMP-NEXT:   ],
// DUMP-NEXT:   "outputs": [
// DUMP-NEXT:     {{^ *[0-9]+$}}
// DUMP-NEXT:   ],
// Kernels with their signatures; the initializer's first (the fold of the
// weight: weight, two BatchNorm vectors, the folded weight).
// DUMP-NEXT:   "kernels": [
// DUMP-NEXT:     {
// DUMP-NEXT:       "name": "forward_init_kernel{{[0-9]+}}",
// DUMP-NEXT:       "args": [
// DUMP-NEXT:         {
// DUMP-NEXT:           "dtype": "F32",
// DUMP-NEXT:           "bytes": 432,
// DUMP-NEXT:           "in_place": false,
// DUMP-NEXT:           "reads": true,
// DUMP-NEXT:           "writes": false
// DUMP-NEXT:         },
// What each argument's kernel reads and writes, for the runtime's plan
// checks: the two BatchNorm vectors read, the folded weight only written.
// DUMP-COUNT-2:      "reads": true,
// DUMP:              "bytes": 432,
// DUMP-NEXT:           "in_place": false,
// DUMP-NEXT:           "reads": false,
// DUMP-NEXT:           "writes": true
// DUMP-NEXT:         }
// DUMP-NEXT:       ],
// DUMP-NEXT:       "shared_bytes": 0
// DUMP:            "name": "forward_kernel{{[0-9]+}}",
// The load-time steps are the BatchNorm's fold (two launches: weight and
// bias); the one forward step (the convolution, its padding read in the
// load, fused with BatchNorm and ReLU) carries the ReLU's location. Each step's sources
// are the distinct locations of its launch and its kernel's body.
// DUMP:        "init": [
// DUMP-NEXT:     {
// DUMP-NEXT:       "kind": "Kernel",
// DUMP-NEXT:       "kernel": 0,
// DUMP-NEXT:       "grid": {
// DUMP-NEXT:         "x": {{[1-9][0-9]*}},
// DUMP-NEXT:         "y": 1,
// DUMP-NEXT:         "z": 1
// DUMP-NEXT:       },
// DUMP-NEXT:       "block": {
// DUMP-NEXT:         "x": {{[1-9][0-9]*}},
// DUMP-NEXT:         "y": 1,
// DUMP-NEXT:         "z": 1
// DUMP-NEXT:       },
// DUMP-NEXT:       "args": [
// DUMP-COUNT-3:      {{^ *[0-9]+,$}}
// DUMP-NEXT:         {{^ *[0-9]+$}}
// DUMP-NEXT:       ],
// DUMP-NEXT:       "loc": "{{.*}}gpuopt-compile-cuda.mlir:[[#BN:]]:{{[0-9]+}}",
// DUMP-NEXT:       "sources": [
// DUMP-NEXT:         "{{.*}}gpuopt-compile-cuda.mlir:[[#BN]]:{{[0-9]+}}"
// DUMP-NEXT:       ]
// DUMP-NEXT:     },
// DUMP:            "loc": "{{.*}}gpuopt-compile-cuda.mlir:[[#BN]]:{{[0-9]+}}",
// DUMP-NEXT:       "sources": [
// DUMP-NEXT:         "{{.*}}gpuopt-compile-cuda.mlir:[[#BN]]:{{[0-9]+}}"
// DUMP-NEXT:       ]
// DUMP-NEXT:     }
// DUMP-NEXT:   ],
// DUMP-NEXT:   "run": [
// DUMP-NEXT:     {
// DUMP-NEXT:       "kind": "Kernel",
// DUMP:            "loc": "{{.*}}gpuopt-compile-cuda.mlir:[[#BN+1]]:{{[0-9]+}}",
// DUMP-NEXT:       "sources": [
// DUMP-NEXT:         "{{.*}}gpuopt-compile-cuda.mlir:[[#BN+1]]:{{[0-9]+}}"
// DUMP-NEXT:       ]
// DUMP-NEXT:     }
// DUMP-NEXT:   ],
// DUMP-NEXT:   "precision": "FP32"
// DUMP-NEXT: },
// DUMP-NEXT: "checksum": {{[0-9]+}}
// DUMP-NEXT: }

// PTX for one chip, no load-time work without the optimization:
// DUMP-PTX:      "chip": "sm_86",
// DUMP-PTX-NEXT: "format": "Ptx",
// DUMP-PTX-NEXT: "data": [
// DUMP-PTX-NEXT:   47,
// DUMP-PTX-NEXT:   47,
// DUMP-PTX:      "chip": "host-x86_64",
// DUMP-PTX-NEXT: "format": "HostSo",
// DUMP-PTX-NOT:  "chip"
// DUMP-PTX:      "kind": "Param",
// DUMP-PTX-NOT:  "kind": "Constant",
// DUMP-PTX:      "init": [
// DUMP-PTX-NOT:  "kind"
// DUMP-PTX:      "run": [
// DUMP-PTX-NEXT:   {
// DUMP-PTX-NEXT:     "kind": "Kernel",
