// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host=bounds-checks=true -verify-diagnostics

// With bounds-checks, an access the pass cannot guard is an error: nothing
// reaches memory unchecked.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_affine_load(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      // expected-error @+1 {{'affine.load' op accesses memory in a way the host emulation does not bounds-check (only memref.load and memref.store are checked)}}
      %v = affine.load %a[0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_copy(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      // expected-error @+1 {{'memref.copy' op accesses memory in a way the host emulation does not bounds-check (only memref.load and memref.store are checked)}}
      memref.copy %a, %b : memref<4xf32> to memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A memref.view reinterprets bytes: its elements are not the argument's.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_view(%a: memref<64xi8>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.view %a[%c0][] : memref<64xi8> to memref<16xf32>
      // expected-error @+1 {{'memref.load' op accesses a memref that is not a view of a kernel argument, workgroup attribution, memref.global or allocation, so the host emulation cannot bounds-check it}}
      %x = memref.load %v[%c0] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// A memref chosen by control flow has no one allocation.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_select(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c0f = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %p = arith.cmpi eq, %t, %c0 : index
      %m = scf.if %p -> (memref<4xf32>) {
        scf.yield %a : memref<4xf32>
      } else {
        scf.yield %b : memref<4xf32>
      }
      // expected-error @+1 {{'memref.store' op accesses a memref that is not a view of a kernel argument, workgroup attribution, memref.global or allocation, so the host emulation cannot bounds-check it}}
      memref.store %c0f, %m[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{'func.func' op has the name of the host emulation's bounds check report function}}
  func.func private @__gpuopt_report_out_of_bounds()
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Vector values are emulated, vector stores are not (unchecked).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_vector_store(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant dense<1.0> : vector<4xf32>
      // expected-error @+1 {{'vector.store' op accesses memory in a way the host emulation does not bounds-check (only memref.load and memref.store are checked)}}
      vector.store %v, %a[%c0] : memref<8xf32>, vector<4xf32>
      gpu.return
    }
  }
}

// -----

// A vector load runs as scalar loads: of a 1-D vector only.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_vector_load_2d(%a: memref<8x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads 'vector<2x4xf32>' from 'memref<8x8xf32>'; the host emulation runs vector.load of a fixed 1-D float vector from global or workgroup memory only}}
      %v = vector.load %a[%c0, %c0] : memref<8x8xf32>, vector<2x4xf32>
      gpu.return
    }
  }
}

// -----

// Of float elements only.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_vector_load_index(%a: memref<8xindex>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads 'vector<4xindex>' from 'memref<8xindex>'; the host emulation runs vector.load of a fixed 1-D float vector from global or workgroup memory only}}
      %v = vector.load %a[%c0] : memref<8xindex>, vector<4xindex>
      gpu.return
    }
  }
}

// -----

// An alignment the launch plan does not give its buffers.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_alignment_512(%a: memref<256xf32>, %b: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads with alignment 512, more than the 256 bytes the launch plan aligns its buffers to}}
      %v = vector.load %a[%c0] {alignment = 512 : i64} : memref<256xf32>, vector<4xf32>
      %x = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %x, %b[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// An aligned vector load must read a kernel argument (a plan buffer, whose
// alignment on the GPU is known) or a workgroup attribution.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "private" constant @table : memref<8xf32> = dense<1.0>
    gpu.func @negative_aligned_global(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %g = memref.get_global @table : memref<8xf32>
      // expected-error @+1 {{'vector.load' op loads with alignment 16 from memory that is no kernel argument or workgroup attribution, whose alignment on the GPU the host emulation does not know}}
      %v = vector.load %g[%c0] {alignment = 16 : i64} : memref<8xf32>, vector<4xf32>
      %x = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %x, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A workgroup attribution without llvm.align is aligned to its element's
// size on the GPU: a 16-byte vector load of it may fault.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_workgroup_unaligned(%a: memref<8xf32>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads with alignment 16 from workgroup attribution 0, which is aligned to 4 bytes (its llvm.align, else its element's size)}}
      %v = vector.load %tile[%c0] {alignment = 16 : i64} : memref<8xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %x = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %x, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Private memory: no vector loads.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_private_vector(%a: memref<8xf32>)
        private(%p: memref<8xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads 'vector<4xf32>' from 'memref<8xf32, #gpu.address_space<private>>'; the host emulation runs vector.load of a fixed 1-D float vector from global or workgroup memory only}}
      %v = vector.load %p[%c0] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
      %x = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %x, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// An llvm.align of 0 gives the shared array no alignment: its element's.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_workgroup_align_zero(%a: memref<8xf32>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 0 : i64}) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op loads with alignment 16 from workgroup attribution 0, which is aligned to 4 bytes (its llvm.align, else its element's size)}}
      %v = vector.load %tile[%c0] {alignment = 16 : i64} : memref<8xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %x = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %x, %a[%c0] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A 16-byte cp.async needs 16-byte aligned ends: a destination attribution
// without llvm.align is aligned to its element's 4 bytes only.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_async_copy_unaligned_tile(%a: memref<8xf32>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'nvgpu.device_async_copy' op copies with alignment 16 to workgroup attribution 0, which is aligned to 4 bytes (its llvm.align, else its element's size)}}
      %t = nvgpu.device_async_copy %a[%c0], %tile[%c0], 4 {bypassL1} : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}
