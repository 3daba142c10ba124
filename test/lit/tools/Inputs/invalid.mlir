func.func @wrong_pointee(%x: !tile.ptr<f16>) attributes {tile.kernel} {
  %o = tile.arange 0 to 8 : tensor<8xi32>
  %v = tile.load %x[%o] : !tile.ptr<f16>[tensor<8xi32>] -> tensor<8xf32>
  return
}
