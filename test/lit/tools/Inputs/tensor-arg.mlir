func.func @takes_a_tile(%t: tensor<8xf32>, %x: !tile.ptr<f32>) attributes {tile.kernel} {
  %o = tile.arange 0 to 8 : tensor<8xi32>
  tile.store %t, %x[%o] : tensor<8xf32>, !tile.ptr<f32>[tensor<8xi32>]
  return
}
