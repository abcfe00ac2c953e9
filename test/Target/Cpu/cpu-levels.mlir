// gpuopt-compile --cpu=LEVEL: the generated code (--emit=asm: without the
// runtime kernels, which carry target-attributed AVX-512 code by design and
// choose at run time) uses only the level's extensions, and the metadata
// records exactly those.
// RUN: gpuopt-compile %s --cpu=x86-64-v2 --emit=asm -o %t.v2.s
// RUN: FileCheck %s --check-prefix=V2 --implicit-check-not=ymm --implicit-check-not=zmm < %t.v2.s
// RUN: gpuopt-compile %s --cpu=x86-64-v3 --emit=asm -o %t.v3.s
// RUN: FileCheck %s --check-prefix=V3 --implicit-check-not=zmm --implicit-check-not='{%k' < %t.v3.s
// RUN: gpuopt-compile %s --cpu=x86-64-v4 --emit=asm -o %t.v4.s
// RUN: FileCheck %s --check-prefix=V4 < %t.v4.s
// RUN: gpuopt-compile %s --cpu=x86-64 --emit=asm -o %t.v1.s
// RUN: FileCheck %s --check-prefix=V1 --implicit-check-not=ymm < %t.v1.s

// Bad levels and options: a message naming the levels, exit code 1.
// RUN: not gpuopt-compile %s --cpu=x86-64-v5 -o %t.so 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gpuopt-compile %s --cpu= -o %t.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gpuopt-compile %s --target=cuda --cpu=x86-64-v3 -o %t.gpuopt 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not gpuopt-compile %s --emit=obj -o %t.o 2>&1 | FileCheck %s --check-prefix=EMIT

// V2: gpuopt_compiled_forward:
// V2: "cpu\":\"x86-64-v2\",\"cpu_features\":[\"cx16\",\"sahf\",\"popcnt\",\"sse3\",\"ssse3\",\"sse4.1\",\"sse4.2\"]
// V3: forward_op0:
// V3: {{v[a-z0-9]+ .*%ymm}}
// V3: gpuopt_compiled_forward:
// V3: "cpu\":\"x86-64-v3\",\"cpu_features\":[\"cx16\",\"sahf\",\"popcnt\",\"sse3\",\"ssse3\",\"sse4.1\",\"sse4.2\",\"avx\",\"avx2\",\"bmi\",\"bmi2\",\"f16c\",\"fma\",\"lzcnt\",\"movbe\",\"xsave\"]
// V4: forward_op0:
// V4: {{v[a-z0-9]+ .*%zmm}}
// V4: gpuopt_compiled_forward:
// V4: "cpu\":\"x86-64-v4\",\"cpu_features\":[{{.*}}\"xsave\",\"avx512f\",\"avx512bw\",\"avx512cd\",\"avx512dq\",\"avx512vl\"]
// V1: gpuopt_compiled_forward:
// V1: "cpu\":\"x86-64\",\"cpu_features\":[]

// UNKNOWN: gpuopt-compile: error: unknown --cpu level 'x86-64-v5' (levels: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4)
// EMPTY: gpuopt-compile: error: unknown --cpu level '' (levels: native,
// CUDA: gpuopt-compile: error: --cpu applies to --target=cpu, not --target=cuda
// EMIT: gpuopt-compile: error: --emit must be lib or asm, got 'obj'

// Elementwise work on 16-float rows, which LLVM vectorises at each level's
// width.
func.func @forward(%x: tensor<1x4x16x16xf32>, %r: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %y = seg.relu %x : tensor<1x4x16x16xf32>
  %z = seg.add %y, %r : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  return %z : tensor<1x4x16x16xf32>
}
