// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host=bounds-checks=true | FileCheck %s

// With bounds-checks every load and store is guarded: each index must be
// inside its dimension and the element inside the allocation; otherwise the
// access is skipped (a load yields NaN) and reported into the violation
// record, the kernel's trailing memref<24xi64> argument.
// CHECK-LABEL: func.func @copy(
// CHECK-SAME: %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index, %{{[a-z0-9_]+}}: index, %[[TX:[a-z0-9_]+]]: index,
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<8xf32>, %[[B:[a-z0-9_]+]]: memref<8xf32>,
// CHECK-SAME: %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK-SAME: attributes {gpuopt.host_kernel, gpuopt.host_workgroup = array<i64: 0>}
// The load: index %tx against dim 8, element against the 8 elements.
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[TX]], %[[C8]] : index
// CHECK: %[[OK0:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %[[A]]
// CHECK: %[[MUL:.*]] = arith.muli %[[TX]], %[[STRIDE]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[OFF]], %[[MUL]] : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[LIN]], %{{.*}} : index
// CHECK: %[[OK:.*]] = arith.andi %[[OK0]], %[[INSIDE]] : i1
// CHECK: %[[V:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK:   %[[L:.*]] = memref.load %[[A]][%[[TX]]] : memref<8xf32>
// CHECK:   scf.yield %[[L]] : f32
// CHECK: } else {
// Kind 0 (load), argument 0.
// CHECK:   %[[K0:.*]] = arith.constant 0 : index
// CHECK:   %[[ARG0:.*]] = arith.constant 0 : index
// CHECK:   %[[R1:.*]] = arith.constant 1 : index
// CHECK:   func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K0]], %[[ARG0]], %[[LIN]], %{{.*}}, %[[R1]], %[[TX]],
// CHECK:   %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK:   scf.yield %[[NAN]] : f32
// CHECK: }
// The store: argument 1, kind 1, the stored value the load's result.
// CHECK: scf.if %{{.*}} {
// CHECK:   memref.store %[[V]], %[[B]][%[[TX]]] : memref<8xf32>
// CHECK: } else {
// CHECK:   %[[K1:.*]] = arith.constant 1 : index
// CHECK:   %[[ARG1:.*]] = arith.constant 1 : index
// CHECK:   func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K1]], %[[ARG1]],
// CHECK: }
// CHECK: return
// The report function: counts, and records the first violation only.
// CHECK-LABEL: func.func private @__gpuopt_report_out_of_bounds(
// CHECK-SAME: %[[R:[a-z0-9_]+]]: memref<24xi64>
// CHECK: %[[N:.*]] = memref.load %[[R]][%{{.*}}] : memref<24xi64>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : i64
// CHECK: scf.if %[[FIRST]] {
// CHECK-COUNT-21: memref.store %{{.*}}, %[[R]][%{{.*}}] : memref<24xi64>
// CHECK: }
// CHECK: %[[NEXT:.*]] = arith.addi %[[N]], %{{.*}} : i64
// CHECK: memref.store %[[NEXT]], %[[R]][%{{.*}}] : memref<24xi64>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @copy(%a: memref<8xf32>, %b: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<8xf32>
      memref.store %v, %b[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A view: per dimension against the subview's sizes, and the element
// (offset + index * stride) against the 4x6 argument's 24 elements.
// CHECK-LABEL: func.func @view(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<4x6xf32>, %[[B:[a-z0-9_]+]]: memref<2x3xf32>, %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK: %[[SV:.*]] = memref.subview %[[A]][1, 2] [2, 3] [1, 1]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: arith.cmpi ult, %[[I:.*]], %[[C2]] : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: arith.cmpi ult, %[[J:.*]], %[[C3]] : index
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[ST:.*]]:2 = memref.extract_strided_metadata %[[SV]]
// CHECK: arith.muli %[[I]], %[[ST]]#0
// CHECK: arith.muli %[[J]], %[[ST]]#1
// CHECK: %[[D0:.*]] = arith.constant 4 : index
// CHECK: arith.muli %{{.*}}, %[[D0]] : index
// CHECK: %[[D1:.*]] = arith.constant 6 : index
// CHECK: arith.muli %{{.*}}, %[[D1]] : index
// CHECK: scf.if
// CHECK: memref.load %[[SV]][%[[I]], %[[J]]]
// Argument 0, rank 2, the two indices, then zeros, then the dims 2, 3.
// CHECK: func.call @__gpuopt_report_out_of_bounds(%[[REC]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %[[I]], %[[J]],
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @view(%a: memref<4x6xf32>, %b: memref<2x3xf32>) kernel {
      %i = gpu.thread_id x
      %j = gpu.thread_id y
      %s = memref.subview %a[1, 2] [2, 3] [1, 1] : memref<4x6xf32> to memref<2x3xf32, strided<[6, 1], offset: 8>>
      %v = memref.load %s[%i, %j] : memref<2x3xf32, strided<[6, 1], offset: 8>>
      memref.store %v, %b[%i, %j] : memref<2x3xf32>
      gpu.return
    }
  }
}

// -----

// A memref.global of the kernel is root kind -1; an integer load yields 0.
// CHECK-LABEL: func.func @table(
// CHECK: %[[G:.*]] = memref.get_global @lut : memref<4xi32>
// CHECK: scf.if %{{.*}} -> (i32) {
// CHECK: memref.load %[[G]]
// CHECK: } else {
// CHECK: %[[KIND:.*]] = arith.constant -1 : index
// CHECK: func.call @__gpuopt_report_out_of_bounds(%{{[^,]*}}, %{{[^,]*}}, %[[KIND]],
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: scf.yield %[[ZERO]] : i32
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" constant @lut : memref<4xi32> = dense<[1, 2, 3, 4]>
    gpu.func @table(%out: memref<4xi32>) kernel {
      %t = gpu.thread_id x
      %g = memref.get_global @lut : memref<4xi32>
      %v = memref.load %g[%t] : memref<4xi32>
      memref.store %v, %out[%t] : memref<4xi32>
      gpu.return
    }
  }
}

// -----

// Workgroup attribution k is memory -3 - k of the record; an access of it
// is checked against the attribution's elements.
// CHECK-LABEL: func.func @tile(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<8xf32>, %{{[a-z0-9_]+}}: memref<4xi32>, %[[TILE:[a-z0-9_]+]]: memref<2x16xf32>, %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK: %[[SV:.*]] = memref.subview %[[TILE]][1, 0] [1, 16] [1, 1]
// CHECK: %[[D0:.*]] = arith.constant 2 : index
// CHECK: arith.muli %{{.*}}, %[[D0]] : index
// CHECK: %[[D1:.*]] = arith.constant 16 : index
// CHECK: %[[EXT:.*]] = arith.muli %{{.*}}, %[[D1]] : index
// CHECK: arith.cmpi ult, %{{.*}}, %[[EXT]] : index
// CHECK: scf.if %{{.*}} {
// CHECK:   memref.store %{{.*}}, %[[SV]][%{{.*}}] : memref<16xf32, strided<[1], offset: 16>>
// CHECK: } else {
// CHECK:   %[[K1:.*]] = arith.constant 1 : index
// CHECK:   %[[WG1:.*]] = arith.constant -4 : index
// CHECK:   func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K1]], %[[WG1]],
// CHECK: }
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tile(%a: memref<8xf32>)
        workgroup(%flags: memref<4xi32, #gpu.address_space<workgroup>>,
                  %tile: memref<2x16xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<8xf32>
      %row = memref.subview %tile[1, 0] [1, 16] [1, 1] : memref<2x16xf32, #gpu.address_space<workgroup>> to memref<16xf32, strided<[1], offset: 16>, #gpu.address_space<workgroup>>
      memref.store %v, %row[%t] : memref<16xf32, strided<[1], offset: 16>, #gpu.address_space<workgroup>>
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// A vector load with alignment 16 of a kernel argument: its first element's
// byte offset (4 x the linear offset) must be a multiple of 16, else the
// violation is reported as kind 2 of argument 1 with the alignment as
// extent and the load yields NaNs; aligned, it runs as 4 scalar loads, each
// guarded as above.
// CHECK-LABEL: func.func @vector_load(
// CHECK-SAME: %[[B:[a-z0-9_]+]]: memref<8xf32>, %[[A:[a-z0-9_]+]]: memref<5x6x8xf32>, %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK: memref.extract_strided_metadata %[[A]]
// CHECK: %[[BYTES:.*]] = arith.muli %{{.*}}, %c4{{[_0-9]*}} : index
// CHECK: %[[MOD:.*]] = arith.remui %[[BYTES]], %c16{{[_0-9]*}} : index
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[MOD]], %c0{{[_0-9]*}} : index
// CHECK: %[[MIS:.*]] = arith.xori %[[ALIGNED]], %true
// CHECK: scf.if %[[MIS]] {
// CHECK: %[[ALIGN:.*]] = arith.constant 16 : index
// CHECK: %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[ARG1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[RANK:.*]] = arith.constant 3 : index
// CHECK: func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K2]], %[[ARG1]], %{{[^,]*}}, %[[ALIGN]], %[[RANK]],
// CHECK: %[[V:.*]] = scf.if %[[ALIGNED]] -> (vector<4xf32>) {
// Each of the 4 scalar loads inside its own bounds guard.
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: memref.load %[[A]]
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: memref.load %[[A]]
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: memref.load %[[A]]
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: memref.load %[[A]]
// CHECK: %[[E:.*]] = vector.from_elements
// CHECK-NEXT: scf.yield %[[E]] : vector<4xf32>
// CHECK-NEXT: } else {
// CHECK: arith.constant dense<0x7FC00000> : vector<4xf32>
// CHECK-NOT: vector.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @vector_load(%b: memref<8xf32>, %a: memref<5x6x8xf32>) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %v = vector.load %a[%c1, %c1, %t] {alignment = 16 : i64} : memref<5x6x8xf32>, vector<4xf32>
      %x = vector.extract %v[3] : f32 from vector<4xf32>
      memref.store %x, %b[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A vector load with alignment 8 of a workgroup attribution aligned to 16
// (llvm.align): its byte offset in the attribution is checked the same way
// and reported as of workgroup attribution 0 (root kind -3).
// CHECK-LABEL: func.func @workgroup_vector_load(
// CHECK-SAME: %[[B:[a-z0-9_]+]]: memref<8xf32>, %[[T:[a-z0-9_]+]]: memref<4x6xf32>, %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK: %[[MOD:.*]] = arith.remui %{{.*}}, %c8{{[_0-9]*}} : index
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[MOD]], %c0{{[_0-9]*}} : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[ALIGN:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[K2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[WG0:.*]] = arith.constant -3 : index
// CHECK: func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K2]], %[[WG0]], %{{[^,]*}}, %[[ALIGN]],
// CHECK: scf.if %[[ALIGNED]] -> (vector<2xf32>) {
// CHECK-COUNT-2: memref.load %[[T]]
// CHECK: } else {
// CHECK-NOT: vector.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @workgroup_vector_load(%b: memref<8xf32>)
        workgroup(%tile: memref<4x6xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel {
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %v = vector.load %tile[%c1, %t] {alignment = 8 : i64} : memref<4x6xf32, #gpu.address_space<workgroup>>, vector<2xf32>
      %x = vector.extract %v[1] : f32 from vector<2xf32>
      memref.store %x, %b[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A workgroup attribution of index elements (no vector load of it): its
// alignment, unknown to the host, is asked of no one.
// CHECK-LABEL: func.func @index_attribution(
// CHECK: memref.store
// CHECK: call @__gpuopt_host_barrier
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @index_attribution(%b: memref<8xindex>)
        workgroup(%s: memref<8xindex, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      memref.store %t, %s[%t] : memref<8xindex, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %s[%t] : memref<8xindex, #gpu.address_space<workgroup>>
      memref.store %v, %b[%t] : memref<8xindex>
      gpu.return
    }
  }
}

// -----

// A 16-byte asynchronous copy: both ends' byte offsets are checked against
// 16 (the source a kernel argument, reported as of argument 0; the
// destination workgroup attribution 0, aligned to 16 by its llvm.align),
// each misalignment reported as kind 3; only if both hold does the copy
// run, its source loads and poison stores guarded as any other access.
// CHECK-LABEL: func.func @async_copy_checked(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64xf32>, %[[T:[a-z0-9_]+]]: memref<2x8xf32>, %[[REC:[a-z0-9_]+]]: memref<24xi64>)
// CHECK: %[[SRCOK:.*]] = arith.cmpi eq, %{{.*}}, %c0{{[_0-9]*}} : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[K3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[ARG0:.*]] = arith.constant 0 : index
// CHECK: func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K3]], %[[ARG0]], %{{[^,]*}}, %c16
// CHECK: %[[DSTOK:.*]] = arith.cmpi eq, %{{.*}}, %c0{{[_0-9]*}} : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[WG0:.*]] = arith.constant -3 : index
// CHECK: func.call @__gpuopt_report_out_of_bounds(%[[REC]], %[[K3]]{{(_[0-9]+)?}}, %[[WG0]],
// CHECK: %[[BOTH:.*]] = arith.andi %[[SRCOK]], %[[DSTOK]] : i1
// CHECK: scf.if %[[BOTH]] {
// CHECK: memref.load %[[A]]
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: call @__gpuopt_host_async_copy(
// CHECK-COUNT-3: call @__gpuopt_host_async_copy(
// CHECK: call @__gpuopt_host_async_commit()
// CHECK: call @__gpuopt_host_async_wait(
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @async_copy_checked(%a: memref<64xf32>)
        workgroup(%tile: memref<2x8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel {
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %s = arith.muli %t, %c4 : index
      %cp = nvgpu.device_async_copy %a[%s], %tile[%c1, %c4], 4 {bypassL1} : memref<64xf32> to memref<2x8xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %cp
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}
