// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host -verify-diagnostics

// Threads that synchronize cannot run one after another.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_barrier(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{'gpu.barrier' op cannot run on the host emulation: only independent threads are emulated (no barriers, shuffles or other GPU operations)}}
      gpu.barrier
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op has workgroup or private memory attributions, which the host emulation does not provide}}
    gpu.func @negative_workgroup(%a: memref<4xf32>)
        workgroup(%tile: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_shuffle(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf32>
      %one = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      // expected-error @+1 {{'gpu.shuffle' op cannot run on the host emulation}}
      %r, %ok = gpu.shuffle xor %v, %one, %w : f32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_alloca(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{'memref.alloca' op uses 'memref<4xf32, #gpu.address_space<workgroup>>' in a non-default memory space (workgroup or private memory), which the host emulation does not provide}}
      %t = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_nvvm(%a: memref<4xi32>) kernel {
      // expected-error @+1 {{'nvvm.read.ptx.sreg.laneid' op cannot run on the host emulation (ops of the nvvm dialect are not emulated)}}
      %l = nvvm.read.ptx.sreg.laneid : i32
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op is not a kernel; the host emulation converts kernels only}}
    gpu.func @negative_device_function(%a: memref<4xf32>) {
      gpu.return
    }
  }
}

// -----

// The pass takes a copy of the kernels; a module that launches them is not
// one.
module attributes {gpu.container_module} {
  func.func @host(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'gpu.launch_func' op launches a kernel of the module: --convert-gpu-kernels-to-host takes a copy of the kernels that nothing launches}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op takes an argument of type 'f32'; the host emulation passes memrefs in host memory}}
    gpu.func @negative_scalar(%s: f32) kernel {
      gpu.return
    }
  }
}
