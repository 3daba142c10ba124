//===- Passes.td - tile dialect transforms -------------------*- tablegen -*-===//
#ifndef WAVETILE_TILE_TRANSFORMS_PASSES
#define WAVETILE_TILE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def TileExpandFpConvert : Pass<"tile-expand-fp-convert"> {
  let summary = "Expand tile.fp_convert into integer and f32 arithmetic";
  let description = [{
    Rewrites each `tile.fp_convert` into `arith`/`math` ops that compute the exact result
    (round-to-nearest-even or toward zero, saturation, NaN/Inf encodings) from the format's
    definition. Used where the target has no conversion instruction, and on the host.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def TileAssignLayouts : Pass<"tile-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every tile of every kernel a distributed layout for a GPU target";
  let description = [{
    Tiles that have no layout get one. Loads, stores, aranges and splats start from the
    coalesced default for their shape: the last dimension fastest with up to 128 bits per
    thread (sized by the narrowest element type the kernel loads at that shape, or stores
    where it loads none). Elementwise ops, loads, scans and dots propagate their operand's
    layout forward; a reduction yields the slice of its input's layout. Where an operand's
    layout differs from what its user needs, a `tile.convert_layout` is inserted. Tiles
    pinned by the author keep their layouts. GPU tiles need power-of-two dimensions.
  }];
  let options = [
    Option<"warpSize", "warp-size", "int64_t", /*default=*/"0",
           "Threads per warp of the target (64 on CDNA, 32 on NVIDIA)">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target whose matrix instructions (atom table) dots use; none keeps dots on blocked layouts">,
  ];
}

def TilePipelineLoops : Pass<"tile-pipeline-loops", "::mlir::ModuleOp"> {
  let summary = "Prefetch the global loads of K loops through S-deep rings of shared buffers";
  let description = [{
    For each kernel with `tile.num_stages = S` (S >= 2): in every innermost `scf.for` that
    has a dot, writes no memory and manages no shared memory itself, each `tile.load`
    (without `other`, or with a +0 one) or `tile.buffer_load` (the dot's operands, and what
    else the loop reads, such as block scales applied to its sum)
    whose address and mask depend only on the induction variable and values from outside
    the loop, becomes a `tile.shared_load` from slot `k % S` of a ring of S shared buffers.
    Iterations 0..S-2 are copied (`tile.async_copy`) before the loop; iteration k waits for
    its own copies (`async_wait pending = (S-2) * loads`), passes a barrier, and then issues
    the copies of iteration k+S-1 into the slot iteration k-1 read. Copies for iterations
    past the end are masked off; buffer loads copy from their view, keeping its range check.

    With `mode=registers` (for copies that complete when issued) the ring has two
    slots and the loads stay loads: iteration 0 is stored to slot 0 before the loop and
    iteration 1 loaded into registers the loop carries; at the end of iteration k those
    registers are stored to the slot iteration k-1 read, iteration k+2 is loaded, and one
    barrier publishes the slot, so each load is in flight during the next iteration's dot.
    `mode=by-depth` (CDNA, whose async copies are load-to-LDS instructions where layouts
    allow) uses registers for S = 2 and async copies for deeper rings.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"async-copies\"",
           "How prefetched tiles travel: async-copies, registers, by-depth, or off">,
  ];
}

def TileUseWarpgroupDots : Pass<"tile-use-warpgroup-dots", "::mlir::ModuleOp"> {
  let summary = "Dots of shared loads read their operands from shared memory (sm_90a wgmma)";
  let description = [{
    For targets whose matrix instructions read A and B from shared memory through
    descriptors. In each kernel with a multiple of 4 warps, a `tile.dot` of a `tile.shared_load`
    (A, M x K) and the `[1, 0]` transpose of another (B stored N x K), each read only by the
    dot and without a pinned atom or layout, becomes a `tile.shared_dot` of the two buffers
    when wgmma computes it: bf16 x bf16, f16 x f16 or fp8 (e4m3/e5m2) into f32, M a multiple
    of 64 per warpgroup, N of 64, and K rows of 32, 64 or 128 bytes (one swizzle atom). Their
    buffers, when every read of them is such an operand read, take the XOR swizzle of
    that row width (the descriptors' 32/64/128-byte swizzle modes). Run before
    `tile-assign-layouts`, which gives the accumulators the wgmma layout.
  }];
}

def TileUseBufferViews : Pass<"tile-use-buffer-views", "::mlir::func::FuncOp"> {
  let summary = "Access pointer arguments bounded to 2 GiB through buffer views";
  let description = [{
    In a kernel, every `tile.load` and `tile.store` with i32 offsets whose base is a pointer
    argument marked `tile.within_2gib` (the caller guarantees that every element the kernel
    touches through it lies in the 2 GiB that start at it) becomes a `tile.buffer_load` /
    `tile.buffer_store` through a view of those 2 GiB made once at the kernel's entry. A
    load's `other` is selected where the mask is clear. On CDNA the views are raw buffer
    resources, so masking and bounds checks cost no branches and offsets stay 32-bit.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif
