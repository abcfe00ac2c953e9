// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host | FileCheck %s

// Threads that communicate: a workgroup attribution becomes an argument
// after the kernel's (one block's memory, the emulator's), a private one an
// alloca of the thread; each gpu.barrier a call of the emulator's barrier
// hook with its site, numbered in the order of the kernel's text.
// CHECK-LABEL: func.func @reverse(
// CHECK-SAME: %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index, %[[TX:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64xf32>, %[[B:[a-z0-9_]+]]: memref<64xf32>,
// CHECK-SAME: %[[TILE:[a-z0-9_]+]]: memref<32xf32>, %{{[a-z0-9_]+}}: memref<4xi8>, %{{[a-z0-9_]+}}: memref<3xi32>)
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_syncs, gpuopt.host_workgroup = array<i64: 156, 0, 128, 144>}
// CHECK: %[[P:.*]] = memref.alloca() : memref<2xf32>
// CHECK: %[[V:.*]] = memref.load %[[A]][%[[TX]]] : memref<64xf32>
// CHECK: memref.store %[[V]], %[[TILE]][%[[TX]]] : memref<32xf32>
// CHECK: memref.store %[[V]], %[[P]][%{{.*}}] : memref<2xf32>
// CHECK: %[[S0:.*]] = arith.constant 0 : i64
// CHECK: call @__gpuopt_host_barrier(%[[S0]]) : (i64) -> ()
// CHECK: %[[W:.*]] = memref.load %[[TILE]][%{{.*}}] : memref<32xf32>
// CHECK: memref.store %[[W]], %[[B]][%[[TX]]] : memref<64xf32>
// CHECK: %[[S1:.*]] = arith.constant 1 : i64
// CHECK: call @__gpuopt_host_barrier(%[[S1]]) : (i64) -> ()
// CHECK: return
// CHECK: func.func private @__gpuopt_host_barrier(i64)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reverse(%a: memref<64xf32>, %b: memref<64xf32>)
        workgroup(%tile: memref<32xf32, #gpu.address_space<workgroup>>,
                  %other: memref<4xi8, #gpu.address_space<workgroup>>,
                  %flags: memref<3xi32, #gpu.address_space<workgroup>>)
        private(%p: memref<2xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      %c31 = arith.constant 31 : index
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<64xf32>
      memref.store %v, %tile[%t] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %v, %p[%c0] : memref<2xf32, #gpu.address_space<private>>
      gpu.barrier
      %r = arith.subi %c31, %t : index
      %w = memref.load %tile[%r] : memref<32xf32, #gpu.address_space<workgroup>>
      memref.store %w, %b[%t] : memref<64xf32>
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// A shuffle deposits the 32 bits of its value with its site, mode (0 xor,
// 1 up, 2 down, 3 idx), offset and width, and gets the value read (bits
// 0..31) and `valid` (bit 32). Views of workgroup memory keep their layout
// in the default memory space.
// CHECK-LABEL: func.func @warp_sum(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<32xf32>, %[[TILE:[a-z0-9_]+]]: memref<8x4xf32>)
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_syncs, gpuopt.host_workgroup = array<i64: 128, 0>}
// CHECK: %[[V:.*]] = memref.load %[[A]]
// CHECK: %[[BITS:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK-DAG: %[[SITE:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[XOR:.*]] = arith.constant 0 : i64
// CHECK: %[[B64:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: %[[O64:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[W64:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[R:.*]] = call @__gpuopt_host_shuffle(%[[SITE]], %[[XOR]], %[[B64]], %[[O64]], %[[W64]]) : (i64, i64, i64, i64, i64) -> i64
// CHECK: %[[LO:.*]] = arith.trunci %[[R]] : i64 to i32
// CHECK: %[[F:.*]] = arith.bitcast %[[LO]] : i32 to f32
// CHECK: %[[C32:.*]] = arith.constant 32 : i64
// CHECK: %[[HI:.*]] = arith.shrui %[[R]], %[[C32]] : i64
// CHECK: %[[VALID:.*]] = arith.trunci %[[HI]] : i64 to i1
// CHECK: %[[SUM:.*]] = arith.addf %[[V]], %[[F]] : f32
// CHECK: arith.select %[[VALID]], %[[SUM]], %[[V]] : f32
// CHECK: %[[SITE1:.*]] = arith.constant 1 : i64
// CHECK: %[[DOWN:.*]] = arith.constant 2 : i64
// CHECK: call @__gpuopt_host_shuffle(%[[SITE1]], %[[DOWN]],
// CHECK-NOT: arith.bitcast
// CHECK: arith.constant 3 : i64
// CHECK: call @__gpuopt_host_shuffle
// CHECK: arith.constant 1 : i64
// CHECK: call @__gpuopt_host_shuffle
// CHECK: %[[VIEW:.*]] = memref.subview %[[TILE]][0, 0] [8, 1] [1, 1] : memref<8x4xf32> to memref<8xf32, strided<[4]>>
// CHECK: memref.store %{{.*}}, %[[VIEW]][%{{.*}}] : memref<8xf32, strided<[4]>>
// CHECK: func.func private @__gpuopt_host_shuffle(i64, i64, i64, i64, i64) -> i64
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @warp_sum(%a: memref<32xf32>)
        workgroup(%tile: memref<8x4xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<32xf32>
      %one = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      %r, %ok = gpu.shuffle xor %v, %one, %w : f32
      %s = arith.addf %v, %r : f32
      %sum = arith.select %ok, %s, %v : f32
      %i = arith.bitcast %sum : f32 to i32
      %d, %ok1 = gpu.shuffle down %i, %one, %w : i32
      %x, %ok2 = gpu.shuffle idx %d, %one, %w : i32
      %u, %ok3 = gpu.shuffle up %x, %one, %w : i32
      %f = arith.bitcast %u : i32 to f32
      %col = memref.subview %tile[0, 0] [8, 1] [1, 1] : memref<8x4xf32, #gpu.address_space<workgroup>> to memref<8xf32, strided<[4]>, #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      memref.store %f, %col[%c0] : memref<8xf32, strided<[4]>, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

// Lanes and warps: 32-lane warps of the linear thread id, x fastest.
// CHECK-LABEL: func.func @lanes(
// CHECK-SAME: %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index,
// CHECK-SAME: %[[TX:[a-z0-9_]+]]: index, %[[TY:[a-z0-9_]+]]: index, %[[TZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[NX:[a-z0-9_]+]]: index, %[[NY:[a-z0-9_]+]]: index, %[[NZ:[a-z0-9_]+]]: index,
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_workgroup = array<i64: 0>}
// CHECK: %[[YZ:.*]] = arith.muli %[[NY]], %[[TZ]] : index
// CHECK: %[[Y:.*]] = arith.addi %[[TY]], %[[YZ]] : index
// CHECK: %[[XY:.*]] = arith.muli %[[NX]], %[[Y]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[TX]], %[[XY]] : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[LANE:.*]] = arith.remui %[[LIN]], %[[C32]] : index
// CHECK: %[[WARP:.*]] = arith.divui %{{.*}}, %{{.*}} : index
// CHECK: %[[THREADS:.*]] = arith.muli %[[NX]], %{{.*}} : index
// CHECK: %[[WARPS:.*]] = arith.ceildivui %[[THREADS]], %{{.*}} : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[LANE]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[WARP]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[WARPS]]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @lanes(%a: memref<64xf32>) kernel {
      %l = gpu.lane_id
      %w = gpu.subgroup_id : index
      %s = gpu.subgroup_size : index
      %n = gpu.num_subgroups : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %a[%l] : memref<64xf32>
      memref.store %f, %a[%w] : memref<64xf32>
      memref.store %f, %a[%n] : memref<64xf32>
      memref.store %f, %a[%s] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// A TF32 mma.sync: the lane's fragments go to allocas at the function's
// entry (not in the loop: the fiber's stack would grow every iteration),
// row-major, the hook multiplies the warp's tile (site 0, shape 0 =
// 16x8x8; the second mma is site 1, shape 1 = 16x8x4, whose A and B fill
// the first 2 and 1 of the same sizes: one hook signature) and D comes back
// from C's alloca.
// CHECK-LABEL: func.func @mma(
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_syncs, gpuopt.host_workgroup = array<i64: 0>}
// CHECK-COUNT-6: memref.alloca() : memref<{{[24]}}xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: %[[E:.*]] = vector.extract %{{.*}}[1, 0] : f32 from vector<4x1xf32>
// CHECK: memref.store %[[E]], %[[A8:[a-z0-9_]+]][%{{.*}}] : memref<4xf32>
// CHECK: %[[E2:.*]] = vector.extract %{{.*}}[1, 0] : f32 from vector<2x2xf32>
// CHECK: memref.store %[[E2]], %[[C8:[a-z0-9_]+]][%{{.*}}] : memref<4xf32>
// CHECK: call @__gpuopt_host_mma(%c0_i64{{.*}}, %c0_i64{{.*}}, %[[A8]], %{{[a-z0-9_]+}}, %[[C8]]) : (i64, i64, memref<4xf32>, memref<2xf32>, memref<4xf32>) -> ()
// CHECK-COUNT-4: memref.load %[[C8]]
// CHECK: vector.from_elements {{.*}} : vector<2x2xf32>
// CHECK: call @__gpuopt_host_mma(%c1_i64{{.*}}, %c1_i64{{.*}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}})
// CHECK: func.func private @__gpuopt_host_mma(i64, i64, memref<4xf32>, memref<2xf32>, memref<4xf32>)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mma(%out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %f = arith.constant 1.0 : f32
      %a = vector.broadcast %f : f32 to vector<4x1xf32>
      %b = vector.broadcast %f : f32 to vector<2x1xf32>
      %c = vector.broadcast %f : f32 to vector<2x2xf32>
      %d = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %c) -> (vector<2x2xf32>) {
        %n = nvgpu.mma.sync (%a, %b, %acc) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %n : vector<2x2xf32>
      }
      %a4 = vector.broadcast %f : f32 to vector<2x1xf32>
      %b4 = vector.broadcast %f : f32 to vector<1x1xf32>
      %e = nvgpu.mma.sync (%a4, %b4, %d) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      %v = vector.extract %e[0, 1] : f32 from vector<2x2xf32>
      memref.store %v, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Asynchronous copies (PTX cp.async): per element, the source element is
// read if it is within the copy's source elements (else 0: the zero
// fill), the destination element is poisoned (all bits set, NaN) and its
// address, bits and size go to the emulator's copy hook, which writes it
// when the thread waits for its group; a group commits, a wait names the
// groups it may leave pending (numGroups, 0 by default). The kernel runs as
// fibers (gpuopt.host_syncs): its threads keep pending copies. Without
// bounds checks nothing checks the 16-byte alignment (the -bounds test
// does).
// CHECK-LABEL: func.func @async_copy(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: memref<64xf32>, %[[TILE:[a-z0-9_]+]]: memref<2x8xf32>)
// CHECK-SAME: gpuopt.host_syncs
// CHECK-NOT: nvgpu.
// CHECK: %[[POISON:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[TILE]]
// The first element's source is loaded whatever srcElements says (so that,
// with bounds checks, the address the GPU is handed is checked), then
// selected; the others are loaded only if within srcElements.
// CHECK: %[[L:.*]] = memref.load %[[SRC]]
// CHECK: %[[ANY:.*]] = arith.cmpi ugt, %[[N:[a-z0-9_]+]], %c0{{[_0-9]*}} : index
// CHECK: %[[V:.*]] = arith.select %[[ANY]], %[[L]], %{{.*}} : f32
// CHECK: memref.store %[[POISON]], %[[TILE]]
// CHECK: %[[BITS:.*]] = arith.bitcast %[[V]] : f32 to i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: %[[ADDR:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK: call @__gpuopt_host_async_copy(%[[ADDR]], %[[WIDE]], %{{.*}}) : (i64, i64, i64) -> ()
// CHECK: %[[READ1:.*]] = arith.cmpi ult, %c1{{[_0-9]*}}, %[[N]] : index
// CHECK: scf.if %[[READ1]] -> (f32) {
// CHECK-NEXT: memref.load %[[SRC]]
// CHECK-COUNT-3: call @__gpuopt_host_async_copy(
// CHECK: call @__gpuopt_host_async_commit() : () -> ()
// CHECK: call @__gpuopt_host_async_copy(
// CHECK: call @__gpuopt_host_async_commit() : () -> ()
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @__gpuopt_host_async_wait(%[[ONE]]) : (i64) -> ()
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: call @__gpuopt_host_async_wait(%[[ZERO]]) : (i64) -> ()
// CHECK: call @__gpuopt_host_barrier(
// CHECK-DAG: func.func private @__gpuopt_host_async_copy(i64, i64, i64)
// CHECK-DAG: func.func private @__gpuopt_host_async_commit()
// CHECK-DAG: func.func private @__gpuopt_host_async_wait(i64)
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @async_copy(%src: memref<64xf32>)
        workgroup(%tile: memref<2x8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %n = arith.remui %t, %c4 : index
      %a = nvgpu.device_async_copy %src[%c4], %tile[%c0, %c4], 4, %n {bypassL1} : memref<64xf32> to memref<2x8xf32, #gpu.address_space<workgroup>>
      %g0 = nvgpu.device_async_create_group %a
      %b = nvgpu.device_async_copy %src[%t], %tile[%c1, %c0], 1 : memref<64xf32> to memref<2x8xf32, #gpu.address_space<workgroup>>
      %g1 = nvgpu.device_async_create_group %b
      nvgpu.device_async_wait %g0 {numGroups = 1 : i32}
      nvgpu.device_async_wait %g1
      gpu.barrier
      gpu.return
    }
  }
}
