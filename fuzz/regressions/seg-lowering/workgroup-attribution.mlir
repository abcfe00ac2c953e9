module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @negative_workgroup_size(%a: memref<4xf32>)
        workgroup(%tile: memref<12289xf32, #gpu.address_space<workgroup>>) kernel {
      gpu.return
    }
  }
}
