// Verifier and parser errors of shared-memory ops (shared_store/load/slice, async_copy/wait, barrier).
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @store_shape(%s: !tile.shared<16x32xf16>, %t: tensor<32x32xf16>) {
  // expected-error @+1 {{'tile.shared_store' op tile 'tensor<32x32xf16>' does not match shared buffer '!tile.shared<16x32xf16>'}}
  tile.shared_store %t, %s : tensor<32x32xf16>, !tile.shared<16x32xf16>
  return
}

// -----

func.func @store_element(%s: !tile.shared<16xf16>, %t: tensor<16xf32>) {
  // expected-error @+1 {{'tile.shared_store' op tile 'tensor<16xf32>' does not match shared buffer '!tile.shared<16xf16>'}}
  tile.shared_store %t, %s : tensor<16xf32>, !tile.shared<16xf16>
  return
}

// -----

func.func @load_shape(%s: !tile.shared<16x32xf16>) {
  // expected-error @+1 {{'tile.shared_load' op tile 'tensor<32x16xf16>' does not match shared buffer '!tile.shared<16x32xf16>'}}
  %0 = tile.shared_load %s : !tile.shared<16x32xf16> -> tensor<32x16xf16>
  return
}

// -----

func.func @load_element(%s: !tile.shared<16x32xf16>) {
  // expected-error @+1 {{'tile.shared_load' op tile 'tensor<16x32xbf16>' does not match shared buffer '!tile.shared<16x32xf16>'}}
  %0 = tile.shared_load %s : !tile.shared<16x32xf16> -> tensor<16x32xbf16>
  return
}

// -----

func.func @slice_rank_1(%s: !tile.shared<16xf16>, %i: i32) {
  // expected-error @+1 {{'tile.shared_slice' op slicing needs a shared buffer of rank >= 2}}
  %0 = tile.shared_slice %s[%i] : !tile.shared<16xf16> -> !tile.shared<16xf16>
  return
}

// -----

func.func @slice_shape(%s: !tile.shared<2x16x32xf16>, %i: i32) {
  // expected-error @+1 {{'tile.shared_slice' op result must drop dimension 0 of the source}}
  %0 = tile.shared_slice %s[%i] : !tile.shared<2x16x32xf16> -> !tile.shared<2x16xf16>
  return
}

// -----

#swizzle3 = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 4, order = [2, 1, 0], padding = 0>

func.func @slice_drops_layout(%s: !tile.shared<2x16x32xf16, #swizzle3>, %i: i32) {
  // expected-error @+1 {{'tile.shared_slice' op result must drop dimension 0 of the source: expected '!tile.shared<16x32xf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0], padding = 0>>', got '!tile.shared<16x32xf16>'}}
  %0 = tile.shared_slice %s[%i] : !tile.shared<2x16x32xf16, #swizzle3> -> !tile.shared<16x32xf16>
  return
}

// -----

#rows_by_stage = #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 2, order = [2, 0, 1], padding = 0>

func.func @slice_swizzled_by_stage(%s: !tile.shared<2x16x32xf16, #rows_by_stage>, %i: i32) {
  // expected-error @+1 {{'tile.shared_slice' op cannot slice '!tile.shared<2x16x32xf16, #tile.shared_layout<vec = 8, perPhase = 1, maxPhase = 2, order = [2, 0, 1], padding = 0>>': its layout swizzles or pads along dimension 0}}
  %0 = tile.shared_slice %s[%i] : !tile.shared<2x16x32xf16, #rows_by_stage> -> !tile.shared<16x32xf16>
  return
}

// -----

func.func @slice_element(%s: !tile.shared<2x16xf16>, %i: i32) {
  // expected-error @+1 {{'tile.shared_slice' op result must drop dimension 0 of the source}}
  %0 = tile.shared_slice %s[%i] : !tile.shared<2x16xf16> -> !tile.shared<16xf32>
  return
}

// -----

func.func @slice_index_type(%s: !tile.shared<2x16xf16>, %i: index) {
  // expected-error @+1 {{'tile.shared_slice' op operand #1 must be 32-bit signless integer, but got 'index'}}
  %0 = "tile.shared_slice"(%s, %i) : (!tile.shared<2x16xf16>, index) -> !tile.shared<16xf16>
  return
}

// -----

func.func @copy_offsets_shape(%p: !tile.ptr<f16>, %o: tensor<16x16xi32>, %s: !tile.shared<16x32xf16>) {
  // expected-error @+1 {{'tile.async_copy' op offsets shape 16x16 does not match the shared buffer 16x32}}
  %0 = tile.async_copy %p[%o], %s : !tile.ptr<f16>[tensor<16x16xi32>], !tile.shared<16x32xf16>
  return
}

// -----

func.func @copy_mask_shape(%p: !tile.ptr<f16>, %o: tensor<16x32xi32>, %s: !tile.shared<16x32xf16>, %m: tensor<16xi1>) {
  // expected-error @+1 {{'tile.async_copy' op mask shape does not match the shared buffer}}
  %0 = tile.async_copy %p[%o], %s mask %m : !tile.ptr<f16>[tensor<16x32xi32>], !tile.shared<16x32xf16>, tensor<16xi1>
  return
}

// -----

func.func @copy_element(%p: !tile.ptr<f32>, %o: tensor<16x32xi32>, %s: !tile.shared<16x32xf16>) {
  // expected-error @+1 {{'tile.async_copy' op source and shared buffer element types differ}}
  %0 = tile.async_copy %p[%o], %s : !tile.ptr<f32>[tensor<16x32xi32>], !tile.shared<16x32xf16>
  return
}

// -----

func.func @copy_to_tensor(%p: !tile.ptr<f16>, %o: tensor<16xi32>, %t: tensor<16xf16>) {
  // expected-error @+1 {{'tile.async_copy' op operand #2 must be a buffer in shared memory (LDS), with an optional shared layout, but got 'tensor<16xf16>'}}
  %0 = tile.async_copy %p[%o], %t : !tile.ptr<f16>[tensor<16xi32>], tensor<16xf16>
  return
}

// -----

func.func @wait_without_pending(%t: !tile.async_token) {
  // The parser reports the missing keyword at the next token.
  // expected-error @+2 {{expected 'pending'}}
  tile.async_wait %t
  return
}

// -----

func.func @wait_on_non_token(%t: i1) {
  // expected-error @+1 {{'tile.async_wait' op operand #0 must be variadic of completion token of an asynchronous global-to-shared copy, but got 'i1'}}
  "tile.async_wait"(%t) {pending = 0 : i32} : (i1) -> ()
  return
}

// -----

func.func @barrier_with_operand(%x: i32) {
  // expected-error @+1 {{'tile.barrier' op requires zero operands}}
  "tile.barrier"(%x) : (i32) -> ()
  return
}

// -----

func.func @alloc_tensor() {
  // expected-error @+1 {{'tile.shared_alloc' op result #0 must be a buffer in shared memory (LDS), with an optional shared layout, but got 'tensor<4xf32>'}}
  %0 = tile.shared_alloc : tensor<4xf32>
  return
}

// -----

func.func @copy_buffer_i64_offsets(%v: !tile.buffer<f32>, %o: tensor<8xi64>, %s: !tile.shared<8xf32>) {
  // expected-error @+1 {{'tile.async_copy' op offsets into a buffer view must be i32, got 'i64'}}
  %t = tile.async_copy %v[%o], %s : !tile.buffer<f32>[tensor<8xi64>], !tile.shared<8xf32>
  return
}

// -----

func.func @copy_buffer_element(%v: !tile.buffer<f16>, %o: tensor<8xi32>, %s: !tile.shared<8xf32>) {
  // expected-error @+1 {{'tile.async_copy' op source and shared buffer element types differ}}
  %t = tile.async_copy %v[%o], %s : !tile.buffer<f16>[tensor<8xi32>], !tile.shared<8xf32>
  return
}
