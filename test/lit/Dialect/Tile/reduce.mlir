// Round-trip of tile.reduce and tile.scan with sum/max/min and custom combiner regions.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// The layouts of @reduce_slice_layout, printed as aliases at the top of the module.
// CHECK-DAG: #[[BLK:[a-z_0-9]+]] = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[ROW:[a-z_0-9]+]] = #tile.slice<dim = 1, parent = #[[BLK]]>

// CHECK-LABEL: func.func @reduce_builtin
// CHECK-SAME:    (%[[V:.*]]: tensor<128xf32>, %[[M:.*]]: tensor<4x8xi32>)
// CHECK:         tile.reduce sum %[[V]] axis = 0 : tensor<128xf32> -> f32
// CHECK-NEXT:    tile.reduce max %[[V]] axis = 0 : tensor<128xf32> -> f32
// CHECK-NEXT:    tile.reduce min %[[M]] axis = 0 : tensor<4x8xi32> -> tensor<8xi32>
// CHECK-NEXT:    tile.reduce sum %[[M]] axis = 1 : tensor<4x8xi32> -> tensor<4xi32>
func.func @reduce_builtin(%v: tensor<128xf32>, %m: tensor<4x8xi32>) {
  %0 = tile.reduce sum %v axis = 0 : tensor<128xf32> -> f32
  %1 = tile.reduce max %v axis = 0 : tensor<128xf32> -> f32
  %2 = tile.reduce min %m axis = 0 : tensor<4x8xi32> -> tensor<8xi32>
  %3 = tile.reduce sum %m axis = 1 : tensor<4x8xi32> -> tensor<4xi32>
  return
}

// Reducing a 3-D tile keeps the other dimensions in order; extra attributes print after 'attributes'.
// CHECK-LABEL: func.func @reduce_3d
// CHECK:         tile.reduce max %{{.*}} axis = 1 attributes {tag} : tensor<2x3x4xbf16> -> tensor<2x4xbf16>
func.func @reduce_3d(%v: tensor<2x3x4xbf16>) -> tensor<2x4xbf16> {
  %0 = tile.reduce max %v axis = 1 attributes {tag} : tensor<2x3x4xbf16> -> tensor<2x4xbf16>
  return %0 : tensor<2x4xbf16>
}

// CHECK-LABEL: func.func @reduce_custom
// CHECK:         %[[R:.*]] = tile.reduce custom %{{.*}} axis = 1 : tensor<4x8xi32> -> tensor<4xi32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: i32, %[[B:.*]]: i32):
// CHECK-NEXT:      %[[X:.*]] = arith.xori %[[A]], %[[B]] : i32
// CHECK-NEXT:      tile.yield %[[X]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @reduce_custom(%m: tensor<4x8xi32>) -> tensor<4xi32> {
  %0 = tile.reduce custom %m axis = 1 : tensor<4x8xi32> -> tensor<4xi32> {
  ^bb0(%a: i32, %b: i32):
    %x = arith.xori %a, %b : i32
    tile.yield %x : i32
  }
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @scan
// CHECK-SAME:    (%[[V:.*]]: tensor<64xf32>, %[[M:.*]]: tensor<4x16xi64>)
// CHECK:         tile.scan sum %[[V]] axis = 0 : tensor<64xf32> -> tensor<64xf32>
// CHECK-NEXT:    tile.scan max %[[M]] axis = 1 : tensor<4x16xi64> -> tensor<4x16xi64>
// CHECK-NEXT:    tile.scan min %[[M]] axis = 0 : tensor<4x16xi64> -> tensor<4x16xi64>
// CHECK-NEXT:    tile.scan custom %[[V]] axis = 0 : tensor<64xf32> -> tensor<64xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:      tile.yield %[[P]] : f32
// CHECK-NEXT:    }
func.func @scan(%v: tensor<64xf32>, %m: tensor<4x16xi64>) {
  %0 = tile.scan sum %v axis = 0 : tensor<64xf32> -> tensor<64xf32>
  %1 = tile.scan max %m axis = 1 : tensor<4x16xi64> -> tensor<4x16xi64>
  %2 = tile.scan min %m axis = 0 : tensor<4x16xi64> -> tensor<4x16xi64>
  %3 = tile.scan custom %v axis = 0 : tensor<64xf32> -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    tile.yield %p : f32
  }
  return
}

// Layouts: the reduced tile of a blocked tile has the slice layout of its parent.
#blk = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 16], warpsPerBlock = [4, 1], order = [1, 0]>
#row = #tile.slice<dim = 1, parent = #blk>
// CHECK-LABEL: func.func @reduce_slice_layout
// CHECK:         tile.reduce sum %{{.*}} axis = 1 : tensor<16x64xf32, #[[BLK]]> -> tensor<16xf32, #[[ROW]]>
func.func @reduce_slice_layout(%v: tensor<16x64xf32, #blk>) -> tensor<16xf32, #row> {
  %0 = tile.reduce sum %v axis = 1 : tensor<16x64xf32, #blk> -> tensor<16xf32, #row>
  return %0 : tensor<16xf32, #row>
}
