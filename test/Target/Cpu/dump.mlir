// gpuopt-run --dump: the metadata of a CPU model library (an artifact
// FlatBuffer, runtime/include/gpuopt/Runtime/CompiledModel.h) printed as
// text without loading the library, field by field; the same buffer as a
// whole-file artifact (.gpuopt) prints the same; damaged and foreign files
// are one located error line and exit code 1.
// RUN: gpuopt-compile %s --cpu=x86-64-v2 -o %t.so
// RUN: gpuopt-run --dump %t.so | FileCheck %s --match-full-lines
// The section holds the 32-byte note, then the artifact.
// RUN: llvm-objcopy --dump-section gpuopt_model=%t.section %t.so %t.copy.so
// RUN: tail -c +33 %t.section > %t.gpuopt
// RUN: gpuopt-run --dump %t.gpuopt | FileCheck %s --match-full-lines

// Errors.
// RUN: head -c 200 %t.gpuopt > %t.cut.gpuopt
// RUN: not gpuopt-run --dump %t.cut.gpuopt 2>&1 | FileCheck %s --check-prefix=CUT -DFILE=%t.cut.gpuopt
// RUN: printf 'GPOA' > %t.short.gpuopt
// RUN: not gpuopt-run --dump %t.short.gpuopt 2>&1 | FileCheck %s --check-prefix=NEITHER -DFILE=%t.short.gpuopt
// RUN: not gpuopt-run --dump %s 2>&1 | FileCheck %s --check-prefix=NEITHER -DFILE=%s
// RUN: head -c 1000 %t.so > %t.cut.so
// RUN: not gpuopt-run --dump %t.cut.so 2>&1 | FileCheck %s --check-prefix=CUT-SO -DFILE=%t.cut.so
// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: not gpuopt-run --dump %t.dir 2>&1 | FileCheck %s --check-prefix=DIR -DFILE=%t.dir
// RUN: not gpuopt-run --dump %t.so --weights=%t.safetensors 2>&1 | FileCheck %s --check-prefix=FLAGS

// CUT: gpuopt-run: error: [[FILE]]: invalid gpuopt artifact: the buffer does not verify against the schema (truncated or damaged)
// NEITHER: gpuopt-run: error: [[FILE]] is neither a gpuopt model library nor a gpuopt artifact
// CUT-SO: gpuopt-run: error: cannot load [[FILE]]: truncated or corrupt: loadable segment {{[0-9]+}} ends at byte {{[0-9]+}}, the file has 1000 bytes
// DIR: gpuopt-run: error: cannot read [[FILE]]: not a regular file (directory)
// FLAGS: gpuopt-run: error: --dump prints the artifact and runs nothing; it takes no --weights, --input, --output, --backend, --cpu, --runs or --device

// Two inputs, a parameter read by the initializer (the reshape is hoisted:
// a derived argument) and by the forward function itself.
// CHECK:      {
// CHECK-NEXT:   "version": 1,
// CHECK-NEXT:   "entry": "forward",
// CHECK-NEXT:   "params": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "name": "pos",
// CHECK-NEXT:       "type": {
// CHECK-NEXT:         "dtype": "F32",
// CHECK-NEXT:         "shape": [
// CHECK-NEXT:           4,
// CHECK-NEXT:           4
// CHECK-NEXT:         ]
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   ],
// CHECK-NEXT:   "inputs": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "dtype": "F32",
// CHECK-NEXT:       "shape": [
// CHECK-NEXT:         1,
// CHECK-NEXT:         2,
// CHECK-NEXT:         2,
// CHECK-NEXT:         4
// CHECK-NEXT:       ]
// CHECK-NEXT:     },
// CHECK-NEXT:     {
// CHECK-NEXT:       "dtype": "F32",
// CHECK-NEXT:       "shape": [
// CHECK-NEXT:         1,
// CHECK-NEXT:         4,
// CHECK-NEXT:         4
// CHECK-NEXT:       ]
// CHECK-NEXT:     }
// CHECK-NEXT:   ],
// CHECK-NEXT:   "outputs": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "dtype": "F32",
// CHECK-NEXT:       "shape": [
// CHECK-NEXT:         1,
// CHECK-NEXT:         4,
// CHECK-NEXT:         4
// CHECK-NEXT:       ]
// CHECK-NEXT:     }
// CHECK-NEXT:   ],
// CHECK-NEXT:   "program_type": "CpuProgram",
// CHECK-NEXT:   "program": {
// CHECK-NEXT:     "cpu": "x86-64-v2",
// CHECK-NEXT:     "cpu_features": [
// CHECK-NEXT:       "cx16",
// CHECK-NEXT:       "sahf",
// CHECK-NEXT:       "popcnt",
// CHECK-NEXT:       "sse3",
// CHECK-NEXT:       "ssse3",
// CHECK-NEXT:       "sse4.1",
// CHECK-NEXT:       "sse4.2"
// CHECK-NEXT:     ],
// CHECK-NEXT:     "init": {
// CHECK-NEXT:       "args": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "kind": "Param",
// CHECK-NEXT:           "index": 0,
// CHECK-NEXT:           "type": {
// CHECK-NEXT:             "dtype": "F32",
// CHECK-NEXT:             "shape": [
// CHECK-NEXT:               4,
// CHECK-NEXT:               4
// CHECK-NEXT:             ]
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       ],
// CHECK-NEXT:       "results": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "dtype": "F32",
// CHECK-NEXT:           "shape": [
// CHECK-NEXT:             1,
// CHECK-NEXT:             2,
// CHECK-NEXT:             2,
// CHECK-NEXT:             4
// CHECK-NEXT:           ]
// CHECK-NEXT:         }
// CHECK-NEXT:       ]
// CHECK-NEXT:     },
// CHECK-NEXT:     "forward": {
// CHECK-NEXT:       "args": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "kind": "Input",
// CHECK-NEXT:           "index": 0,
// CHECK-NEXT:           "type": {
// CHECK-NEXT:             "dtype": "F32",
// CHECK-NEXT:             "shape": [
// CHECK-NEXT:               1,
// CHECK-NEXT:               2,
// CHECK-NEXT:               2,
// CHECK-NEXT:               4
// CHECK-NEXT:             ]
// CHECK-NEXT:           }
// CHECK-NEXT:         },
// CHECK-NEXT:         {
// CHECK-NEXT:           "kind": "Input",
// CHECK-NEXT:           "index": 1,
// CHECK-NEXT:           "type": {
// CHECK-NEXT:             "dtype": "F32",
// CHECK-NEXT:             "shape": [
// CHECK-NEXT:               1,
// CHECK-NEXT:               4,
// CHECK-NEXT:               4
// CHECK-NEXT:             ]
// CHECK-NEXT:           }
// CHECK-NEXT:         },
// CHECK-NEXT:         {
// CHECK-NEXT:           "kind": "Derived",
// CHECK-NEXT:           "index": 0,
// CHECK-NEXT:           "type": {
// CHECK-NEXT:             "dtype": "F32",
// CHECK-NEXT:             "shape": [
// CHECK-NEXT:               1,
// CHECK-NEXT:               2,
// CHECK-NEXT:               2,
// CHECK-NEXT:               4
// CHECK-NEXT:             ]
// CHECK-NEXT:           }
// CHECK-NEXT:         },
// CHECK-NEXT:         {
// CHECK-NEXT:           "kind": "Param",
// CHECK-NEXT:           "index": 0,
// CHECK-NEXT:           "type": {
// CHECK-NEXT:             "dtype": "F32",
// CHECK-NEXT:             "shape": [
// CHECK-NEXT:               4,
// CHECK-NEXT:               4
// CHECK-NEXT:             ]
// CHECK-NEXT:           }
// CHECK-NEXT:         }
// CHECK-NEXT:       ],
// CHECK-NEXT:       "results": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "dtype": "F32",
// CHECK-NEXT:           "shape": [
// CHECK-NEXT:             1,
// CHECK-NEXT:             4,
// CHECK-NEXT:             4
// CHECK-NEXT:           ]
// CHECK-NEXT:         }
// CHECK-NEXT:       ]
// CHECK-NEXT:     }
// CHECK-NEXT:   },
// CHECK-NEXT:   "checksum": {{[0-9]+}}
// CHECK-NEXT: }

func.func @forward(%x: tensor<1x2x2x4xf32>, %y: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %p = seg.param "pos" : tensor<4x4xf32>
  %r = seg.reshape %p : tensor<4x4xf32> -> tensor<1x2x2x4xf32>
  %a = seg.add %x, %r : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  %t = seg.reshape %a : tensor<1x2x2x4xf32> -> tensor<1x4x4xf32>
  %m = seg.linear %t, %p : tensor<1x4x4xf32>, tensor<4x4xf32> -> tensor<1x4x4xf32>
  %b = seg.add %m, %y : tensor<1x4x4xf32>, tensor<1x4x4xf32> -> tensor<1x4x4xf32>
  return %b : tensor<1x4x4xf32>
}
