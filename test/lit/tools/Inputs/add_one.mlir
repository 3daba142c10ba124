func.func @add_one(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %o = tile.arange 0 to 64 : tensor<64xi32>
  %s = tile.splat %n : i32 -> tensor<64xi32>
  %m = arith.cmpi slt, %o, %s : tensor<64xi32>
  %v = tile.load %x[%o] mask %m : !tile.ptr<f32>[tensor<64xi32>], tensor<64xi1> -> tensor<64xf32>
  %one = arith.constant 1.0 : f32
  %ones = tile.splat %one : f32 -> tensor<64xf32>
  %r = arith.addf %v, %ones : tensor<64xf32>
  tile.store %r, %x[%o] mask %m : tensor<64xf32>, !tile.ptr<f32>[tensor<64xi32>], tensor<64xi1>
  return
}
