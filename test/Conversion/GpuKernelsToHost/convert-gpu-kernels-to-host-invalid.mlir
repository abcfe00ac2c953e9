// RUN: gpuopt-opt %s -split-input-file --convert-gpu-kernels-to-host -verify-diagnostics

// Barriers, shuffles and workgroup memory are emulated
// (convert-gpu-kernels-to-host-sync.mlir); the rest of the GPU dialect is
// not.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_subgroup_reduce(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf32>
      // expected-error @+1 {{'gpu.subgroup_reduce' op cannot run on the host emulation: only gpu.barrier, gpu.shuffle of 32-bit values and the id ops are emulated}}
      %r = gpu.subgroup_reduce add %v : (f32) -> f32
      gpu.return
    }
  }
}

// -----

// Tensor-core fragments are not emulated.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_mma(%a: memref<4xf32>) kernel {
      %f = arith.constant 1.0 : f16
      // expected-error @+1 {{'gpu.subgroup_mma_constant_matrix' op cannot run on the host emulation: only gpu.barrier, gpu.shuffle of 32-bit values and the id ops are emulated}}
      %m = gpu.subgroup_mma_constant_matrix %f : !gpu.mma_matrix<16x16xf16, "COp">
      gpu.return
    }
  }
}

// -----

// The plan has no dynamic shared-memory size for a launch.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_dynamic_shared(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{'gpu.dynamic_shared_memory' op uses dynamic workgroup memory, which the launch plan does not size; the host emulation provides static workgroup attributions only}}
      %m = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_shuffle_f64(%a: memref<4xf64>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf64>
      %one = arith.constant 1 : i32
      %w = arith.constant 32 : i32
      // expected-error @+1 {{'gpu.shuffle' op shuffles 'f64'; the host emulation shuffles i32 and f32 only}}
      %r, %ok = gpu.shuffle xor %v, %one, %w : f64
      gpu.return
    }
  }
}

// -----

// Workgroup memory is a gpu.func attribution, nothing else.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_alloca(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{'memref.alloca' op makes 'memref<4xf32, #gpu.address_space<workgroup>>'; the host emulation provides workgroup memory only as gpu.func workgroup attributions (and private memory as allocas and private attributions)}}
      %t = memref.alloca() : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_space_cast(%a: memref<4xf32>)
        workgroup(%tile: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      // expected-error @+1 {{'memref.memory_space_cast' op changes a memref's memory space, which the host emulation does not model}}
      %g = memref.memory_space_cast %tile : memref<4xf32, #gpu.address_space<workgroup>> to memref<4xf32>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_global_space(%a: memref<4xf32>) kernel {
      // expected-error @+1 {{'memref.alloca' op uses 'memref<4xf32, #gpu.address_space<global>>' in a memory space the host emulation does not provide (only the default one, workgroup attributions and private memory)}}
      %t = memref.alloca() : memref<4xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op has an attribution of type 'memref<4xvector<4xf32>, #gpu.address_space<workgroup>>'; the host emulation provides statically shaped memrefs of int, float or index elements with the identity layout}}
    gpu.func @negative_vector_attribution(%a: memref<4xf32>)
        workgroup(%tile: memref<4xvector<4xf32>, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// CUDA's 48 KiB of static shared memory per block: 12289 floats are 4 bytes
// too many.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op has 49156 bytes of workgroup attributions, more than the 49152 of static workgroup memory of a block}}
    gpu.func @negative_workgroup_size(%a: memref<4xf32>)
        workgroup(%tile: memref<12289xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}

// -----

// A synchronizing kernel's threads run on fiber stacks of their own.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{'gpu.func' op has 65540 bytes of private memory per thread, more than the 65536 the host emulation's fibers provide}}
    gpu.func @negative_private_size(%a: memref<4xf32>)
        private(%p: memref<16384xf32, #gpu.address_space<private>>) kernel {
      %q = memref.alloca() : memref<1xf32>
      gpu.barrier
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_dynamic_alloca(%a: memref<4xf32>) kernel {
      %t = gpu.thread_id x
      // expected-error @+1 {{'memref.alloca' op allocates 'memref<?xf32>' in a kernel whose threads synchronize; the host emulation runs them on fiber stacks and needs static private memory}}
      %q = memref.alloca(%t) : memref<?xf32>
      gpu.barrier
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{'func.func' op has the name of a host emulation hook (__gpuopt_host_barrier), which gpu.barrier calls}}
  func.func private @__gpuopt_host_barrier(i64)
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.barrier
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

// -----

// Of the tensor-core ops, TF32 mma.sync is emulated; f16 is not.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_mma_f16(%a: memref<4xf32>) kernel {
      %h = arith.constant 1.0 : f16
      %f = arith.constant 0.0 : f32
      %va = vector.broadcast %h : f16 to vector<4x2xf16>
      %vb = vector.broadcast %h : f16 to vector<2x2xf16>
      %vc = vector.broadcast %f : f32 to vector<2x2xf32>
      // expected-error @+1 {{'nvgpu.mma.sync' op cannot run on the host emulation: only TF32 mma.sync (tf32Enabled) of shape 16x8x8 (A vector<4x1xf32>, B vector<2x1xf32>) or 16x8x4 (A vector<2x1xf32>, B vector<1x1xf32>) with C and D vector<2x2xf32> is emulated}}
      %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// FP32 operands without tf32Enabled: not an instruction the emulator runs.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_mma_not_tf32(%a: memref<4xf32>) kernel {
      %f = arith.constant 0.0 : f32
      %va = vector.broadcast %f : f32 to vector<4x1xf32>
      %vb = vector.broadcast %f : f32 to vector<2x1xf32>
      %vc = vector.broadcast %f : f32 to vector<2x2xf32>
      // expected-error @+1 {{'nvgpu.mma.sync' op cannot run on the host emulation: only TF32 mma.sync}}
      %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 8]} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
}

// -----

// Other nvgpu ops are not emulated.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_ldmatrix(%a: memref<4xf32>)
        workgroup(%tile: memref<16x16xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'nvgpu.ldmatrix' op cannot run on the host emulation: of the nvgpu dialect only nvgpu.mma.sync (TF32) and the asynchronous copies (device_async_copy, _create_group, _wait) are emulated}}
      %m = nvgpu.ldmatrix %tile[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      gpu.return
    }
  }
}

// -----

// The emulation follows PTX: a copy belongs to the group the thread
// commits next, and a wait names how many groups may stay pending. A
// token used otherwise (a wait on a copy, a group of groups) has no PTX
// meaning it could emulate.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_wait_on_copy(%a: memref<8xf32>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'nvgpu.device_async_copy' op passes its token to nvgpu.device_async_wait; the host emulation takes a copy's token only into nvgpu.device_async_create_group}}
      %t = nvgpu.device_async_copy %a[%c0], %tile[%c0], 1 : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      nvgpu.device_async_wait %t
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_group_of_groups(%a: memref<8xf32>)
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %t = nvgpu.device_async_copy %a[%c0], %tile[%c0], 1 : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      // expected-error @+1 {{'nvgpu.device_async_create_group' op passes its token to nvgpu.device_async_create_group; the host emulation takes a group's token only into nvgpu.device_async_wait}}
      %g = nvgpu.device_async_create_group %t
      %h = nvgpu.device_async_create_group %g
      nvgpu.device_async_wait %h
      gpu.return
    }
  }
}

// -----

// Global to workgroup memory only, as on the GPU (cp.async's source is
// global).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_copy_from_workgroup()
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>, %other: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @+1 {{'nvgpu.device_async_copy' op copies from 'memref<8xf32, #gpu.address_space<workgroup>>' to 'memref<8xf32, #gpu.address_space<workgroup>>'; the host emulation copies from global memory (the default memory space) to workgroup attributions}}
      %t = nvgpu.device_async_copy %other[%c0], %tile[%c0], 1 : memref<8xf32, #gpu.address_space<workgroup>> to memref<8xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}

// -----

// An allocation of the kernel is local memory on the GPU: no cp.async
// source.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_copy_from_alloca()
        workgroup(%tile: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %local = memref.alloca() : memref<8xf32>
      // expected-error @+1 {{'nvgpu.device_async_copy' op copies from an allocation of the kernel (local memory on the GPU); cp.async reads global memory: a kernel argument or memref.global}}
      %t = nvgpu.device_async_copy %local[%c0], %tile[%c0], 1 : memref<8xf32> to memref<8xf32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_copy_rank0(%a: memref<f32>)
        workgroup(%tile: memref<f32, #gpu.address_space<workgroup>>) kernel {
      // expected-error @+1 {{'nvgpu.device_async_copy' op copies a rank-0 memref; the host emulation runs copies along a memref's last dimension}}
      %t = nvgpu.device_async_copy %a[], %tile[], 1 : memref<f32> to memref<f32, #gpu.address_space<workgroup>>
      %g = nvgpu.device_async_create_group %t
      nvgpu.device_async_wait %g
      gpu.return
    }
  }
}
