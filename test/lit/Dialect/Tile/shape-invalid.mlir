// Verifier errors of arange, splat, broadcast, expand_dims, reshape, trans, convert_layout.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @arange_2d() {
  // expected-error @+1 {{'tile.arange' op result must be 1-D}}
  %0 = tile.arange 0 to 4 : tensor<2x2xi32>
  return
}

// -----

func.func @arange_empty() {
  // expected-error @+1 {{'tile.arange' op end (4) must be greater than start (4)}}
  %0 = tile.arange 4 to 4 : tensor<1xi32>
  return
}

// -----

func.func @arange_reversed() {
  // expected-error @+1 {{'tile.arange' op end (-3) must be greater than start (2)}}
  %0 = tile.arange 2 to -3 : tensor<5xi32>
  return
}

// -----

func.func @arange_length() {
  // expected-error @+1 {{'tile.arange' op result has 4 elements, but -2 to 6 has 8}}
  %0 = tile.arange -2 to 6 : tensor<4xi32>
  return
}

// -----

func.func @arange_i64() {
  // expected-error @+1 {{'tile.arange' op result #0 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<4xi64>'}}
  %0 = tile.arange 0 to 4 : tensor<4xi64>
  return
}

// -----

func.func @splat_type(%x: f16) {
  // expected-error @+1 {{'tile.splat' op scalar of type 'f16' cannot fill a tile of 'f32'}}
  %0 = tile.splat %x : f16 -> tensor<8xf32>
  return
}

// -----

func.func @splat_of_tile(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tile.splat' op scalar of type 'tensor<8xf32>' cannot fill a tile of 'f32'}}
  %0 = tile.splat %x : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @splat_to_scalar(%x: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = tile.splat %x : f32 -> f32
  return
}

// -----

func.func @broadcast_element_type(%x: tensor<1x8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op element types differ}}
  %0 = tile.broadcast %x : tensor<1x8xf32> -> tensor<4x8xf16>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op source rank 1 differs from result rank 2 (use expand_dims first)}}
  %0 = tile.broadcast %x : tensor<8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_non_unit(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op dimension 0 of size 2 cannot broadcast to 4}}
  %0 = tile.broadcast %x : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @broadcast_shrink(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.broadcast' op dimension 1 of size 8 cannot broadcast to 1}}
  %0 = tile.broadcast %x : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @expand_dims_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis 2 out of range for a tile of rank 1}}
  %0 = tile.expand_dims %x axis = 2 : tensor<8xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @expand_dims_negative_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op axis -1 out of range for a tile of rank 1}}
  %0 = tile.expand_dims %x axis = -1 : tensor<8xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @expand_dims_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op result must have shape 1x8 and element type 'f32'}}
  %0 = tile.expand_dims %x axis = 0 : tensor<8xf32> -> tensor<8x1xf32>
  return
}

// -----

func.func @expand_dims_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.expand_dims' op result must have shape 4x8x1 and element type 'f32'}}
  %0 = tile.expand_dims %x axis = 2 : tensor<4x8xf32> -> tensor<4x8x1xf16>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reshape' op element types differ}}
  %0 = tile.reshape %x : tensor<4x8xf32> -> tensor<32xi32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reshape' op cannot reshape 32 elements into 64}}
  %0 = tile.reshape %x : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @trans_order_length(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op order has 3 entries for a tile of rank 2}}
  %0 = tile.trans %x [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @trans_repeated(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op order must be a permutation}}
  %0 = tile.trans %x [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @trans_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op order must be a permutation}}
  %0 = tile.trans %x [0, 2] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @trans_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op order must be a permutation}}
  %0 = tile.trans %x [-1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @trans_result_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op result dimension 0 must equal source dimension 1}}
  %0 = tile.trans %x [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @trans_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.trans' op element types differ}}
  %0 = tile.trans %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xbf16>
  return
}

// -----

func.func @convert_layout_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op changes only the layout: shape and element type must match}}
  %0 = tile.convert_layout %x : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

#l = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>
func.func @convert_layout_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.convert_layout' op changes only the layout: shape and element type must match}}
  %0 = tile.convert_layout %x : tensor<4x8xf32> -> tensor<4x8xf16, #l>
  return
}

// -----

func.func @trans_missing_order(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected '['}}
  %0 = tile.trans %x : tensor<4x8xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @expand_dims_missing_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{expected 'axis'}}
  %0 = tile.expand_dims %x : tensor<8xf32> -> tensor<1x8xf32>
  return
}

// -----

// Tiles hold integers or floats; memory is addressed as a scalar base plus offsets.
func.func @splat_pointer(%p: !tile.ptr<f16>) {
  // expected-error @+1 {{'tile.splat' op result #0 must be statically shaped tensor of signless integer or floating-point values, but got 'tensor<4x!tile.ptr<f16>>'}}
  %0 = tile.splat %p : !tile.ptr<f16> -> tensor<4x!tile.ptr<f16>>
  return
}
