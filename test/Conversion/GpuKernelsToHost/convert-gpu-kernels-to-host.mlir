// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host | FileCheck %s

// A kernel becomes a function of one thread: the ids and sizes are its
// twelve leading index arguments (block id, thread id, block size, grid
// size), its memrefs follow; the gpu.module and the container attribute go.
// CHECK-NOT: gpu.container_module
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[BX:[a-z0-9_]+]]: index, %[[BY:[a-z0-9_]+]]: index, %[[BZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[TX:[a-z0-9_]+]]: index, %[[TY:[a-z0-9_]+]]: index, %[[TZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[NX:[a-z0-9_]+]]: index, %[[NY:[a-z0-9_]+]]: index, %[[NZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[GX:[a-z0-9_]+]]: index, %[[GY:[a-z0-9_]+]]: index, %[[GZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<1024xf32>, %[[B:[a-z0-9_]+]]: memref<1024xf32>)
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_workgroup = array<i64: 0>}
// CHECK: %[[MUL:.*]] = arith.muli %[[BX]], %[[NX]] : index
// CHECK: %[[I:.*]] = arith.addi %[[MUL]], %[[TX]] : index
// CHECK: %[[LIMIT:.*]] = arith.muli %[[NX]], %[[GX]] : index
// CHECK: arith.cmpi ult, %[[I]], %[[LIMIT]]
// CHECK: memref.load %[[A]][%[[I]]]
// CHECK: memref.store %{{.*}}, %[[B]][%[[I]]]
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%a: memref<1024xf32>, %b: memref<1024xf32>) kernel {
      %bid = gpu.block_id x
      %n = gpu.block_dim x
      %tid = gpu.thread_id x
      %g = gpu.grid_dim x
      %mul = arith.muli %bid, %n : index
      %i = arith.addi %mul, %tid : index
      %limit = arith.muli %n, %g : index
      %in = arith.cmpi ult, %i, %limit : index
      scf.if %in {
        %v = memref.load %a[%i] : memref<1024xf32>
        %two = arith.constant 2.0 : f32
        %w = arith.mulf %v, %two : f32
        memref.store %w, %b[%i] : memref<1024xf32>
      }
      gpu.return
    }
  }
}

// -----

// y and z dimensions map to their own arguments; gpu.global_id is
// block id * block size + thread id; a global of the gpu.module moves to the
// module.
// CHECK-LABEL: memref.global "private" constant @offsets : memref<2xindex>
// CHECK-LABEL: func.func @yz(
// CHECK-SAME: %[[BX:[a-z0-9_]+]]: index, %[[BY:[a-z0-9_]+]]: index, %[[BZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[TX:[a-z0-9_]+]]: index, %[[TY:[a-z0-9_]+]]: index, %[[TZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[NX:[a-z0-9_]+]]: index, %[[NY:[a-z0-9_]+]]: index, %[[NZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[GX:[a-z0-9_]+]]: index, %[[GY:[a-z0-9_]+]]: index, %[[GZ:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[OUT:[a-z0-9_]+]]: memref<4x4x4xindex>)
// CHECK: %[[G:.*]] = arith.muli %[[BY]], %[[NY]] : index
// CHECK: %[[GID:.*]] = arith.addi %[[G]], %[[TY]] : index
// CHECK: memref.get_global @offsets
// CHECK: memref.store %[[GZ]], %[[OUT]][%[[BZ]], %[[TZ]], %[[GID]]]
// CHECK: memref.store %[[NZ]], %[[OUT]][%[[TY]], %[[BY]], %[[GY]]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" constant @offsets : memref<2xindex> = dense<[0, 1]>
    gpu.func @yz(%out: memref<4x4x4xindex>) kernel {
      %gid = gpu.global_id y
      %bz = gpu.block_id z
      %tz = gpu.thread_id z
      %gz = gpu.grid_dim z
      %nz = gpu.block_dim z
      %by = gpu.block_id y
      %ty = gpu.thread_id y
      %gy = gpu.grid_dim y
      %o = memref.get_global @offsets : memref<2xindex>
      memref.store %gz, %out[%bz, %tz, %gid] : memref<4x4x4xindex>
      memref.store %nz, %out[%ty, %by, %gy] : memref<4x4x4xindex>
      gpu.return
    }
  }
}
