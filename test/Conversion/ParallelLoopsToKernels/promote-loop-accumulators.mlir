// RUN: gpuopt-opt %s -split-input-file --promote-loop-accumulators | FileCheck %s

// A convolution's reduction in a kernel: the accumulator's load and store
// leave the innermost loop, then the middle and the outer one, and the
// value travels in iter_args. The inputs are kernel arguments the kernel
// never writes, so they cannot overlap the accumulator.
// CHECK-LABEL: gpu.func @nested
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x3xf32>, %[[Y:.*]]: memref<4xf32>)
// CHECK: %[[I:.*]] = gpu.thread_id x
// CHECK: memref.store %{{.*}}, %[[Y]][%[[I]]]
// CHECK: %[[A0:.*]] = memref.load %[[Y]][%[[I]]]
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[A0]]) -> (f32)
// CHECK-NOT: memref.load %[[Y]]
// CHECK: scf.for %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f32)
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[W]]
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: memref.store %[[R]], %[[Y]][%[[I]]]
// CHECK-NEXT: gpu.return
gpu.module @kernels {
  gpu.func @nested(%x: memref<4x8xf32>, %w: memref<8x3xf32>, %y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0.0 : f32
    %i = gpu.thread_id x
    memref.store %zero, %y[%i] : memref<4xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      scf.for %t = %c0 to %c3 step %c1 {
        %a = memref.load %x[%i, %k] : memref<4x8xf32>
        %b = memref.load %w[%k, %t] : memref<8x3xf32>
        %acc = memref.load %y[%i] : memref<4xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %y[%i] : memref<4xf32>
      }
    }
    gpu.return
  }
}

// -----

// A register tile's accumulators: elements %o, %o + 1 and %o + 2 of one
// buffer (the same base plus different constants) cannot be each other, so
// all three pairs leave the loop together.
// CHECK-LABEL: gpu.func @constant_offsets
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %[[W:.*]]: memref<6x8xf32>, %[[Y:.*]]: memref<6x4xf32>)
// CHECK: %[[O:.*]] = gpu.thread_id x
// CHECK: %[[O1:.*]] = arith.addi %[[O]], %c1
// CHECK: %[[O2:.*]] = arith.addi %[[O]], %c2
// CHECK: %[[A0:.*]] = memref.load %[[Y]][%[[O]], %c3]
// CHECK: %[[A1:.*]] = memref.load %[[Y]][%[[O1]], %c3]
// CHECK: %[[A2:.*]] = memref.load %[[Y]][%[[O2]], %c3]
// CHECK: %[[R:.*]]:3 = scf.for %{{.*}} iter_args(%{{.*}} = %[[A0]], %{{.*}} = %[[A1]], %{{.*}} = %[[A2]]) -> (f32, f32, f32)
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: memref.store %[[R]]#0, %[[Y]][%[[O]], %c3]
// CHECK: memref.store %[[R]]#1, %[[Y]][%[[O1]], %c3]
// CHECK: memref.store %[[R]]#2, %[[Y]][%[[O2]], %c3]
gpu.module @kernels {
  gpu.func @constant_offsets(%x: memref<8xf32>, %w: memref<6x8xf32>, %y: memref<6x4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %o = gpu.thread_id x
    %o1 = arith.addi %o, %c1 : index
    %o2 = arith.addi %o, %c2 : index
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%k] : memref<8xf32>
      %a0 = memref.load %y[%o, %c3] : memref<6x4xf32>
      %w0 = memref.load %w[%o, %k] : memref<6x8xf32>
      %a1 = memref.load %y[%o1, %c3] : memref<6x4xf32>
      %w1 = memref.load %w[%o1, %k] : memref<6x8xf32>
      %a2 = memref.load %y[%o2, %c3] : memref<6x4xf32>
      %w2 = memref.load %w[%o2, %k] : memref<6x8xf32>
      %s0 = math.fma %v, %w0, %a0 : f32
      %s1 = math.fma %v, %w1, %a1 : f32
      %s2 = math.fma %v, %w2, %a2 : f32
      memref.store %s0, %y[%o, %c3] : memref<6x4xf32>
      memref.store %s1, %y[%o1, %c3] : memref<6x4xf32>
      memref.store %s2, %y[%o2, %c3] : memref<6x4xf32>
    }
    gpu.return
  }
}

// -----

// Offsets from different bases prove nothing (%i + 1 may be %j): the pairs
// stay in the loop.
// CHECK-LABEL: gpu.func @negative_other_base
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.store
// CHECK: memref.store
gpu.module @kernels {
  gpu.func @negative_other_base(%x: memref<8xf32>, %y: memref<9xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %i = gpu.thread_id x
    %j = gpu.block_id x
    %i1 = arith.addi %i, %c1 : index
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%k] : memref<8xf32>
      %a = memref.load %y[%i1] : memref<9xf32>
      %b = memref.load %y[%j] : memref<9xf32>
      %s = arith.addf %a, %v : f32
      %t = arith.addf %b, %v : f32
      memref.store %s, %y[%i1] : memref<9xf32>
      memref.store %t, %y[%j] : memref<9xf32>
    }
    gpu.return
  }
}

// -----

// Allocations and globals overlap nothing else: a scratch buffer written in
// the loop and a constant table do not block the promotion.
// CHECK-LABEL: gpu.func @allocations
// CHECK: %[[T:.*]] = memref.alloca
// CHECK: %[[A0:.*]] = memref.load %[[Y:.*]][%{{.*}}]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[A0]])
// CHECK: memref.get_global
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[Y]]
gpu.module @kernels {
  memref.global "private" constant @table : memref<8xf32> = dense<1.0>
  gpu.func @allocations(%y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %i = gpu.thread_id x
    %t = memref.alloca() : memref<8xf32>
    scf.for %k = %c0 to %c8 step %c1 {
      %g = memref.get_global @table : memref<8xf32>
      %v = memref.load %g[%k] : memref<8xf32>
      memref.store %v, %t[%k] : memref<8xf32>
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    gpu.return
  }
}

// -----

// Another element of the same buffer read in the loop may be the one
// stored: no promotion.
// CHECK-LABEL: gpu.func @negative_same_buffer
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.load %{{.*}}[%{{.*}}]
// CHECK: memref.store
gpu.module @kernels {
  gpu.func @negative_same_buffer(%y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i = gpu.thread_id x
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %y[%k] : memref<4xf32>
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    gpu.return
  }
}

// -----

// The same buffer through a view aliases it too.
// CHECK-LABEL: gpu.func @negative_view
// CHECK-NOT: iter_args
gpu.module @kernels {
  gpu.func @negative_view(%y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i = gpu.thread_id x
    %e = memref.expand_shape %y [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
    scf.for %k = %c0 to %c4 step %c1 {
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %acc : f32
      memref.store %s, %y[%i] : memref<4xf32>
      memref.store %s, %e[%c0, %c1] : memref<2x2xf32>
    }
    gpu.return
  }
}

// -----

// A kernel argument the kernel also writes may be the same buffer as the
// accumulator's (two in-place arguments the plan checks allow): its read
// blocks the promotion.
// CHECK-LABEL: gpu.func @negative_written_argument
// CHECK-NOT: iter_args
gpu.module @kernels {
  gpu.func @negative_written_argument(%x: memref<4xf32>, %y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    %i = gpu.thread_id x
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %x[%k] : memref<4xf32>
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    memref.store %zero, %x[%i] : memref<4xf32>
    gpu.return
  }
}

// -----

// Outside a kernel the plan checks say nothing: two function arguments may
// overlap.
// CHECK-LABEL: func.func @negative_function_arguments
// CHECK-NOT: iter_args
func.func @negative_function_arguments(%x: memref<4xf32>, %y: memref<4xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %k = %c0 to %c4 step %c1 {
    %v = memref.load %x[%k] : memref<4xf32>
    %acc = memref.load %y[%i] : memref<4xf32>
    %s = arith.addf %acc, %v : f32
    memref.store %s, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// A loop that may not run: hoisting would add an access the loop does not
// make (with a bound of 0 an index could be out of range).
// CHECK-LABEL: gpu.func @negative_maybe_empty
// CHECK-NOT: iter_args
gpu.module @kernels {
  gpu.func @negative_maybe_empty(%x: memref<4xf32>, %y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %i = gpu.thread_id x
    %n = gpu.block_dim x
    scf.for %k = %c0 to %n step %c1 {
      %v = memref.load %x[%c0] : memref<4xf32>
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    gpu.return
  }
}

// -----

// The index changes with the loop: each iteration is another element.
// CHECK-LABEL: gpu.func @negative_variant_index
// CHECK-NOT: iter_args
gpu.module @kernels {
  gpu.func @negative_variant_index(%y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %k = %c0 to %c4 step %c1 {
      %acc = memref.load %y[%k] : memref<4xf32>
      %s = arith.addf %acc, %acc : f32
      memref.store %s, %y[%k] : memref<4xf32>
    }
    gpu.return
  }
}

// -----

// An op whose memory effects are unknown may touch anything.
// CHECK-LABEL: func.func @negative_unknown_effects
// CHECK-NOT: iter_args
func.func private @opaque()
func.func @negative_unknown_effects(%i: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %y = memref.alloc() : memref<4xf32>
  scf.for %k = %c0 to %c4 step %c1 {
    %acc = memref.load %y[%i] : memref<4xf32>
    func.call @opaque() : () -> ()
    %s = arith.addf %acc, %acc : f32
    memref.store %s, %y[%i] : memref<4xf32>
  }
  return
}

// -----

// The store before the load: the load reads this iteration's store, not
// the loop-carried value of the last; left alone.
// CHECK-LABEL: gpu.func @negative_store_first
// CHECK-NOT: iter_args
gpu.module @kernels {
  gpu.func @negative_store_first(%x: memref<4xf32>, %y: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i = gpu.thread_id x
    scf.for %k = %c0 to %c4 step %c1 {
      %v = memref.load %x[%k] : memref<4xf32>
      memref.store %v, %y[%i] : memref<4xf32>
      %acc = memref.load %y[%i] : memref<4xf32>
      %s = arith.addf %acc, %v : f32
      memref.store %s, %y[%i] : memref<4xf32>
    }
    gpu.return
  }
}
