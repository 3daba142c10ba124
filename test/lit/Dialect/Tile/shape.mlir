// Round-trip of tile construction and shape ops: arange, splat, broadcast, expand_dims,
// reshape, trans, convert_layout (and convert_layout's folder under -canonicalize).
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s
// RUN: %wavetile-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

#row = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 8], warpsPerBlock = [4, 1], order = [1, 0]>
#col = #tile.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 8], warpsPerBlock = [1, 4], order = [0, 1]>
#flat = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>

// The printer defines one alias per layout at the top of the module; capture each.
// CHECK-DAG: #[[ROW:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 8], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[COL:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 8], warpsPerBlock = [1, 4], order = [0, 1]>
// CHECK-DAG: #[[FLAT:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>

// CHECK-LABEL: func.func @arange
// CHECK:         tile.arange 0 to 128 : tensor<128xi32>
// CHECK:         tile.arange -8 to 8 : tensor<16xi32>
// CHECK:         tile.arange 5 to 6 : tensor<1xi32, #[[FLAT]]>
func.func @arange() -> (tensor<128xi32>, tensor<16xi32>, tensor<1xi32, #flat>) {
  %0 = tile.arange 0 to 128 : tensor<128xi32>
  %1 = tile.arange -8 to 8 : tensor<16xi32>
  %2 = tile.arange 5 to 6 : tensor<1xi32, #flat>
  return %0, %1, %2 : tensor<128xi32>, tensor<16xi32>, tensor<1xi32, #flat>
}

// CHECK-LABEL: func.func @splat
// CHECK-SAME:    (%[[F:.*]]: f32, %[[I:.*]]: i1)
// CHECK:         tile.splat %[[F]] : f32 -> tensor<16x16xf32, #[[ROW]]>
// CHECK:         tile.splat %[[I]] : i1 -> tensor<8xi1>
func.func @splat(%f: f32, %i: i1) {
  %0 = tile.splat %f : f32 -> tensor<16x16xf32, #row>
  %1 = tile.splat %i : i1 -> tensor<8xi1>
  return
}

// CHECK-LABEL: func.func @broadcast
// CHECK-SAME:    (%[[A:.*]]: tensor<1x32xf16>, %[[B:.*]]: tensor<16x1xi32>, %[[C:.*]]: tensor<8x8xf32>)
// CHECK:         tile.broadcast %[[A]] : tensor<1x32xf16> -> tensor<16x32xf16>
// CHECK:         tile.broadcast %[[B]] : tensor<16x1xi32> -> tensor<16x64xi32, #[[ROW]]>
// CHECK:         tile.broadcast %[[C]] : tensor<8x8xf32> -> tensor<8x8xf32>
func.func @broadcast(%a: tensor<1x32xf16>, %b: tensor<16x1xi32>, %c: tensor<8x8xf32>) {
  %0 = tile.broadcast %a : tensor<1x32xf16> -> tensor<16x32xf16>
  %1 = tile.broadcast %b : tensor<16x1xi32> -> tensor<16x64xi32, #row>
  %2 = tile.broadcast %c : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// CHECK-LABEL: func.func @expand_dims
// CHECK-SAME:    (%[[V:.*]]: tensor<32xi32>)
// CHECK:         tile.expand_dims %[[V]] axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
// CHECK:         tile.expand_dims %[[V]] axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
// CHECK:         %[[M:.*]] = tile.expand_dims %[[V]] axis = 1 : tensor<32xi32> -> tensor<32x1xi32, #[[COL]]>
// CHECK:         tile.expand_dims %[[M]] axis = 1 : tensor<32x1xi32, #[[COL]]> -> tensor<32x1x1xi32>
func.func @expand_dims(%v: tensor<32xi32>) {
  %0 = tile.expand_dims %v axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %1 = tile.expand_dims %v axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %2 = tile.expand_dims %v axis = 1 : tensor<32xi32> -> tensor<32x1xi32, #col>
  %3 = tile.expand_dims %2 axis = 1 : tensor<32x1xi32, #col> -> tensor<32x1x1xi32>
  return
}

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[V:.*]]: tensor<4x8xbf16>)
// CHECK:         tile.reshape %[[V]] : tensor<4x8xbf16> -> tensor<32xbf16>
// CHECK:         tile.reshape %[[V]] : tensor<4x8xbf16> -> tensor<2x2x8xbf16>
// CHECK:         tile.reshape %[[V]] : tensor<4x8xbf16> -> tensor<8x4xbf16, #[[ROW]]>
func.func @reshape(%v: tensor<4x8xbf16>) {
  %0 = tile.reshape %v : tensor<4x8xbf16> -> tensor<32xbf16>
  %1 = tile.reshape %v : tensor<4x8xbf16> -> tensor<2x2x8xbf16>
  %2 = tile.reshape %v : tensor<4x8xbf16> -> tensor<8x4xbf16, #row>
  return
}

// CHECK-LABEL: func.func @trans
// CHECK-SAME:    (%[[V:.*]]: tensor<16x32xf32, #[[ROW]]>, %[[W:.*]]: tensor<2x3x4xi8>)
// CHECK:         tile.trans %[[V]] [1, 0] : tensor<16x32xf32, #[[ROW]]> -> tensor<32x16xf32, #[[COL]]>
// CHECK:         tile.trans %[[V]] [0, 1] : tensor<16x32xf32, #[[ROW]]> -> tensor<16x32xf32>
// CHECK:         tile.trans %[[W]] [2, 0, 1] : tensor<2x3x4xi8> -> tensor<4x2x3xi8>
func.func @trans(%v: tensor<16x32xf32, #row>, %w: tensor<2x3x4xi8>) {
  %0 = tile.trans %v [1, 0] : tensor<16x32xf32, #row> -> tensor<32x16xf32, #col>
  %1 = tile.trans %v [0, 1] : tensor<16x32xf32, #row> -> tensor<16x32xf32>
  %2 = tile.trans %w [2, 0, 1] : tensor<2x3x4xi8> -> tensor<4x2x3xi8>
  return
}

// CHECK-LABEL: func.func @convert_layout
// CHECK-SAME:    (%[[V:.*]]: tensor<32x32xf32, #[[ROW]]>)
// CHECK:         %[[A:.*]] = tile.convert_layout %[[V]] : tensor<32x32xf32, #[[ROW]]> -> tensor<32x32xf32, #[[COL]]>
// CHECK:         %[[B:.*]] = tile.convert_layout %[[A]] : tensor<32x32xf32, #[[COL]]> -> tensor<32x32xf32>
// CHECK:         %[[C:.*]] = tile.convert_layout %[[B]] : tensor<32x32xf32> -> tensor<32x32xf32>
// CHECK:         return %[[C]]
// The folder drops the identity conversion and folds the chain into one conversion.
// CANON-LABEL: func.func @convert_layout
// CANON-SAME:    (%[[V:.*]]: tensor<32x32xf32, #{{.*}}>)
// CANON:         %[[B:.*]] = tile.convert_layout %[[V]] : {{.*}} -> tensor<32x32xf32>
// CANON-NOT:     tile.convert_layout
// CANON:         return %[[B]]
func.func @convert_layout(%v: tensor<32x32xf32, #row>) -> tensor<32x32xf32> {
  %0 = tile.convert_layout %v : tensor<32x32xf32, #row> -> tensor<32x32xf32, #col>
  %1 = tile.convert_layout %0 : tensor<32x32xf32, #col> -> tensor<32x32xf32>
  %2 = tile.convert_layout %1 : tensor<32x32xf32> -> tensor<32x32xf32>
  return %2 : tensor<32x32xf32>
}

// Identity conversions with a layout fold too, even when chained.
// CANON-LABEL: func.func @convert_layout_identity_chain
// CANON-SAME:    (%[[V:.*]]: tensor<64x64xf16, #{{.*}}>)
// CANON-NOT:     tile.convert_layout
// CANON:         return %[[V]]
func.func @convert_layout_identity_chain(%v: tensor<64x64xf16, #row>) -> tensor<64x64xf16, #row> {
  %0 = tile.convert_layout %v : tensor<64x64xf16, #row> -> tensor<64x64xf16, #row>
  %1 = tile.convert_layout %0 : tensor<64x64xf16, #row> -> tensor<64x64xf16, #row>
  return %1 : tensor<64x64xf16, #row>
}

// Shape ops are Pure: dead ones disappear.
// CANON-LABEL: func.func @dead_shape_ops
// CANON-NOT:     tile.
// CANON:         return
func.func @dead_shape_ops(%v: tensor<32xi32>, %f: f32) {
  %0 = tile.arange 0 to 32 : tensor<32xi32>
  %1 = tile.splat %f : f32 -> tensor<32xf32>
  %2 = tile.expand_dims %v axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %3 = tile.broadcast %2 : tensor<1x32xi32> -> tensor<4x32xi32>
  %4 = tile.reshape %3 : tensor<4x32xi32> -> tensor<128xi32>
  %5 = tile.trans %3 [1, 0] : tensor<4x32xi32> -> tensor<32x4xi32>
  return
}
