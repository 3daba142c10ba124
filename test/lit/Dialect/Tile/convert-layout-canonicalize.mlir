// tile.convert_layout canonicalization: equal layouts fold away, chains fold into one
// conversion (or none when they return to the start), and a converted splat is the splat in
// the new layout.
// RUN: %wavetile-opt %s -allow-unregistered-dialect -canonicalize | FileCheck %s

#a = #tile.blocked<sizePerThread = [4], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
#b = #tile.blocked<sizePerThread = [2], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>
#c = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [4], order = [0]>

// CHECK-LABEL: func.func @chains
// CHECK-SAME:    (%[[X:.*]]: tensor<1024xf32, #[[A:.*]]>)
// CHECK:         %[[C:.*]] = tile.convert_layout %[[X]] : tensor<1024xf32, #[[A]]> -> tensor<1024xf32, #[[CL:.*]]>
// CHECK-NEXT:    "test.use"(%[[X]], %[[C]], %[[X]])
func.func @chains(%x: tensor<1024xf32, #a>) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %same = tile.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #a>
  %b = tile.convert_layout %x : tensor<1024xf32, #a> -> tensor<1024xf32, #b>
  %c = tile.convert_layout %b : tensor<1024xf32, #b> -> tensor<1024xf32, #c>
  %back = tile.convert_layout %b : tensor<1024xf32, #b> -> tensor<1024xf32, #a>
  "test.use"(%same, %c, %back) : (tensor<1024xf32, #a>, tensor<1024xf32, #c>, tensor<1024xf32, #a>) -> ()
  return
}

// CHECK-LABEL: func.func @splat
// CHECK-SAME:    (%[[S:.*]]: f32)
// CHECK-NEXT:    %[[T:.*]] = tile.splat %[[S]] : f32 -> tensor<1024xf32, #[[B:.*]]>
// CHECK-NEXT:    "test.use"(%[[T]])
func.func @splat(%s: f32) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 64 : i32} {
  %t = tile.splat %s : f32 -> tensor<1024xf32, #a>
  %u = tile.convert_layout %t : tensor<1024xf32, #a> -> tensor<1024xf32, #b>
  "test.use"(%u) : (tensor<1024xf32, #b>) -> ()
  return
}
