func.func @broken(%x: !tile.ptr<f32>) attributes {tile.kernel} {
  %o = tile.arange 0 to 8 : tensor<8xi32>
  %v = tile.load %x[%o] : !tile.ptr<f32>[tensor<8xi32>] ->
  return
}
