// RUN: gpuopt-opt %s --pass-pipeline='builtin.module(func.func(split-long-blocks{max-ops=1}))' -verify-diagnostics

// A block of one op could hold nothing but its branch.
// expected-error @+1 {{'func.func' op --split-long-blocks needs max-ops >= 2, not 1}}
func.func @f(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  return %a : f32
}
