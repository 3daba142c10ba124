// convert-tile-to-host: kernels get six trailing i32 arguments and a @k__grid driver; every
// tile op becomes loops over tensor elements; pointers become !llvm.ptr; layouts, barriers and
// asynchrony disappear.
// RUN: %wavetile-opt %s -split-input-file -convert-tile-to-host | FileCheck %s

// Program ids and grid sizes are the six trailing arguments (x, y, z ids, then x, y, z sizes);
// the kernel attributes are dropped.
// CHECK-LABEL: func.func @program(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i32,
// CHECK-SAME:    %[[PX:[^:]*]]: i32, %[[PY:[^:]*]]: i32, %[[PZ:[^:]*]]: i32, %[[GX:[^:]*]]: i32, %[[GY:[^:]*]]: i32, %[[GZ:[^:]*]]: i32) {
// CHECK-NOT:     tile.
// CHECK:         %[[S1:.*]] = arith.addi %[[PX]], %[[PY]] : i32
// CHECK:         %[[S2:.*]] = arith.addi %[[S1]], %[[PZ]] : i32
// CHECK:         %[[S3:.*]] = arith.addi %[[S2]], %[[GX]] : i32
// CHECK:         %[[S4:.*]] = arith.addi %[[S3]], %[[GY]] : i32
// CHECK:         %[[S5:.*]] = arith.addi %[[S4]], %[[GZ]] : i32
// CHECK:         %[[S6:.*]] = arith.addi %[[S5]], %[[N]] : i32
// CHECK:         tensor.insert %[[S6]] into
// CHECK:         llvm.store
// CHECK:         return
// The driver runs every program, z outermost, and passes (args, x, y, z, gx, gy, gz).
// CHECK-LABEL: func.func @program__grid(
// CHECK-SAME:    %[[DP:[^:]*]]: !llvm.ptr, %[[DN:[^:]*]]: i32, %[[DGX:[^:]*]]: i32, %[[DGY:[^:]*]]: i32, %[[DGZ:[^:]*]]: i32) {
// CHECK-DAG:     %[[UZ:.*]] = arith.index_castui %[[DGZ]] : i32 to index
// CHECK-DAG:     %[[UY:.*]] = arith.index_castui %[[DGY]] : i32 to index
// CHECK-DAG:     %[[UX:.*]] = arith.index_castui %[[DGX]] : i32 to index
// CHECK:         scf.for %[[Z:[a-z0-9_]+]] = %{{.*}} to %[[UZ]] step
// CHECK-NEXT:      scf.for %[[Y:[a-z0-9_]+]] = %{{.*}} to %[[UY]] step
// CHECK-NEXT:        scf.for %[[X:[a-z0-9_]+]] = %{{.*}} to %[[UX]] step
// CHECK-NEXT:          %[[IX:.*]] = arith.index_castui %[[X]] : index to i32
// CHECK-NEXT:          %[[IY:.*]] = arith.index_castui %[[Y]] : index to i32
// CHECK-NEXT:          %[[IZ:.*]] = arith.index_castui %[[Z]] : index to i32
// CHECK-NEXT:          func.call @program(%[[DP]], %[[DN]], %[[IX]], %[[IY]], %[[IZ]], %[[DGX]], %[[DGY]], %[[DGZ]])
// CHECK:         return
module attributes {tile.warp_size = 64 : i32} {
  func.func @program(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel, tile.num_warps = 4 : i32} {
    %x = tile.program_id 0
    %y = tile.program_id 1
    %z = tile.program_id 2
    %gx = tile.num_programs 0
    %gy = tile.num_programs 1
    %gz = tile.num_programs 2
    %0 = arith.addi %x, %y : i32
    %1 = arith.addi %0, %z : i32
    %2 = arith.addi %1, %gx : i32
    %3 = arith.addi %2, %gy : i32
    %4 = arith.addi %3, %gz : i32
    %5 = arith.addi %4, %n : i32
    %o = tile.arange 0 to 1 : tensor<1xi32>
    %v = tile.splat %5 : i32 -> tensor<1xi32>
    tile.store %v, %p[%o] : tensor<1xi32>, !tile.ptr<i32>[tensor<1xi32>]
    return
  }
}
// The module's tile.warp_size goes too.
// CHECK-NOT:   tile.warp_size

// -----

// A masked load is an scf.if per element: the true branch loads through llvm.getelementptr,
// the false branch yields `other` (or 0). Without a mask there is no scf.if. (The branches may
// carry floats as integer bits; the checks accept either.)
// CHECK-LABEL: func.func @load(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[O:[^:]*]]: tensor<16xi32>, %[[M:[^:]*]]: tensor<16xi1>, %[[OTHER:[^:]*]]: f32
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<16xf32>
// CHECK:         scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[T:[a-z0-9_]+]] = %[[E1]]) -> (tensor<16xf32>) {
// CHECK:           %[[MI:.*]] = tensor.extract %[[M]][%[[I]]] : tensor<16xi1>
// CHECK:           scf.if %[[MI]] -> ({{f32|i32}}) {
// CHECK-NEXT:        %[[OI:.*]] = tensor.extract %[[O]][%[[I]]] : tensor<16xi32>
// CHECK-NEXT:        %[[ADDR:.*]] = llvm.getelementptr %[[P]][%[[OI]]] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// CHECK-NEXT:        %[[L:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> f32
// CHECK:           } else {
// CHECK-NEXT:        {{.*}} %[[OTHER]] : f32
// CHECK:           }
// CHECK:           tensor.insert %{{.*}} into %[[T]][%[[I]]] : tensor<16xf32>
// Unmasked: a plain load of each element.
// CHECK:         scf.for %[[J:[a-z0-9_]+]] = {{.*}} -> (tensor<16xf32>) {
// CHECK-NOT:       scf.if
// CHECK:           %[[OJ:.*]] = tensor.extract %[[O]][%[[J]]] : tensor<16xi32>
// CHECK:           llvm.getelementptr %[[P]][%[[OJ]]] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// CHECK:           llvm.load
func.func @load(%p: !tile.ptr<f32>, %o: tensor<16xi32>, %m: tensor<16xi1>, %other: f32) -> (tensor<16xf32>, tensor<16xf32>) {
  %0 = tile.load %p[%o] mask %m other %other : !tile.ptr<f32>[tensor<16xi32>], tensor<16xi1> other f32 -> tensor<16xf32>
  %1 = tile.load %p[%o] : !tile.ptr<f32>[tensor<16xi32>] -> tensor<16xf32>
  return %0, %1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A masked store writes under an scf.if without else; formats LLVM lacks are stored as integers.
// CHECK-LABEL: func.func @store(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[O:[^:]*]]: tensor<2x4xi64>, %[[M:[^:]*]]: tensor<2x4xi1>, %[[V:[^:]*]]: tensor<2x4xf8E4M3FN>
// CHECK:         scf.for %[[I:[a-z0-9_]+]] =
// CHECK-NEXT:      scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT:        %[[MIJ:.*]] = tensor.extract %[[M]][%[[I]], %[[J]]] : tensor<2x4xi1>
// CHECK-NEXT:        scf.if %[[MIJ]] {
// CHECK-NEXT:          %[[OIJ:.*]] = tensor.extract %[[O]][%[[I]], %[[J]]] : tensor<2x4xi64>
// CHECK-NEXT:          %[[ADDR:.*]] = llvm.getelementptr %[[P]][%[[OIJ]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:          %[[VIJ:.*]] = tensor.extract %[[V]][%[[I]], %[[J]]] : tensor<2x4xf8E4M3FN>
// CHECK-NEXT:          %[[BITS:.*]] = arith.bitcast %[[VIJ]] : f8E4M3FN to i8
// CHECK-NEXT:          llvm.store %[[BITS]], %[[ADDR]] : i8, !llvm.ptr
// CHECK-NEXT:        }
// CHECK-NOT:         else
func.func @store(%p: !tile.ptr<f8E4M3FN>, %o: tensor<2x4xi64>, %m: tensor<2x4xi1>, %v: tensor<2x4xf8E4M3FN>) {
  tile.store %v, %p[%o] mask %m : tensor<2x4xf8E4M3FN>, !tile.ptr<f8E4M3FN>[tensor<2x4xi64>], tensor<2x4xi1>
  return
}

// -----

// A buffer view is {ptr, i32 count}; accesses are in bounds when offset < count as unsigned
// numbers (`ult`), anded with the mask; out-of-bounds loads read 0, stores are dropped.
// CHECK-LABEL: func.func @buffer(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i32, %[[O:[^:]*]]: tensor<8xi32>, %[[M:[^:]*]]: tensor<8xi1>
// CHECK:         %[[U:.*]] = llvm.mlir.poison : !llvm.struct<(ptr, i32)>
// CHECK:         %[[B0:.*]] = llvm.insertvalue %[[P]], %[[U]][0] : !llvm.struct<(ptr, i32)>
// CHECK:         %[[B:.*]] = llvm.insertvalue %[[N]], %[[B0]][1] : !llvm.struct<(ptr, i32)>
// CHECK:         scf.for %[[I:[a-z0-9_]+]] =
// CHECK:           %[[OI:.*]] = tensor.extract %[[O]][%[[I]]] : tensor<8xi32>
// CHECK:           %[[MI:.*]] = tensor.extract %[[M]][%[[I]]] : tensor<8xi1>
// CHECK:           %[[COUNT:.*]] = llvm.extractvalue %[[B]][1] : !llvm.struct<(ptr, i32)>
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[OI]], %[[COUNT]] : i32
// CHECK:           %[[G:.*]] = arith.andi %[[IN]], %[[MI]] : i1
// CHECK:           scf.if %[[G]] -> ({{bf16|i16}}) {
// CHECK:             %[[BASE:.*]] = llvm.extractvalue %[[B]][0] : !llvm.struct<(ptr, i32)>
// CHECK:             %[[WIDE:.*]] = arith.extui %[[OI]] : i32 to i64
// CHECK:             %[[ADDR:.*]] = llvm.getelementptr %[[BASE]][%[[WIDE]]] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK:             llvm.load %[[ADDR]] : !llvm.ptr -> bf16
// CHECK:           } else {
// CHECK:             arith.constant 0.000000e+00 : bf16
// The unmasked store is guarded by the bound check alone.
// CHECK:         scf.for %[[J:[a-z0-9_]+]] =
// CHECK:           %[[OJ:.*]] = tensor.extract %[[O]][%[[J]]] : tensor<8xi32>
// CHECK:           %[[COUNT2:.*]] = llvm.extractvalue %[[B]][1] : !llvm.struct<(ptr, i32)>
// CHECK:           %[[IN2:.*]] = arith.cmpi ult, %[[OJ]], %[[COUNT2]] : i32
// CHECK-NEXT:      scf.if %[[IN2]] {
// CHECK:             llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr
func.func @buffer(%p: !tile.ptr<bf16>, %n: i32, %o: tensor<8xi32>, %m: tensor<8xi1>) {
  %b = tile.make_buffer %p, %n : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %v = tile.buffer_load %b[%o] mask %m : !tile.buffer<bf16>[tensor<8xi32>], tensor<8xi1> -> tensor<8xbf16>
  tile.buffer_store %v, %b[%o] : tensor<8xbf16>, !tile.buffer<bf16>[tensor<8xi32>]
  return
}

// -----

// A dot is a K loop per result element, widening narrow floats with arith.extf (i8 with
// arith.extsi) and accumulating from the acc element.
// CHECK-LABEL: func.func @dot(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<2x8xbf16>, %[[B:[^:]*]]: tensor<8x4xbf16>, %[[C:[^:]*]]: tensor<2x4xf32>
// CHECK:         scf.for %[[I:[a-z0-9_]+]] = {{.*}} -> (tensor<2x4xf32>) {
// CHECK:           scf.for %[[J:[a-z0-9_]+]] = {{.*}} -> (tensor<2x4xf32>) {
// CHECK:             %[[INIT:.*]] = tensor.extract %[[C]][%[[I]], %[[J]]] : tensor<2x4xf32>
// CHECK:             %[[K8:.*]] = arith.constant 8 : index
// CHECK:             %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %[[K8]] step %{{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CHECK:               %[[AIK:.*]] = tensor.extract %[[A]][%[[I]], %[[K]]] : tensor<2x8xbf16>
// CHECK:               %[[X:.*]] = arith.extf %[[AIK]] : bf16 to f32
// CHECK:               %[[BKJ:.*]] = tensor.extract %[[B]][%[[K]], %[[J]]] : tensor<8x4xbf16>
// CHECK:               %[[Y:.*]] = arith.extf %[[BKJ]] : bf16 to f32
// CHECK:               %[[XY:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK:               %[[NEXT:.*]] = arith.addf %[[ACC]], %[[XY]] : f32
// CHECK:               scf.yield %[[NEXT]] : f32
// CHECK:             tensor.insert %[[SUM]] into
// CHECK-LABEL: func.func @dot_i8(
// CHECK:           scf.for {{.*}} -> (i32) {
// CHECK:             arith.extsi %{{.*}} : i8 to i32
// CHECK:             arith.extsi %{{.*}} : i8 to i32
// CHECK:             arith.muli
// CHECK:             arith.addi
func.func @dot(%a: tensor<2x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = tile.dot %a, %b, %c {atom = "gfx942.mfma_f32_32x32x8_bf16"} : tensor<2x8xbf16>, tensor<8x4xbf16>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @dot_i8(%a: tensor<2x8xi8>, %b: tensor<8x4xi8>, %c: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %0 = tile.dot %a, %b, %c : tensor<2x8xi8>, tensor<8x4xi8>, tensor<2x4xi32> -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// Reductions fold elements 1..n-1 of the axis into element 0; a custom combiner is inlined.
// A scan reads its own partial result at index i-1.
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME:    %[[V:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8xi32>) -> (tensor<4xf32>, i32, i32, tensor<8xi32>)
// CHECK:         scf.for %[[R:[a-z0-9_]+]] = {{.*}} -> (tensor<4xf32>) {
// CHECK:           %[[FIRST:.*]] = tensor.extract %[[V]][%[[R]], %{{.*}}] : tensor<4x8xf32>
// CHECK:           %[[ONE:.*]] = arith.constant 1 : index
// CHECK:           %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK:           %[[LB:.*]] = arith.constant 1 : index
// CHECK:           scf.for %[[C:[a-z0-9_]+]] = %[[LB]] to %[[EIGHT]] step %[[ONE]] iter_args(%[[ACC:[a-z0-9_]+]] = %[[FIRST]]) -> (f32) {
// CHECK:             %[[E:.*]] = tensor.extract %[[V]][%[[R]], %[[C]]] : tensor<4x8xf32>
// CHECK:             %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[E]] : f32
// CHECK:             scf.yield %[[MAX]] : f32
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} -> (i32) {
// CHECK:           arith.addi
// CHECK:         %[[XOR:.*]] = scf.for {{.*}} iter_args(%[[XACC:[a-z0-9_]+]] = %{{.*}}) -> (i32) {
// CHECK:           %[[XE:.*]] = tensor.extract %[[W]]
// CHECK:           %[[X:.*]] = arith.xori %[[XACC]], %[[XE]] : i32
// CHECK:           scf.yield %[[X]] : i32
// CHECK:         %[[SCAN:.*]] = scf.for %[[S:[a-z0-9_]+]] = {{.*}} iter_args(%[[PART:[a-z0-9_]+]] = %{{.*}}) -> (tensor<8xi32>) {
// CHECK:           %[[CUR:.*]] = tensor.extract %[[W]][%[[S]]] : tensor<8xi32>
// CHECK:           %[[ISFIRST:.*]] = arith.cmpi eq, %[[S]], %{{.*}} : index
// CHECK:           scf.if %[[ISFIRST]] -> (i32) {
// CHECK:             scf.yield %[[CUR]] : i32
// CHECK:           } else {
// CHECK:             %[[PREV:.*]] = arith.subi %[[S]], %{{.*}} : index
// CHECK:             %[[P:.*]] = tensor.extract %[[PART]][%[[PREV]]] : tensor<8xi32>
// CHECK:             arith.minsi %[[P]], %[[CUR]] : i32
// CHECK:         return %{{.*}}, %[[SUM]], %[[XOR]], %[[SCAN]]
#blk = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [1, 1], order = [1, 0]>
func.func @reduce(%v: tensor<4x8xf32, #blk>, %w: tensor<8xi32>) -> (tensor<4xf32, #tile.slice<dim = 1, parent = #blk>>, i32, i32, tensor<8xi32>) {
  %0 = tile.reduce max %v axis = 1 : tensor<4x8xf32, #blk> -> tensor<4xf32, #tile.slice<dim = 1, parent = #blk>>
  %1 = tile.reduce sum %w axis = 0 : tensor<8xi32> -> i32
  %2 = tile.reduce custom %w axis = 0 : tensor<8xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %x = arith.xori %a, %b : i32
    tile.yield %x : i32
  }
  %3 = tile.scan min %w axis = 0 : tensor<8xi32> -> tensor<8xi32>
  return %0, %1, %2, %3 : tensor<4xf32, #tile.slice<dim = 1, parent = #blk>>, i32, i32, tensor<8xi32>
}

// -----

// Layouts do not change values: they are stripped from every type, convert_layout vanishes and
// tensor constants lose their encoding. Elementwise arith on tiles becomes loops over scalars.
// CHECK-LABEL: func.func @layouts(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<64xf32>) -> tensor<64xf32>
// CHECK-NOT:     #tile
// CHECK-NOT:     tile.convert_layout
// CHECK:         %[[CST:.*]] = arith.constant dense<2.000000e+00> : tensor<64xf32>
// CHECK:         scf.for %[[I:[a-z0-9_]+]] = {{.*}} -> (tensor<64xf32>) {
// CHECK:           %[[XI:.*]] = tensor.extract %[[X]][%[[I]]] : tensor<64xf32>
// CHECK:           %[[CI:.*]] = tensor.extract %[[CST]][%[[I]]] : tensor<64xf32>
// CHECK:           arith.mulf %[[XI]], %[[CI]] fastmath<contract> : f32
// CHECK-NOT:     #tile
#a = #tile.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [1], order = [0]>
#b = #tile.blocked<sizePerThread = [1], threadsPerWarp = [64], warpsPerBlock = [1], order = [0]>
func.func @layouts(%x: tensor<64xf32, #a>) -> tensor<64xf32, #b> {
  %c = arith.constant dense<2.0> : tensor<64xf32, #a>
  %0 = arith.mulf %x, %c fastmath<contract> : tensor<64xf32, #a>
  %1 = tile.convert_layout %0 : tensor<64xf32, #a> -> tensor<64xf32, #b>
  return %1 : tensor<64xf32, #b>
}

// -----

// Shared memory is a memref: shared_alloc allocates, shared_slice views one entry, loads and
// stores are memref.load/store. An async copy completes at once (masked-off elements become 0),
// its token is `true`; async_wait and barrier vanish.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME:    %[[P:[^:]*]]: !llvm.ptr, %[[O:[^:]*]]: tensor<4x8xi32>, %[[M:[^:]*]]: tensor<4x8xi1>, %[[I:[^:]*]]: i32
// CHECK:         %[[ALLOC:.*]] = memref.alloc() : memref<2x4x8xf32>
// CHECK:         %[[BUF:.*]] = memref.cast %[[ALLOC]] : memref<2x4x8xf32> to memref<2x4x8xf32, strided<[32, 8, 1], offset: ?>>
// CHECK:         %[[ENTRY:.*]] = memref.{{subview|reinterpret_cast}} %{{.*}} to memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK:         scf.for %[[R:[a-z0-9_]+]] =
// CHECK:           scf.for %[[C:[a-z0-9_]+]] =
// CHECK:             %[[MRC:.*]] = tensor.extract %[[M]][%[[R]], %[[C]]] : tensor<4x8xi1>
// CHECK:             %[[V:.*]] = scf.if %[[MRC]]
// CHECK:               llvm.getelementptr %[[P]]
// CHECK:               llvm.load
// CHECK:             } else {
// CHECK:               arith.constant 0
// CHECK:             memref.store %{{.*}}, %[[ENTRY]][%[[R]], %[[C]]] : memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK:         arith.constant true
// CHECK-NOT:     tile.async_wait
// CHECK-NOT:     tile.barrier
// CHECK:         memref.load %[[ENTRY]][%{{.*}}, %{{.*}}] : memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK:         memref.store %{{.*}}, %[[ENTRY]][%{{.*}}, %{{.*}}] : memref<4x8xf32, strided<[8, 1], offset: ?>>
func.func @shared(%p: !tile.ptr<f32>, %o: tensor<4x8xi32>, %m: tensor<4x8xi1>, %i: i32) -> tensor<4x8xf32> {
  %s = tile.shared_alloc : !tile.shared<2x4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [2, 1, 0], padding = 0>>
  %e = tile.shared_slice %s[%i] : !tile.shared<2x4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [2, 1, 0], padding = 0>> -> !tile.shared<4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [1, 0], padding = 0>>
  %t = tile.async_copy %p[%o], %e mask %m : !tile.ptr<f32>[tensor<4x8xi32>], !tile.shared<4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [1, 0], padding = 0>>, tensor<4x8xi1>
  tile.async_wait %t pending = 0
  tile.barrier
  %v = tile.shared_load %e : !tile.shared<4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [1, 0], padding = 0>> -> tensor<4x8xf32>
  tile.shared_store %v, %e : tensor<4x8xf32>, !tile.shared<4x8xf32, #tile.shared_layout<vec = 4, perPhase = 1, maxPhase = 2, order = [1, 0], padding = 0>>
  return %v : tensor<4x8xf32>
}

// -----

// Atomic adds are llvm.atomicrmw (fadd for f32), monotonic. Fences go: programs run one after
// another on one thread.
// CHECK:         llvm.atomicrmw fadd %{{.*}}, %{{.*}} monotonic : !llvm.ptr, f32
// CHECK-LABEL: func.func @atomic(
// CHECK-NOT:     tile.atomic_add
// CHECK-NOT:     fence
// CHECK:         scf.for
// CHECK:           llvm.getelementptr
func.func @atomic(%p: !tile.ptr<f32>, %o: tensor<4xi32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  tile.fence release
  %0 = tile.atomic_add %v, %p[%o] : tensor<4xf32>, !tile.ptr<f32>[tensor<4xi32>] -> tensor<4xf32>
  tile.fence acquire
  return %0 : tensor<4xf32>
}

// -----

// fp_convert is expanded like tile-expand-fp-convert does, element by element; pack_fp4 ORs two
// nibbles, the high one shifted by 4.
// CHECK-LABEL: func.func @formats(
// CHECK-NOT:     tile.
// CHECK:         math.roundeven %{{.*}} : f32
// CHECK:         arith.trunci %{{.*}} : i32 to i8
// CHECK:         arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK:         arith.bitcast %{{.*}} : f4E2M1FN to i4
// CHECK:         arith.extui %{{.*}} : i4 to i8
// CHECK:         arith.shli %{{.*}}, %c4_i8 : i8
// CHECK:         arith.ori
func.func @formats(%x: tensor<8xf32>, %f: tensor<8xf4E2M1FN>) -> (tensor<8xf8E4M3FN>, tensor<4xi8>) {
  %0 = tile.fp_convert %x : tensor<8xf32> -> tensor<8xf8E4M3FN>
  %1 = tile.pack_fp4 %f : tensor<8xf4E2M1FN> -> tensor<4xi8>
  return %0, %1 : tensor<8xf8E4M3FN>, tensor<4xi8>
}

// -----

// Functions without tile.kernel lower too (calls included) but get no program arguments and no
// grid driver.
// CHECK-LABEL: func.func @helper(
// CHECK-SAME:    %{{.*}}: !llvm.ptr) -> tensor<4xf32> {
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:    %[[Q:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32) {
// CHECK:         call @helper(%[[Q]]) : (!llvm.ptr) -> tensor<4xf32>
// CHECK-NOT:     func.func @helper__grid
// CHECK:         func.func @caller__grid(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32)
func.func @helper(%p: !tile.ptr<f32>) -> tensor<4xf32> {
  %o = tile.arange 0 to 4 : tensor<4xi32>
  %x = tile.load %p[%o] : !tile.ptr<f32>[tensor<4xi32>] -> tensor<4xf32>
  return %x : tensor<4xf32>
}
func.func @caller(%q: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = func.call @helper(%q) : (!tile.ptr<f32>) -> tensor<4xf32>
  %o = tile.arange 0 to 4 : tensor<4xi32>
  tile.store %x, %q[%o] : tensor<4xf32>, !tile.ptr<f32>[tensor<4xi32>]
  return
}
