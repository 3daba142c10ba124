//===- PipelineLoops.cpp - multi-buffered prefetch of K-loop operands ------===//
//
// In a loop whose dot operands are loaded from global memory, the loads of iteration k+S-1
// are issued as async copies into an S-deep ring of shared buffers while iteration k
// multiplies the tiles that arrived in its own slot. The copies' addresses and masks are
// recomputed from the induction variable, so only loads whose operands depend on nothing
// else in the loop qualify. Copies for iterations past the end are masked off entirely.
// Buffer loads copy from the same view, which keeps their range check.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace wavetile::tile {
#define GEN_PASS_DEF_TILEPIPELINELOOPS
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace wavetile::tile

using namespace mlir;
using namespace wavetile::tile;

namespace {

/// A global load the pipeline turns into async copies: where it reads, as async_copy
/// wants it (a pointer or buffer view, offsets, and the optional mask).
struct PrefetchedLoad {
  Operation *load;
  Value base, offsets, mask;
};

/// Whether `value` (used inside `loop`) is computed only from the induction variable and
/// values defined outside the loop, by side-effect-free ops without regions; collects the
/// ops to recompute for another iteration.
bool computableFromInductionVariable(scf::ForOp loop, Value value, llvm::SetVector<Operation *> &ops) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() != loop.getBody() || arg == loop.getInductionVar();
  Operation *def = value.getDefiningOp();
  if (!loop->isAncestor(def))
    return true;
  if (def->getBlock() != loop.getBody() || def->getNumRegions() || !isMemoryEffectFree(def))
    return false;
  for (Value operand : def->getOperands())
    if (!computableFromInductionVariable(loop, operand, ops))
      return false;
  ops.insert(def);
  return true;
}

/// Whether `value` reaches an operand of a dot through ops that only transform it.
bool feedsDot(Value value) {
  for (Operation *user : value.getUsers()) {
    if (isa<DotOp, ScaledDotOp>(user))
      return true;
    if (user->getNumResults() == 1 && isMemoryEffectFree(user) && !user->getNumRegions() &&
        feedsDot(user->getResult(0)))
      return true;
  }
  return false;
}

std::optional<PrefetchedLoad> asPrefetch(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op)) {
    if (load.getOther())
      return std::nullopt; // async copies fill masked-off elements with 0 only
    return PrefetchedLoad{op, load.getBase(), load.getOffsets(), load.getMask()};
  }
  if (auto load = dyn_cast<BufferLoadOp>(op))
    return PrefetchedLoad{op, load.getBuffer(), load.getOffsets(), load.getMask()};
  return std::nullopt;
}

class LoopPipeliner {
public:
  LoopPipeliner(scf::ForOp loop, int64_t stages) : loop(loop), stages(stages), b(loop) {}

  /// Returns whether the loop was pipelined.
  bool run() {
    if (!collect())
      return false;
    Location loc = loop.getLoc();
    b.setInsertionPoint(loop);
    for (const PrefetchedLoad &p : loads) {
      auto type = cast<RankedTensorType>(p.load->getResult(0).getType());
      SmallVector<int64_t> shape{stages};
      llvm::append_range(shape, type.getShape());
      rings.push_back(SharedAllocOp::create(b, loc, SharedType::get(shape, type.getElementType())));
    }
    // Prologue: iterations 0 .. S-2 into slots 0 .. S-2.
    for (int64_t i = 0; i + 1 < stages; ++i)
      issue(iterationValue(loop.getLowerBound(), i), constant(i));
    // Steady state: wait for this iteration's slot; once every thread is past the barrier
    // nobody reads the previous iteration's slot any more, so it takes iteration k+S-1.
    b.setInsertionPointToStart(loop.getBody());
    Value iteration = arith::DivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, loop.getInductionVar(), loop.getLowerBound()), loop.getStep());
    Value slot = arith::RemSIOp::create(b, loc, iteration, constant(stages));
    AsyncWaitOp::create(b, loc, ValueRange{}, int32_t((stages - 2) * int64_t(loads.size())));
    BarrierOp::create(b, loc);
    issue(iterationValue(loop.getInductionVar(), stages - 1),
          arith::RemSIOp::create(b, loc, arith::AddIOp::create(b, loc, iteration, constant(stages - 1)),
                                 constant(stages)));
    for (auto [p, ring] : llvm::zip(loads, rings)) {
      b.setInsertionPoint(p.load);
      Value entry = SharedSliceOp::create(b, loc, cast<SharedType>(ring.getType()).entryType(), ring, slot);
      Value tile = SharedLoadOp::create(b, loc, p.load->getResult(0).getType(), entry);
      p.load->getResult(0).replaceAllUsesWith(tile);
      p.load->erase();
    }
    // Copies for iterations past the end are masked off but may still be in flight.
    b.setInsertionPointAfter(loop);
    AsyncWaitOp::create(b, loc, ValueRange{}, 0);
    return true;
  }

private:
  bool collect() {
    // Prefetching moves loads ahead of the loop's other memory effects: only loops that
    // write no memory and manage no shared memory themselves qualify.
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (isa<StoreOp, BufferStoreOp, AtomicAddOp, SharedAllocOp, SharedStoreOp, SharedLoadOp, AsyncCopyOp,
              AsyncWaitOp, BarrierOp>(op) ||
          op.getNumRegions())
        return false;
      auto prefetch = asPrefetch(&op);
      if (!prefetch || !feedsDot(op.getResult(0)))
        continue;
      auto type = cast<RankedTensorType>(op.getResult(0).getType());
      if (type.getRank() < 1)
        continue;
      bool computable = true;
      llvm::SetVector<Operation *> ops;
      for (Value v : {prefetch->base, prefetch->offsets, prefetch->mask})
        computable = computable && (!v || computableFromInductionVariable(loop, v, ops));
      if (!computable)
        continue;
      loads.push_back(*prefetch);
      addressOps.insert(ops.begin(), ops.end());
    }
    return !loads.empty();
  }

  Value constant(int64_t v) {
    return arith::ConstantOp::create(b, loop.getLoc(), IntegerAttr::get(loop.getInductionVar().getType(), v));
  }

  /// from + n * step
  Value iterationValue(Value from, int64_t n) {
    Location loc = loop.getLoc();
    return arith::AddIOp::create(b, loc, from, arith::MulIOp::create(b, loc, constant(n), loop.getStep()));
  }

  /// Issues the copies of the iteration whose induction variable is `iv` into `slot`.
  void issue(Value iv, Value slot) {
    Location loc = loop.getLoc();
    IRMapping map;
    map.map(loop.getInductionVar(), iv);
    // Ops in program order, so each clone's operands are already mapped.
    for (Operation &op : loop.getBody()->without_terminator())
      if (addressOps.contains(&op))
        b.clone(op, map);
    Value inLoop = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, loop.getUpperBound());
    for (auto [p, ring] : llvm::zip(loads, rings)) {
      auto offsetsType = cast<RankedTensorType>(p.offsets.getType());
      auto maskType = RankedTensorType::get(offsetsType.getShape(), b.getI1Type());
      Value offsets = map.lookupOrDefault(p.offsets);
      Value mask = SplatOp::create(b, loc, maskType, inLoop);
      if (p.mask)
        mask = arith::AndIOp::create(b, loc, mask, map.lookupOrDefault(p.mask));
      Value entry = SharedSliceOp::create(b, loc, cast<SharedType>(ring.getType()).entryType(), ring, slot);
      AsyncCopyOp::create(b, loc, AsyncTokenType::get(b.getContext()), map.lookupOrDefault(p.base), offsets, entry,
                          mask);
    }
  }

  scf::ForOp loop;
  int64_t stages;
  OpBuilder b;
  SmallVector<PrefetchedLoad> loads;
  llvm::SetVector<Operation *> addressOps;
  SmallVector<Value> rings;
};

struct TilePipelineLoops : wavetile::tile::impl::TilePipelineLoopsBase<TilePipelineLoops> {
  using TilePipelineLoopsBase::TilePipelineLoopsBase;
  void runOnOperation() override {
    if (!enabled)
      return;
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      auto stages = kernel->getAttrOfType<IntegerAttr>(TileDialect::kNumStagesAttrName);
      if (!kernel->hasAttr(TileDialect::kKernelAttrName) || !stages || stages.getInt() < 2)
        continue;
      SmallVector<scf::ForOp> loops;
      kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        LoopPipeliner(loop, stages.getInt()).run();
    }
  }
};
} // namespace
