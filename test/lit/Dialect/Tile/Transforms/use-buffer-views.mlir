// tile-use-buffer-views: loads and stores with i32 offsets through pointer arguments marked
// tile.within_2gib go through one buffer view per argument, made at the kernel's entry.
// RUN: %wavetile-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(tile-use-buffer-views))' | FileCheck %s

// CHECK-LABEL: func.func @marked
// The view covers the elements below 2^31 - 1 bytes: 536870911 f32s, 1073741823 bf16s.
// CHECK-DAG: %[[N32:.*]] = arith.constant 536870911 : i32
// CHECK-DAG: %[[N16:.*]] = arith.constant 1073741823 : i32
// CHECK-DAG: %[[X:.*]] = tile.make_buffer %arg0, %[[N32]] {tile.within_2gib} : !tile.ptr<f32> -> !tile.buffer<f32>
// CHECK-DAG: %[[OUT:.*]] = tile.make_buffer %arg1, %[[N16]] {tile.within_2gib} : !tile.ptr<bf16> -> !tile.buffer<bf16>
// CHECK: %[[V:.*]] = tile.buffer_load %[[X]][%{{.*}}] mask %[[M:[^ ]*]]
// `other` replaces what the view reads as 0 where the mask is clear.
// CHECK: %[[OTHER:.*]] = tile.splat %{{.*}} : f32 -> tensor<64xf32>
// CHECK: arith.select %[[M]], %[[V]], %[[OTHER]] : tensor<64xi1>, tensor<64xf32>
// CHECK: tile.buffer_load %[[X]]
// CHECK-NOT: arith.select
// CHECK: tile.buffer_store %{{.*}}, %[[OUT]][%{{.*}}] mask %[[M]]
// CHECK-NOT: tile.load
// CHECK-NOT: tile.store
func.func @marked(%x: !tile.ptr<f32> {tile.within_2gib}, %out: !tile.ptr<bf16> {tile.within_2gib}, %n: i32)
    attributes {tile.kernel} {
  %offsets = tile.arange 0 to 64 : tensor<64xi32>
  %bound = tile.splat %n : i32 -> tensor<64xi32>
  %mask = arith.cmpi slt, %offsets, %bound : tensor<64xi32>
  %minus_inf = arith.constant 0xFF800000 : f32
  %a = tile.load %x[%offsets] mask %mask other %minus_inf : !tile.ptr<f32>[tensor<64xi32>], tensor<64xi1> other f32 -> tensor<64xf32>
  %b = tile.load %x[%offsets] : !tile.ptr<f32>[tensor<64xi32>] -> tensor<64xf32>
  %sum = arith.addf %a, %b : tensor<64xf32>
  %narrow = arith.truncf %sum : tensor<64xf32> to tensor<64xbf16>
  tile.store %narrow, %out[%offsets] mask %mask : tensor<64xbf16>, !tile.ptr<bf16>[tensor<64xi32>], tensor<64xi1>
  return
}

// -----

// Unmarked pointers, 64-bit offsets and functions that are not kernels keep their accesses.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: tile.make_buffer
// CHECK: tile.load %arg0
// CHECK: tile.load %arg1
// CHECK: tile.store
func.func @unmarked(%x: !tile.ptr<f32>, %y: !tile.ptr<f32> {tile.within_2gib}, %out: !tile.ptr<f32> {tile.within_2gib})
    attributes {tile.kernel} {
  %offsets = tile.arange 0 to 64 : tensor<64xi32>
  %wide = arith.extsi %offsets : tensor<64xi32> to tensor<64xi64>
  %a = tile.load %x[%offsets] : !tile.ptr<f32>[tensor<64xi32>] -> tensor<64xf32>
  %b = tile.load %y[%wide] : !tile.ptr<f32>[tensor<64xi64>] -> tensor<64xf32>
  %sum = arith.addf %a, %b : tensor<64xf32>
  tile.store %sum, %out[%wide] : tensor<64xf32>, !tile.ptr<f32>[tensor<64xi64>]
  return
}

// CHECK-LABEL: func.func @helper
// CHECK-NOT: tile.make_buffer
// CHECK: tile.load
func.func @helper(%x: !tile.ptr<f32> {tile.within_2gib}) -> tensor<64xf32> {
  %offsets = tile.arange 0 to 64 : tensor<64xi32>
  %a = tile.load %x[%offsets] : !tile.ptr<f32>[tensor<64xi32>] -> tensor<64xf32>
  return %a : tensor<64xf32>
}
