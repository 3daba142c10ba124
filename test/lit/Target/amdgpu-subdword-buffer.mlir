// Buffer accesses under a dword move i8/i16: the AMDGPU backend cannot select a raw buffer
// load or store of <2 x i8> (it failed with "Do not know how to split the result of this
// operator!" on gemm_a4w4's 16-row tiles). Two bytes per lane here, both targets.
// RUN: %wavetile compile %s --target gfx942 -o %t.hsaco
// RUN: %wavetile inspect %t.hsaco | FileCheck %s
// RUN: %wavetile compile %s --target gfx950 -o %t.hsaco
// RUN: %wavetile inspect %t.hsaco | FileCheck %s
// CHECK: buffer_load_ushort=
// CHECK-SAME: buffer_store_short=
func.func @bytes(%x: !tile.ptr<i8> {tile.divisibility = 16 : i64}, %out: !tile.ptr<i8> {tile.divisibility = 16 : i64}, %n: i32) attributes {tile.kernel, tile.num_warps = 1 : i32} {
  %o = tile.arange 0 to 128 : tensor<128xi32>
  %xb = tile.make_buffer %x, %n : !tile.ptr<i8> -> !tile.buffer<i8>
  %v = tile.buffer_load %xb[%o] : !tile.buffer<i8>[tensor<128xi32>] -> tensor<128xi8>
  %ob = tile.make_buffer %out, %n : !tile.ptr<i8> -> !tile.buffer<i8>
  tile.buffer_store %v, %ob[%o] : tensor<128xi8>, !tile.buffer<i8>[tensor<128xi32>]
  return
}
