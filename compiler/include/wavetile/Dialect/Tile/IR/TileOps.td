//===- TileOps.td - operations of the tile dialect -----------*- tablegen -*-===//
#ifndef WAVETILE_TILE_OPS
#define WAVETILE_TILE_OPS

include "wavetile/Dialect/Tile/IR/TileBase.td"
include "wavetile/Dialect/Tile/IR/TileTypes.td"
include "wavetile/Dialect/Tile/IR/TileAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// Tiles are statically shaped tensors of integers or floats. Pointers are never tile
// elements: memory is addressed as a scalar base plus a tile of offsets.
def Tile_Tile : StaticShapeTensorOf<[AnySignlessInteger, AnyFloat]>;
def Tile_IntTile : StaticShapeTensorOf<[I32, I64]>;
def Tile_I32Tile : StaticShapeTensorOf<[I32]>;
def Tile_MaskTile : StaticShapeTensorOf<[I1]>;
def Tile_Axis : ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>;

//===----------------------------------------------------------------------===//
// Program instance queries.
//===----------------------------------------------------------------------===//

def Tile_ProgramIdOp : Tile_Op<"program_id", [Pure]> {
  let summary = "index of this program instance along a grid axis (0, 1 or 2)";
  let arguments = (ins Tile_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

def Tile_NumProgramsOp : Tile_Op<"num_programs", [Pure]> {
  let summary = "number of program instances along a grid axis";
  let arguments = (ins Tile_Axis:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
}

//===----------------------------------------------------------------------===//
// Tile construction and shape manipulation.
//===----------------------------------------------------------------------===//

def Tile_ArangeOp : Tile_Op<"arange", [Pure]> {
  let summary = "1-D tile [start, start+1, ..., end-1]";
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Tile_I32Tile:$result);
  let assemblyFormat = "$start `to` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure]> {
  let summary = "tile with every element equal to a scalar";
  let arguments = (ins AnyType:$value);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure]> {
  let summary = "repeat size-1 dimensions to a larger shape of the same rank";
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure]> {
  let summary = "insert a size-1 dimension at `axis`";
  let arguments = (ins Tile_Tile:$source, I32Attr:$axis);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source `axis` `=` $axis attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure]> {
  let summary = "reinterpret a tile's elements (row-major order) under another shape";
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_TransOp : Tile_Op<"trans", [Pure]> {
  let summary = "permute dimensions: result dim i is source dim order[i]";
  let arguments = (ins Tile_Tile:$source, DenseI32ArrayAttr:$order);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source $order attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure]> {
  let summary = "same values, another distributed layout";
  let description = [{
    Folds away when the layouts are equal; a chain of conversions folds into one; a
    conversion of a splat is the splat in the new layout (nothing to move).
  }];
  let arguments = (ins Tile_Tile:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizeMethod = 1;
}

//===----------------------------------------------------------------------===//
// Global memory.
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [AttrSizedOperandSegments,
    MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "gather from base + offsets (in elements); masked-off lanes take `other`";
  let description = [{
    Elements whose mask is false are not read; they take `other` (a scalar or a tile of the
    result type), or 0 when `other` is absent.
  }];
  let arguments = (ins Tile_PtrType:$base, Tile_IntTile:$offsets, Optional<Tile_MaskTile>:$mask,
                       Optional<AnyType>:$other);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` (`mask` $mask^)? (`other` $other^)? attr-dict `:` qualified(type($base))
    `[` type($offsets) `]` (`,` type($mask)^)? (`other` type($other)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "scatter a tile to base + offsets; masked-off elements are not written";
  let arguments = (ins Tile_PtrType:$base, Tile_IntTile:$offsets, Tile_Tile:$value,
                       Optional<Tile_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $base `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,`
    qualified(type($base)) `[` type($offsets) `]` (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_AtomicAddOp : Tile_Op<"atomic_add", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "atomically add a tile into base + offsets; returns the previous values";
  let arguments = (ins Tile_PtrType:$base, Tile_IntTile:$offsets, Tile_Tile:$value,
                       Optional<Tile_MaskTile>:$mask);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $value `,` $base `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,`
    qualified(type($base)) `[` type($offsets) `]` (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_MakeBufferOp : Tile_Op<"make_buffer", [Pure]> {
  let summary = "bounded view of `numElements` elements starting at `base`";
  let arguments = (ins Tile_PtrType:$base, I32:$numElements);
  let results = (outs Tile_BufferType:$result);
  let assemblyFormat = "$base `,` $numElements attr-dict `:` qualified(type($base)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_BufferLoadOp : Tile_Op<"buffer_load", [MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "load through a buffer view; offsets past the end (unsigned) read 0";
  let arguments = (ins Tile_BufferType:$buffer, Tile_I32Tile:$offsets, Optional<Tile_MaskTile>:$mask);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $buffer `[` $offsets `]` (`mask` $mask^)? attr-dict `:` qualified(type($buffer)) `[` type($offsets) `]`
    (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_BufferStoreOp : Tile_Op<"buffer_store", [MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "store through a buffer view; offsets past the end (unsigned) are dropped";
  let arguments = (ins Tile_BufferType:$buffer, Tile_I32Tile:$offsets, Tile_Tile:$value,
                       Optional<Tile_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $buffer `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($value) `,`
    qualified(type($buffer)) `[` type($offsets) `]` (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared memory.
//===----------------------------------------------------------------------===//

def Tile_SharedAllocOp : Tile_Op<"shared_alloc", [MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "allocate a shared-memory buffer for the lifetime of the program instance";
  let results = (outs Tile_SharedType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def Tile_SharedStoreOp : Tile_Op<"shared_store", [MemoryEffects<[MemWrite<DefaultResource>]>]> {
  let summary = "write a whole tile into a shared buffer of the same shape";
  let arguments = (ins Tile_Tile:$value, Tile_SharedType:$dest);
  let assemblyFormat = "$value `,` $dest attr-dict `:` type($value) `,` qualified(type($dest))";
  let hasVerifier = 1;
}

def Tile_SharedLoadOp : Tile_Op<"shared_load", [MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "read a whole shared buffer as a tile";
  let arguments = (ins Tile_SharedType:$source);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_SharedSliceOp : Tile_Op<"shared_slice", [Pure]> {
  let summary = "view of entry `index` along dimension 0 of a shared buffer (multi-buffering)";
  let description = [{
    The entry has the source's shape and shared layout less dimension 0. A layout whose
    swizzle or padding involves dimension 0 cannot be sliced.
  }];
  let arguments = (ins Tile_SharedType:$source, I32:$index);
  let results = (outs Tile_SharedType:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def Tile_AsyncCopyOp : Tile_Op<"async_copy", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "start copying base + offsets into a shared buffer; masked-off elements become 0";
  let description = [{
    `base` is a pointer or a buffer view. Through a view, elements whose offset is not below
    the view's element count (compared unsigned, as buffer loads do) also become 0, and the
    offsets must be i32.
  }];
  let arguments = (ins AnyTypeOf<[Tile_PtrType, Tile_BufferType]>:$base, Tile_IntTile:$offsets,
                       Tile_SharedType:$dest, Optional<Tile_MaskTile>:$mask);
  let results = (outs Tile_AsyncTokenType:$token);
  let assemblyFormat = [{
    $base `[` $offsets `]` `,` $dest (`mask` $mask^)? attr-dict `:` qualified(type($base)) `[` type($offsets) `]`
    `,` qualified(type($dest)) (`,` type($mask)^)?
  }];
  let hasVerifier = 1;
}

def Tile_AsyncWaitOp : Tile_Op<"async_wait", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "wait until at most `pending` of the given copies are still in flight";
  let arguments = (ins Variadic<Tile_AsyncTokenType>:$tokens, I32Attr:$pending);
  let assemblyFormat = "($tokens^)? `pending` `=` $pending attr-dict";
}

def Tile_BarrierOp : Tile_Op<"barrier", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "block-wide barrier; orders shared-memory accesses";
  let assemblyFormat = "attr-dict";
}

def Tile_FenceOp : Tile_Op<"fence", [
    MemoryEffects<[MemRead<DefaultResource>, MemWrite<DefaultResource>]>]> {
  let summary = "device-wide release or acquire fence on global memory";
  let description = [{
    A fence at device scope, as every program of the launch observes this thread's
    global-memory accesses. `release`: the accesses before it happen before any atomic
    after it (a writer's stores, a release fence, a barrier, then an atomic). `acquire`:
    the accesses after it happen after any atomic before it (a reader's atomic, an acquire
    fence, then its loads).
  }];
  let arguments = (ins Tile_FenceOrderingAttr:$ordering);
  let assemblyFormat = "$ordering attr-dict";
}

//===----------------------------------------------------------------------===//
// Matrix products.
//===----------------------------------------------------------------------===//

def Tile_DotOp : Tile_Op<"dot", [Pure]> {
  let summary = "acc + a * b for a: MxK, b: KxN, acc: MxN, exact products, wide accumulation";
  let description = [{
    Floating-point operands accumulate in f32, i8 operands in i32. `atom` pins the matrix
    instruction by its atom-table name; its operand types must match.
  }];
  let arguments = (ins Tile_Tile:$a, Tile_Tile:$b, Tile_Tile:$acc, OptionalAttr<StrAttr>:$atom);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScaledDotOp : Tile_Op<"scaled_dot", [Pure]> {
  let summary = "acc + (a * 2^(scaleA-127)) * (b * 2^(scaleB-127)) with MX block scales";
  let description = [{
    a is M x K and b is K x N in an MX element format (f8E4M3FN, f8E5M2, f6E2M3FN,
    f6E3M2FN, f4E2M1FN); aScale is M x K/32 and bScale is K/32 x N of f8E8M0FNU, one scale
    per 32 consecutive K elements. Accumulates in f32.
  }];
  let arguments = (ins Tile_Tile:$a, Tile_Tile:$aScale, Tile_Tile:$b, Tile_Tile:$bScale,
                       Tile_Tile:$acc, OptionalAttr<StrAttr>:$atom);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $a `scale` $aScale `,` $b `scale` $bScale `,` $acc attr-dict `:` type($a) `,` type($aScale) `,`
    type($b) `,` type($bScale) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_SharedDotOp : Tile_Op<"shared_dot", [MemoryEffects<[MemRead<DefaultResource>]>]> {
  let summary = "acc + a * transpose(b) for a: MxK and b: NxK read from shared memory";
  let description = [{
    The matrix instruction reads both multiplicands from shared memory itself (sm_90a
    `wgmma`), K-contiguous, in the buffers' swizzled layouts; `tile-use-warpgroup-dots`
    creates it from a dot of two shared loads. Operands are bf16, f16 (both the same) or
    e4m3/e5m2 in any pairing, accumulating in f32, or both i8, accumulating exactly in i32
    (wrapping). K rows are 32, 64 or 128 bytes, and both
    buffers carry `operandSharedLayout`'s swizzle for their shape, which is the descriptors'
    swizzle mode for that row width. The result is complete when the op returns, so the
    buffers may be overwritten after the next barrier.
  }];
  let extraClassDeclaration = [{
    /// Whether wgmma multiplies elements `a` x `b` in K rows of `k` elements.
    static bool takes(::mlir::Type a, ::mlir::Type b, int64_t k);
    /// The accumulator element for multiplicands `element`: i32 for i8, else f32.
    static ::mlir::Type accumulatorFor(::mlir::Type element);
  }];
  let arguments = (ins Tile_SharedType:$a, Tile_SharedType:$b, Tile_Tile:$acc);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` qualified(type($a)) `,` qualified(type($b)) `,` type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans.
//===----------------------------------------------------------------------===//

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ReduceOp", "ScanOp"]>]> {
  let summary = "result of a combiner region";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

class Tile_CombineOp<string mnemonic> : Tile_Op<mnemonic, [Pure]> {
  let arguments = (ins Tile_Tile:$source, I32Attr:$axis, Tile_CombineKindAttr:$kind);
  let regions = (region AnyRegion:$combiner);
  let hasVerifier = 1;
  let assemblyFormat = [{
    `` $kind $source `axis` `=` $axis attr-dict-with-keyword `:` type($source) `->` type($result) ($combiner^)?
  }];
}

def Tile_ReduceOp : Tile_CombineOp<"reduce"> {
  let summary = "reduce along `axis` with sum/max/min or the custom combiner region";
  let description = [{
    The result drops `axis`; reducing a 1-D tile gives a scalar. `max`/`min` propagate NaN.
    A `custom` combiner region takes two scalars and yields their combination; it must be
    associative and commutative (the order of combination is unspecified).
  }];
  let results = (outs AnyType:$result);
}

def Tile_ScanOp : Tile_CombineOp<"scan"> {
  let summary = "inclusive prefix scan along `axis` (in increasing index order)";
  let results = (outs Tile_Tile:$result);
}

//===----------------------------------------------------------------------===//
// Low-precision formats.
//===----------------------------------------------------------------------===//

def Tile_FpConvertOp : Tile_Op<"fp_convert", [Pure, SameOperandsAndResultShape]> {
  let summary = "float format conversion with explicit rounding and saturation";
  let description = [{
    Converts between f32/f16/bf16 and the 8/6/4-bit formats (f8E4M3FN, f8E5M2, f8E4M3FNUZ,
    f8E5M2FNUZ, f6E2M3FN, f6E3M2FN, f4E2M1FN, f8E8M0FNU) in either direction. Narrowing
    rounds as `rounding` says (`rtne` to nearest, ties to even; `rtz` toward zero). Values
    that round past the largest finite value become it with `saturate`, otherwise Inf where
    the format has it, else NaN; fp6/fp4 have neither and always saturate. Rounding toward
    zero never leaves the finite range: only an Inf input overflows. NaN gives the format's
    NaN (the largest finite value for fp6/fp4); fnuz formats have no -0 (it becomes +0).
    e8m0 encodes |x|: `rtz` floors to a power of two, `rtne` rounds to the nearer one
    (ties up). Works on scalars and tiles.
  }];
  let arguments = (ins AnyType:$source, DefaultValuedAttr<Tile_RoundingModeAttr,
                       "::wavetile::tile::RoundingMode::rtne">:$rounding, UnitAttr:$saturate);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_PackFp4Op : Tile_Op<"pack_fp4", [Pure]> {
  let summary = "pack pairs of f4E2M1FN along the last dimension into i8, low nibble first";
  let arguments = (ins StaticShapeTensorOf<[F4E2M1FN]>:$source);
  let results = (outs StaticShapeTensorOf<[I8]>:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_LookupNibblesOp : Tile_Op<"lookup_nibbles", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "both nibbles of each byte looked up in a 16-entry byte table";
  let description = [{
    Each i8 of `source` becomes an i16 whose low byte is `table[b & 15]` and whose high byte
    is `table[b >> 4]` (b the byte's unsigned value): codes packed two per byte (low nibble
    first, as MXFP4) decoded to bytes in their order, without unpacking them first. NVIDIA
    targets look four nibbles up at once with byte permutes (`prmt`).
  }];
  let arguments = (ins StaticShapeTensorOf<[I8]>:$source, DenseI8ArrayAttr:$table);
  let results = (outs StaticShapeTensorOf<[I16]>:$result);
  let assemblyFormat = "$source `table` $table attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_UnpackFp4Op : Tile_Op<"unpack_fp4", [Pure]> {
  let summary = "unpack i8 into two f4E2M1FN along the last dimension, low nibble first";
  let arguments = (ins StaticShapeTensorOf<[I8]>:$source);
  let results = (outs StaticShapeTensorOf<[F4E2M1FN]>:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

#endif
