// Verifier errors of tile.reduce / tile.scan and their combiner regions.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @reduce_axis(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis 2 out of range for a tile of rank 2}}
  %0 = tile.reduce sum %v axis = 2 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_negative_axis(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op axis -1 out of range for a tile of rank 2}}
  %0 = tile.reduce sum %v axis = -1 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_1d_to_tile(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op reducing a 1-D tile gives a 'f32' scalar}}
  %0 = tile.reduce sum %v axis = 0 : tensor<8xf32> -> tensor<1xf32>
  return
}

// -----

func.func @reduce_1d_type(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op reducing a 1-D tile gives a 'f32' scalar}}
  %0 = tile.reduce max %v axis = 0 : tensor<8xf32> -> f16
  return
}

// -----

func.func @reduce_kept_axis(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op result must be a 4 tile of 'f32'}}
  %0 = tile.reduce sum %v axis = 1 : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_nd_to_scalar(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.reduce' op result must be a 8 tile of 'f32'}}
  %0 = tile.reduce sum %v axis = 0 : tensor<4x8xf32> -> f32
  return
}

// -----

func.func @reduce_nd_element(%v: tensor<2x4x8xi32>) {
  // expected-error @+1 {{'tile.reduce' op result must be a 2x8 tile of 'i32'}}
  %0 = tile.reduce sum %v axis = 1 : tensor<2x4x8xi32> -> tensor<2x8xi64>
  return
}

// -----

func.func @reduce_region_on_sum(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op only a 'custom' combiner takes a region}}
  %0 = tile.reduce sum %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_index_elements(%v: tensor<8xindex>) {
  // expected-error @+1 {{'tile.reduce' op operand #0 must be statically shaped tensor of signless integer or floating-point values, but got 'tensor<8xindex>'}}
  %0 = tile.reduce sum %v axis = 0 : tensor<8xindex> -> index
  return
}

// -----

func.func @scan_pointer_elements(%v: tensor<8x!tile.ptr<f32>>) {
  // expected-error @+1 {{'tile.scan' op operand #0 must be statically shaped tensor of signless integer or floating-point values, but got 'tensor<8x!tile.ptr<f32>>'}}
  %0 = tile.scan max %v axis = 0 : tensor<8x!tile.ptr<f32>> -> tensor<8x!tile.ptr<f32>>
  return
}

// -----

func.func @reduce_custom_without_region(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op a 'custom' combiner needs a region}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32
  return
}

// -----

func.func @reduce_custom_one_argument(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region takes two 'f32' arguments}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_custom_argument_type(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region takes two 'f32' arguments}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f16):
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_custom_yield_type(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region must yield one 'f32'}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.truncf %a : f32 to f16
    tile.yield %c : f16
  }
  return
}

// -----

func.func @reduce_custom_not_yield(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region must yield one 'f32'}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    cf.br ^bb1
  ^bb1:
    tile.yield %a : f32
  }
  return
}

// -----

func.func @reduce_custom_no_terminator(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region must yield one 'f32'}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
  }
  return
}

// -----

// An empty combiner block used to be read through Block::getTerminator() (undefined behaviour).
func.func @reduce_custom_empty_block(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.reduce' op the combiner region must yield one 'f32'}}
  %0 = tile.reduce custom %v axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
  }
  return
}

// -----

func.func @scan_axis(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.scan' op axis 2 out of range for a tile of rank 2}}
  %0 = tile.scan sum %v axis = 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @scan_negative_axis(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.scan' op axis -1 out of range for a tile of rank 1}}
  %0 = tile.scan sum %v axis = -1 : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @scan_shape(%v: tensor<4x8xf32>) {
  // expected-error @+1 {{'tile.scan' op result must have the source's shape and element type}}
  %0 = tile.scan sum %v axis = 1 : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @scan_element(%v: tensor<8xf32>) {
  // expected-error @+1 {{'tile.scan' op result must have the source's shape and element type}}
  %0 = tile.scan sum %v axis = 0 : tensor<8xf32> -> tensor<8xf16>
  return
}

// -----

func.func @scan_custom_arguments(%v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.scan' op the combiner region takes two 'i32' arguments}}
  %0 = tile.scan custom %v axis = 0 : tensor<8xi32> -> tensor<8xi32> {
  ^bb0(%a: i32, %b: i32, %c: i32):
    tile.yield %a : i32
  }
  return
}

// -----

func.func @scan_region_on_max(%v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.scan' op only a 'custom' combiner takes a region}}
  %0 = tile.scan max %v axis = 0 : tensor<8xi32> -> tensor<8xi32> {
  ^bb0(%a: i32, %b: i32):
    tile.yield %a : i32
  }
  return
}

// -----

func.func @scan_custom_without_region(%v: tensor<8xi32>) {
  // expected-error @+1 {{'tile.scan' op a 'custom' combiner needs a region}}
  %0 = tile.scan custom %v axis = 0 : tensor<8xi32> -> tensor<8xi32>
  return
}

// -----

func.func @scan_scalar_result(%v: tensor<8xi32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'i32'}}
  %0 = tile.scan sum %v axis = 0 : tensor<8xi32> -> i32
  return
}

// -----

func.func @unknown_kind(%v: tensor<8xi32>) {
  // expected-error @+2 {{expected ::wavetile::tile::CombineKind to be one of: sum, max, min, custom}}
  // expected-error @+1 {{failed to parse Tile_CombineKindAttr parameter}}
  %0 = tile.reduce prod %v axis = 0 : tensor<8xi32> -> i32
  return
}

// -----

func.func @yield_outside_combiner(%x: i32) {
  // expected-error @+1 {{'tile.yield' op expects parent op to be one of 'tile.reduce, tile.scan'}}
  tile.yield %x : i32
}
