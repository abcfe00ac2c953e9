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

// Vector values are emulated, vector memory accesses are not (unchecked).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_vector_load(%a: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'vector.load' op accesses memory in a way the host emulation does not bounds-check (only memref.load and memref.store are checked)}}
      %v = vector.load %a[%c0] : memref<8xf32>, vector<4xf32>
      gpu.return
    }
  }
}
