// Tiles are static blocks of values: dynamic dimensions are rejected at verification.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @dynamic_splat(%x: f32) {
  // expected-error @+1 {{static}}
  %0 = tile.splat %x : f32 -> tensor<?xf32>
  return
}

// -----

func.func @dynamic_reshape(%t: tensor<?xf32>) {
  // expected-error @+1 {{static}}
  %0 = tile.reshape %t : tensor<?xf32> -> tensor<4xf32>
  return
}
