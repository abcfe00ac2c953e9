// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics

// A tensor may hold at most 2^40 bytes (1 TiB, seg::kMaxTensorBytes). Before
// the limit, a tensor<4611686018427387904xf32> verified and its byte size
// wrapped to 0 in the CPU lowering: a 64-byte buffer, overrun at run time.

func.func @wrapping_byte_size(%x: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'seg.relu' op operand #0 of type 'tensor<4611686018427387904xf32>' exceeds the limit of 1099511627776 bytes (1 TiB) per tensor}}
  %y = seg.relu %x : tensor<4611686018427387904xf32>
  return
}

// -----

// The element count itself overflows int64.
func.func @wrapping_element_count(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @+1 {{operand #0 of type 'tensor<4294967296x4294967296xf32>' exceeds the limit}}
  %y = seg.gelu %x : tensor<4294967296x4294967296xf32>
  return
}

// -----

// Small operands, a 4 TiB result (broadcasting).
func.func @result_over_limit(%a: tensor<1048576x1xf32>, %b: tensor<1x1048576xf32>) {
  // expected-error @+1 {{'seg.add' op result #0 of type 'tensor<1048576x1048576xf32>' exceeds the limit of 1099511627776 bytes (1 TiB) per tensor}}
  %y = seg.add %a, %b : tensor<1048576x1xf32>, tensor<1x1048576xf32> -> tensor<1048576x1048576xf32>
  return
}

// -----

func.func @param_over_limit() {
  // expected-error @+1 {{'seg.param' op result #0 of type 'tensor<274877906945xf32>' exceeds the limit}}
  %w = seg.param "w" : tensor<274877906945xf32>
  return
}

// -----

// One element over the limit, counted in the element type's width.
func.func @f16_over_limit(%x: tensor<549755813889xf16>) {
  // expected-error @+1 {{operand #0 of type 'tensor<549755813889xf16>' exceeds the limit}}
  %y = seg.relu %x : tensor<549755813889xf16>
  return
}

// -----

// Exactly at the limit (f32, f16, f64), and empty tensors of any dims: valid.
func.func @at_the_limit(%a: tensor<274877906944xf32>, %b: tensor<549755813888xf16>,
                        %c: tensor<137438953472xf64>, %d: tensor<0x9223372036854775807xf32>) {
  %ya = seg.relu %a : tensor<274877906944xf32>
  %yb = seg.relu %b : tensor<549755813888xf16>
  %yc = seg.relu %c : tensor<137438953472xf64>
  %yd = seg.relu %d : tensor<0x9223372036854775807xf32>
  return
}

// -----

// The op's own shape check comes first: its message is the precise one.
func.func @shape_error_first(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @+1 {{the element count overflows int64}}
  %y = seg.reshape %x : tensor<4294967296x4294967296xf32> -> tensor<0xf32>
  return
}
