// Verifier and type-constraint errors of tile.make_buffer, tile.buffer_load, tile.buffer_store.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @make_buffer_element(%p: !tile.ptr<f32>, %n: i32) {
  // expected-error @+1 {{'tile.make_buffer' op buffer element type must match the pointer's}}
  %0 = tile.make_buffer %p, %n : !tile.ptr<f32> -> !tile.buffer<f16>
  return
}

// -----

func.func @make_buffer_i64_count_generic(%p: !tile.ptr<f32>, %n: i64) {
  // expected-error @+1 {{'tile.make_buffer' op operand #1 must be 32-bit signless integer, but got 'i64'}}
  %0 = "tile.make_buffer"(%p, %n) : (!tile.ptr<f32>, i64) -> !tile.buffer<f32>
  return
}

// -----

func.func @buffer_load_offsets_shape(%b: !tile.buffer<f32>, %o: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_load' op offsets shape 8 differs from data shape 2x4}}
  %0 = tile.buffer_load %b[%o] : !tile.buffer<f32>[tensor<8xi32>] -> tensor<2x4xf32>
  return
}

// -----

func.func @buffer_load_mask_shape(%b: !tile.buffer<f32>, %o: tensor<8xi32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{'tile.buffer_load' op mask shape 4 differs from data shape 8}}
  %0 = tile.buffer_load %b[%o] mask %m : !tile.buffer<f32>[tensor<8xi32>], tensor<4xi1> -> tensor<8xf32>
  return
}

// -----

func.func @buffer_load_element(%b: !tile.buffer<f32>, %o: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_load' op data element type 'bf16' does not match the pointee type 'f32'}}
  %0 = tile.buffer_load %b[%o] : !tile.buffer<f32>[tensor<8xi32>] -> tensor<8xbf16>
  return
}

// -----

// Buffer offsets are 32-bit.
func.func @buffer_load_i64_offsets(%b: !tile.buffer<f32>, %o: tensor<8xi64>) {
  // expected-error @+1 {{'tile.buffer_load' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<8xi64>'}}
  %0 = tile.buffer_load %b[%o] : !tile.buffer<f32>[tensor<8xi64>] -> tensor<8xf32>
  return
}

// -----

func.func @buffer_load_from_pointer(%p: !tile.ptr<f32>, %o: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_load' op operand #0 must be bounded view of global memory: out-of-range loads read 0, stores are dropped, but got '!tile.ptr<f32>'}}
  %0 = tile.buffer_load %p[%o] : !tile.ptr<f32>[tensor<8xi32>] -> tensor<8xf32>
  return
}

// -----

func.func @buffer_store_offsets_shape(%b: !tile.buffer<i32>, %o: tensor<16xi32>, %v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_store' op offsets shape 16 differs from data shape 8}}
  tile.buffer_store %v, %b[%o] : tensor<8xi32>, !tile.buffer<i32>[tensor<16xi32>]
  return
}

// -----

func.func @buffer_store_mask_shape(%b: !tile.buffer<i32>, %o: tensor<8xi32>, %m: tensor<8x1xi1>, %v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_store' op mask shape 8x1 differs from data shape 8}}
  tile.buffer_store %v, %b[%o] mask %m : tensor<8xi32>, !tile.buffer<i32>[tensor<8xi32>], tensor<8x1xi1>
  return
}

// -----

func.func @buffer_store_element(%b: !tile.buffer<i32>, %o: tensor<8xi32>, %v: tensor<8xi8>) {
  // expected-error @+1 {{'tile.buffer_store' op data element type 'i8' does not match the pointee type 'i32'}}
  tile.buffer_store %v, %b[%o] : tensor<8xi8>, !tile.buffer<i32>[tensor<8xi32>]
  return
}

// -----

func.func @buffer_store_i64_offsets(%b: !tile.buffer<i32>, %o: tensor<8xi64>, %v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.buffer_store' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<8xi64>'}}
  tile.buffer_store %v, %b[%o] : tensor<8xi32>, !tile.buffer<i32>[tensor<8xi64>]
  return
}
