// convert-tile-to-gpu: what a kernel's specialization knows (tile.divisibility: a pointer
// aligned to 16 bytes, an integer a multiple of 16) decides at compile time that vector groups
// are aligned, so the run-time alignment check goes. Without it the check stays. A mask that
// is known to be all set or all clear over each group (x < n with x stepping by one from a
// multiple of the group and n a multiple of it) needs no per-element path either: a group
// is moved whole or not at all, with one predicated PTX access (no branch). Other masks
// choose between the vector and the per-element path at run time. Shifts right and low-bit
// masks by constants keep what they can of a run (x >> 3 is constant, x & 7 steps by one).
// RUN: %wavetile-opt %s -split-input-file -convert-tile-to-gpu=target=sm_90 -canonicalize -cse | FileCheck %s

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// Offsets row * n + arange: the 16-aligned base, n a multiple of 16 and arange's runs of 4
// make every 4-element group start 16 bytes apart from an aligned address.
// CHECK-LABEL: gpu.func @known
// CHECK-NOT:     llvm.and
// CHECK-NOT:     scf.if
// CHECK:         llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $5, 0; mov.b32 $0, 0; mov.b32 $1, 0; mov.b32 $2, 0; mov.b32 $3, 0; @p ld.global.v4.b32 {$0, $1, $2, $3}, [$4]; }", "=r,=r,=r,=r,l,r"
// CHECK-NOT:     scf.if
// CHECK:         llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $5, 0; @p st.global.v4.b32 [$0], {$1, $2, $3, $4}; }", "l,r,r,r,r,r"
// CHECK-NOT:     scf.if
// CHECK:         gpu.return
func.func @known(%x: !tile.ptr<f32> {tile.divisibility = 16 : i64}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i64},
                 %n: i32 {tile.divisibility = 16 : i64}) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %pid = tile.program_id 0
  %start = arith.muli %pid, %n : i32
  %s = tile.splat %start : i32 -> tensor<512xi32, #l>
  %r = tile.arange 0 to 512 : tensor<512xi32, #l>
  %o = arith.addi %s, %r : tensor<512xi32, #l>
  %nn = tile.splat %n : i32 -> tensor<512xi32, #l>
  %m = arith.cmpi slt, %r, %nn : tensor<512xi32, #l>
  %v = tile.load %x[%o] mask %m : !tile.ptr<f32>[tensor<512xi32, #l>], tensor<512xi1, #l> -> tensor<512xf32, #l>
  tile.store %v, %out[%o] mask %m : tensor<512xf32, #l>, !tile.ptr<f32>[tensor<512xi32, #l>], tensor<512xi1, #l>
  return
}

// -----

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// The same kernel without the facts: n may be odd, so each group's address is checked.
// CHECK-LABEL: gpu.func @unknown
// CHECK:         llvm.ptrtoint
// CHECK:         llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:         llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK:         llvm.ptrtoint
// CHECK:         llvm.store {{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
func.func @unknown(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %pid = tile.program_id 0
  %start = arith.muli %pid, %n : i32
  %s = tile.splat %start : i32 -> tensor<512xi32, #l>
  %r = tile.arange 0 to 512 : tensor<512xi32, #l>
  %o = arith.addi %s, %r : tensor<512xi32, #l>
  %nn = tile.splat %n : i32 -> tensor<512xi32, #l>
  %m = arith.cmpi slt, %r, %nn : tensor<512xi32, #l>
  %v = tile.load %x[%o] mask %m : !tile.ptr<f32>[tensor<512xi32, #l>], tensor<512xi1, #l> -> tensor<512xf32, #l>
  tile.store %v, %out[%o] mask %m : tensor<512xf32, #l>, !tile.ptr<f32>[tensor<512xi32, #l>], tensor<512xi1, #l>
  return
}

// -----

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// Only the pointer is known aligned; n is not known divisible: still checked.
// CHECK-LABEL: gpu.func @half_known
// CHECK:         llvm.ptrtoint
func.func @half_known(%x: !tile.ptr<f32> {tile.divisibility = 16 : i64}, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %pid = tile.program_id 0
  %start = arith.muli %pid, %n : i32
  %s = tile.splat %start : i32 -> tensor<512xi32, #l>
  %r = tile.arange 0 to 512 : tensor<512xi32, #l>
  %o = arith.addi %s, %r : tensor<512xi32, #l>
  %v = tile.load %x[%o] : !tile.ptr<f32>[tensor<512xi32, #l>] -> tensor<512xf32, #l>
  tile.store %v, %x[%o] : tensor<512xf32, #l>, !tile.ptr<f32>[tensor<512xi32, #l>]
  return
}

// -----

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// Offsets (r >> 3) * 32 + (r & 7) (the shape of a preshuffled weight's index): r & 7 steps
// by one through runs of 8 that start at multiples of 8, r >> 3 is constant over them, so
// every 4-element group is one aligned 16-byte access, with no run-time check.
// CHECK-LABEL: gpu.func @shifted
// CHECK-NOT:     scf.if
// CHECK:         llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT:     scf.if
// CHECK:         gpu.return
func.func @shifted(%x: !tile.ptr<f32> {tile.divisibility = 16 : i64}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i64}) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #l>
  %c3 = arith.constant dense<3> : tensor<512xi32, #l>
  %c7 = arith.constant dense<7> : tensor<512xi32, #l>
  %c32 = arith.constant dense<32> : tensor<512xi32, #l>
  %q = arith.shrsi %r, %c3 : tensor<512xi32, #l>
  %base = arith.muli %q, %c32 : tensor<512xi32, #l>
  %low = arith.andi %r, %c7 : tensor<512xi32, #l>
  %o = arith.addi %base, %low : tensor<512xi32, #l>
  %v = tile.load %x[%o] : !tile.ptr<f32>[tensor<512xi32, #l>] -> tensor<512xf32, #l>
  tile.store %v, %out[%r] : tensor<512xf32, #l>, !tile.ptr<f32>[tensor<512xi32, #l>]
  return
}

// -----

#l = #tile.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>

// r & 6 is not a low-bits mask: its elements do not step by one, so the load is element by
// element.
// CHECK-LABEL: gpu.func @masked
// CHECK-NOT:     vector<4xf32>
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT:     llvm.load
// CHECK:         llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
func.func @masked(%x: !tile.ptr<f32> {tile.divisibility = 16 : i64}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i64}) attributes {tile.kernel, tile.num_warps = 4 : i32, tile.warp_size = 32 : i32} {
  %r = tile.arange 0 to 512 : tensor<512xi32, #l>
  %c6 = arith.constant dense<6> : tensor<512xi32, #l>
  %o = arith.andi %r, %c6 : tensor<512xi32, #l>
  %v = tile.load %x[%o] : !tile.ptr<f32>[tensor<512xi32, #l>] -> tensor<512xf32, #l>
  tile.store %v, %out[%r] : tensor<512xf32, #l>, !tile.ptr<f32>[tensor<512xi32, #l>]
  return
}
