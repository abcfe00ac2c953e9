// RUN: gpuopt-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(mark-kernel-arguments-noalias))" | FileCheck %s

// An input (read only, also through a view), an output (written only) and
// one in-place argument: every memref argument is noalias, the read-only
// one readonly too; scalars are left alone.
// CHECK-LABEL: gpu.func @kernel
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: index)
gpu.module @kernels {
  gpu.func @kernel(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>, %i: index) kernel {
    %e = memref.expand_shape %x [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
    %c0 = arith.constant 0 : index
    %v = memref.load %e[%c0, %c0] : memref<2x2xf32>
    memref.store %v, %y[%i] : memref<4xf32>
    %w = memref.load %z[%i] : memref<4xf32>
    memref.store %w, %z[%c0] : memref<4xf32>
    gpu.return
  }
}

// -----

// Two in-place arguments may be one buffer (the plan checks allow it):
// neither is noalias; the read-only one still is.
// CHECK-LABEL: gpu.func @negative_two_in_place
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: index)
gpu.module @kernels {
  gpu.func @negative_two_in_place(%a: memref<4xf32>, %b: memref<4xf32>, %x: memref<4xf32>, %i: index) kernel {
    %v = memref.load %a[%i] : memref<4xf32>
    %w = memref.load %b[%i] : memref<4xf32>
    %u = memref.load %x[%i] : memref<4xf32>
    memref.store %w, %a[%i] : memref<4xf32>
    memref.store %v, %b[%i] : memref<4xf32>
    gpu.return
  }
}

// -----

// A use the pass cannot classify counts as a read and a write; functions
// that are not kernels are left alone.
// CHECK-LABEL: gpu.func @negative_unknown_use
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// CHECK-LABEL: gpu.func @negative_not_a_kernel
// CHECK-SAME: (%{{.*}}: memref<4xf32>)
gpu.module @kernels {
  gpu.func @negative_unknown_use(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
    memref.copy %a, %b : memref<4xf32> to memref<4xf32>
    memref.copy %b, %a : memref<4xf32> to memref<4xf32>
    gpu.return
  }
  gpu.func @negative_not_a_kernel(%a: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<4xf32>
    gpu.return
  }
}

// -----

// Workgroup and private attributions are block arguments after the
// function's arguments, not pointers the launch passes: they get nothing
// (and the pass must not index the argument attributes with them; the
// seg-lowering fuzzer found the crash).
// CHECK-LABEL: gpu.func @attributions
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: private(%{{.*}} : memref<2xf32, #gpu.address_space<private>>)
gpu.module @kernels {
  gpu.func @attributions(%a: memref<4xf32>, %b: memref<4xf32>)
      workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>)
      private(%p: memref<2xf32, #gpu.address_space<private>>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<4xf32>
    memref.store %v, %tile[%c0] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %v, %p[%c0] : memref<2xf32, #gpu.address_space<private>>
    memref.store %v, %b[%c0] : memref<4xf32>
    gpu.return
  }
}
