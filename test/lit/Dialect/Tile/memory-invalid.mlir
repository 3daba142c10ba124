// Verifier and type-constraint errors of tile.load, tile.store and tile.atomic_add.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @load_offsets_shape(%p: !tile.ptr<f32>, %o: tensor<64xi32>) {
  // expected-error @+1 {{'tile.load' op offsets shape 64 differs from data shape 128}}
  %0 = tile.load %p[%o] : !tile.ptr<f32>[tensor<64xi32>] -> tensor<128xf32>
  return
}

// -----

func.func @load_mask_shape(%p: !tile.ptr<f32>, %o: tensor<4x8xi32>, %m: tensor<8x4xi1>) {
  // expected-error @+1 {{'tile.load' op mask shape 8x4 differs from data shape 4x8}}
  %0 = tile.load %p[%o] mask %m : !tile.ptr<f32>[tensor<4x8xi32>], tensor<8x4xi1> -> tensor<4x8xf32>
  return
}

// -----

func.func @load_pointee(%p: !tile.ptr<f16>, %o: tensor<8xi32>) {
  // expected-error @+1 {{'tile.load' op data element type 'f32' does not match the pointee type 'f16'}}
  %0 = tile.load %p[%o] : !tile.ptr<f16>[tensor<8xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @load_other_without_mask(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %x: f32) {
  // expected-error @+1 {{'tile.load' op 'other' only makes sense with a mask}}
  %0 = tile.load %p[%o] other %x : !tile.ptr<f32>[tensor<8xi32>] other f32 -> tensor<8xf32>
  return
}

// -----

func.func @load_other_scalar_type(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<8xi1>, %x: f16) {
  // expected-error @+1 {{'tile.load' op 'other' must be a 'f32' scalar or a tile of the result type}}
  %0 = tile.load %p[%o] mask %m other %x : !tile.ptr<f32>[tensor<8xi32>], tensor<8xi1> other f16 -> tensor<8xf32>
  return
}

// -----

func.func @load_other_tile_shape(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<8xi1>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'tile.load' op 'other' must be a 'f32' scalar or a tile of the result type}}
  %0 = tile.load %p[%o] mask %m other %x : !tile.ptr<f32>[tensor<8xi32>], tensor<8xi1> other tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @load_other_tile_element(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<8xi1>, %x: tensor<8xi32>) {
  // expected-error @+1 {{'tile.load' op 'other' must be a 'f32' scalar or a tile of the result type}}
  %0 = tile.load %p[%o] mask %m other %x : !tile.ptr<f32>[tensor<8xi32>], tensor<8xi1> other tensor<8xi32> -> tensor<8xf32>
  return
}

// -----

func.func @load_i16_offsets(%p: !tile.ptr<f32>, %o: tensor<8xi16>) {
  // expected-error @+1 {{'tile.load' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi16>'}}
  %0 = tile.load %p[%o] : !tile.ptr<f32>[tensor<8xi16>] -> tensor<8xf32>
  return
}

// -----

func.func @load_i8_mask(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<8xi8>) {
  // expected-error @+1 {{'tile.load' op operand #2 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<8xi8>'}}
  %0 = tile.load %p[%o] mask %m : !tile.ptr<f32>[tensor<8xi32>], tensor<8xi8> -> tensor<8xf32>
  return
}

// -----

func.func @load_scalar_offset(%p: !tile.ptr<f32>, %o: i32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'i32'}}
  %0 = tile.load %p[%o] : !tile.ptr<f32>[i32] -> tensor<8xf32>
  return
}

// -----

func.func @load_base_not_pointer(%p: i64, %o: tensor<8xi32>) {
  // expected-error @+1 {{'tile.load' op operand #0 must be pointer to global memory holding elements of one scalar type, but got 'i64'}}
  %0 = tile.load %p[%o] : i64[tensor<8xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @store_offsets_shape(%p: !tile.ptr<f32>, %o: tensor<16xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.store' op offsets shape 16 differs from data shape 8}}
  tile.store %v, %p[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<16xi32>]
  return
}

// -----

func.func @store_mask_shape(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<1xi1>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.store' op mask shape 1 differs from data shape 8}}
  tile.store %v, %p[%o] mask %m : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>], tensor<1xi1>
  return
}

// -----

func.func @store_pointee(%p: !tile.ptr<i32>, %o: tensor<8xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.store' op data element type 'f32' does not match the pointee type 'i32'}}
  tile.store %v, %p[%o] : tensor<8xf32>, !tile.ptr<i32>[tensor<8xi32>]
  return
}

// -----

func.func @atomic_add_offsets_shape(%p: !tile.ptr<f32>, %o: tensor<4xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op offsets shape 4 differs from data shape 8}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<4xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @atomic_add_mask_shape(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %m: tensor<2x4xi1>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op mask shape 2x4 differs from data shape 8}}
  %0 = tile.atomic_add %v, %p[%o] mask %m : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>], tensor<2x4xi1> -> tensor<8xf32>
  return
}

// -----

func.func @atomic_add_pointee(%p: !tile.ptr<i32>, %o: tensor<8xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op data element type 'f32' does not match the pointee type 'i32'}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xf32>, !tile.ptr<i32>[tensor<8xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @atomic_add_f16(%p: !tile.ptr<f16>, %o: tensor<8xi32>, %v: tensor<8xf16>) {
  // expected-error @+1 {{'tile.atomic_add' op atomic add supports f32 and i32, got 'f16'}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xf16>, !tile.ptr<f16>[tensor<8xi32>] -> tensor<8xf16>
  return
}

// -----

func.func @atomic_add_i64(%p: !tile.ptr<i64>, %o: tensor<8xi32>, %v: tensor<8xi64>) {
  // expected-error @+1 {{'tile.atomic_add' op atomic add supports f32 and i32, got 'i64'}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xi64>, !tile.ptr<i64>[tensor<8xi32>] -> tensor<8xi64>
  return
}

// -----

func.func @atomic_add_result_shape(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.atomic_add' op result must have the value's type}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>] -> tensor<2x4xf32>
  return
}

// -----

func.func @atomic_add_result_element(%p: !tile.ptr<i32>, %o: tensor<8xi32>, %v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.atomic_add' op result must have the value's type}}
  %0 = tile.atomic_add %v, %p[%o] : tensor<8xi32>, !tile.ptr<i32>[tensor<8xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @store_missing_comma(%p: !tile.ptr<f32>, %o: tensor<8xi32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{expected ','}}
  tile.store %v %p[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>]
  return
}
