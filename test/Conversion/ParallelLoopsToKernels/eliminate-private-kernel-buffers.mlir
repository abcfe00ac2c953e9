// RUN: gpuopt-opt %s -split-input-file --eliminate-private-kernel-buffers | FileCheck %s

// A convolution's accumulator after kernel outlining and accumulator
// promotion: filled with zero, loaded as the reduction's start, stored
// after it and loaded by the epilogue, by one thread per element (two
// accumulators per thread: a register tile). Only this launch uses the
// allocation: the loads take the stored values, the stores go, the
// argument and the allocation too.
// CHECK-LABEL: func.func @accumulator
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func @kernels::@conv blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(%{{[^ ]*}} : memref<8xf32>, %{{[^ ]*}} : memref<8xf32>)
// CHECK-NOT: memref.dealloc
// CHECK: gpu.func @conv(%[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>) kernel
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NOT: memref.store %[[ZERO]]
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK: arith.addf %[[R]]#0
// CHECK: arith.addf %[[R]]#1
// CHECK-NOT: memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
module attributes {gpu.container_module} {
  func.func @accumulator(%x: memref<8xf32>, %y: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %acc = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@conv blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%x : memref<8xf32>, %acc : memref<8xf32>, %y : memref<8xf32>)
    memref.dealloc %acc : memref<8xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @conv(%x: memref<8xf32>, %acc: memref<8xf32>, %y: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %o = arith.muli %t, %c2 : index
      %o1 = arith.addi %o, %c1 : index
      %in = arith.cmpi ult, %o, %c8 : index
      scf.if %in {
        memref.store %zero, %acc[%o] : memref<8xf32>
        memref.store %zero, %acc[%o1] : memref<8xf32>
        %a0 = memref.load %acc[%o] : memref<8xf32>
        %b0 = memref.load %acc[%o1] : memref<8xf32>
        %r:2 = scf.for %k = %c0 to %c8 step %c1 iter_args(%a = %a0, %b = %b0) -> (f32, f32) {
          %v = memref.load %x[%k] : memref<8xf32>
          %s = arith.addf %a, %v : f32
          %u = arith.addf %b, %v : f32
          scf.yield %s, %u : f32, f32
        }
        memref.store %r#0, %acc[%o] : memref<8xf32>
        memref.store %r#1, %acc[%o1] : memref<8xf32>
        %e0 = memref.load %acc[%o] : memref<8xf32>
        %e1 = memref.load %acc[%o1] : memref<8xf32>
        %y0 = arith.addf %e0, %zero : f32
        %y1 = arith.addf %e1, %zero : f32
        memref.store %y0, %y[%o] : memref<8xf32>
        memref.store %y1, %y[%o1] : memref<8xf32>
      }
      gpu.return
    }
  }
}

// -----

// A load inside an scf.if takes the value stored before the scf.if (which
// runs at most once).
// CHECK-LABEL: gpu.func @through_if
// CHECK-SAME: (%[[Y:.*]]: memref<4xf32>, %{{.*}}: i1)
// CHECK-NOT: memref.load
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
module attributes {gpu.container_module} {
  func.func @host(%y: memref<4xf32>, %p: i1) {
    %c1 = arith.constant 1 : index
    %tmp = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@through_if blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp : memref<4xf32>, %y : memref<4xf32>, %p : i1)
    return
  }
  gpu.module @kernels {
    gpu.func @through_if(%tmp: memref<4xf32>, %y: memref<4xf32>, %p: i1) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<4xf32>
      scf.if %p {
        %v = memref.load %tmp[%t] : memref<4xf32>
        memref.store %v, %y[%t] : memref<4xf32>
      }
      gpu.return
    }
  }
}

// -----

// Another launch reads the buffer: it stays.
// CHECK-LABEL: func.func @negative_read_by_another_launch
// CHECK: memref.alloc
// CHECK: gpu.func @producer(%{{.*}}: memref<4xf32>) kernel
// CHECK: memref.store
module attributes {gpu.container_module} {
  func.func @negative_read_by_another_launch(%y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %tmp = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@producer blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp : memref<4xf32>)
    gpu.launch_func @kernels::@consumer blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp : memref<4xf32>, %y : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @producer(%tmp: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @consumer(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A load whose stored value is not certain keeps the buffer (each kernel
// has one such load): one that runs before any store, one at another
// element (%t + 1 may be another thread's), one after a store at an index
// that may or may not be its own, one after a loop that stores to it.
// CHECK-LABEL: gpu.func @negative_before_store
// CHECK-SAME: (%[[TMP:[^:]*]]: memref<8xf32>,
// CHECK: memref.load %[[TMP]]
// CHECK-LABEL: gpu.func @negative_other_element
// CHECK-SAME: (%[[TMP:[^:]*]]: memref<8xf32>,
// CHECK: memref.load %[[TMP]]
// CHECK-LABEL: gpu.func @negative_maybe_same_element
// CHECK-SAME: (%[[TMP:[^:]*]]: memref<8xf32>,
// CHECK: memref.load %[[TMP]]
// CHECK-LABEL: gpu.func @negative_after_loop
// CHECK-SAME: (%[[TMP:[^:]*]]: memref<8xf32>,
// CHECK: memref.load %[[TMP]]
module attributes {gpu.container_module} {
  func.func @host(%y: memref<8xf32>, %j: index) {
    %c1 = arith.constant 1 : index
    %tmp0 = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@negative_before_store blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp0 : memref<8xf32>, %y : memref<8xf32>, %j : index)
    %tmp1 = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@negative_other_element blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp1 : memref<8xf32>, %y : memref<8xf32>, %j : index)
    %tmp2 = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@negative_maybe_same_element blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp2 : memref<8xf32>, %y : memref<8xf32>, %j : index)
    %tmp3 = memref.alloc() : memref<8xf32>
    gpu.launch_func @kernels::@negative_after_loop blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%tmp3 : memref<8xf32>, %y : memref<8xf32>, %j : index)
    return
  }
  gpu.module @kernels {
    gpu.func @negative_before_store(%tmp: memref<8xf32>, %y: memref<8xf32>, %j: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %t1 = arith.addi %t, %c1 : index
      %one = arith.constant 1.0 : f32
      %v = memref.load %tmp[%t] : memref<8xf32>
      memref.store %one, %tmp[%t] : memref<8xf32>
      memref.store %v, %y[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @negative_other_element(%tmp: memref<8xf32>, %y: memref<8xf32>, %j: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %t1 = arith.addi %t, %c1 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<8xf32>
      %v = memref.load %tmp[%t1] : memref<8xf32>
      memref.store %v, %y[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @negative_maybe_same_element(%tmp: memref<8xf32>, %y: memref<8xf32>, %j: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %t1 = arith.addi %t, %c1 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<8xf32>
      memref.store %one, %tmp[%j] : memref<8xf32>
      %v = memref.load %tmp[%t] : memref<8xf32>
      memref.store %v, %y[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @negative_after_loop(%tmp: memref<8xf32>, %y: memref<8xf32>, %j: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %t1 = arith.addi %t, %c1 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<8xf32>
      scf.for %k = %c0 to %c4 step %c1 {
        memref.store %one, %tmp[%t] : memref<8xf32>
      }
      %v = memref.load %tmp[%t] : memref<8xf32>
      memref.store %v, %y[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Threads that synchronize may read what another thread stored: a load
// whose store lies before a barrier keeps its buffer. So does a buffer used through a view,
// a function argument (not an allocation) and an allocation the host uses
// otherwise.
// CHECK-LABEL: gpu.func @negative_barrier
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: memref.load
// CHECK-LABEL: gpu.func @negative_view
// CHECK: memref.subview
// CHECK-LABEL: gpu.func @negative_argument
// CHECK: memref.store
// CHECK: memref.load
// CHECK-LABEL: gpu.func @negative_host_use
// CHECK: memref.store
// CHECK: memref.load
module attributes {gpu.container_module} {
  func.func @host(%arg: memref<4xf32>, %y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %a = memref.alloc() : memref<4xf32>
    %b = memref.alloc() : memref<4xf32>
    %c = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@negative_barrier blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %y : memref<4xf32>)
    gpu.launch_func @kernels::@negative_view blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>, %y : memref<4xf32>)
    gpu.launch_func @kernels::@negative_argument blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg : memref<4xf32>, %y : memref<4xf32>)
    gpu.launch_func @kernels::@negative_host_use blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c : memref<4xf32>, %y : memref<4xf32>)
    memref.copy %c, %y : memref<4xf32> to memref<4xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @negative_barrier(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<4xf32>
      gpu.barrier
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @negative_view(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %s = memref.subview %tmp[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
      memref.store %one, %s[%t] : memref<4xf32, strided<[1]>>
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @negative_argument(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<4xf32>
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
    gpu.func @negative_host_use(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tmp[%t] : memref<4xf32>
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A barrier elsewhere in the kernel does not matter (a workgroup-tiled
// convolution's accumulator: stored and loaded per output after the last
// barrier): the load takes the value, the buffer goes.
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @kernels::@barrier_elsewhere {{.*}} args(%{{.*}} : memref<4xf32>)
// CHECK-LABEL: gpu.func @barrier_elsewhere
// CHECK-SAME: (%[[Y:.*]]: memref<4xf32>)
// CHECK: gpu.barrier
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[Y]]
module attributes {gpu.container_module} {
  func.func @host(%y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@barrier_elsewhere blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %y : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @barrier_elsewhere(%tmp: memref<4xf32>, %y: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      gpu.barrier
      memref.store %one, %tmp[%t] : memref<4xf32>
      %v = memref.load %tmp[%t] : memref<4xf32>
      memref.store %v, %y[%t] : memref<4xf32>
      gpu.return
    }
  }
}
