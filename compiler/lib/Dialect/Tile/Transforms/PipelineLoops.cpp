//===- PipelineLoops.cpp - multi-buffered prefetch of K-loop operands ------===//
//
// In a loop with a dot (a K loop), the global loads of iteration k+S-1 (the dot's operands,
// and anything else it reads, such as the scales of a block-scaled product) are issued as
// async copies into an S-deep ring of shared buffers while iteration k multiplies the tiles
// that arrived in its own slot. The copies' addresses and masks are recomputed from the
// induction variable, so only loads whose operands depend on nothing else in the loop qualify.
// Copies for iterations past the end are masked off entirely. Buffer loads copy from the same
// view, which keeps their range check.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
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
  Value base, offsets, mask, other;
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

std::optional<PrefetchedLoad> asPrefetch(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op)) {
    // Async copies fill masked-off elements with zero bits: +0 (what tensor loads fill
    // with) qualifies, -0 and other values do not.
    Value other = load.getOther();
    if (other && !matchPattern(other, m_Zero()) && !matchPattern(other, m_PosZeroFloat()))
      return std::nullopt;
    return PrefetchedLoad{op, load.getBase(), load.getOffsets(), load.getMask(), other};
  }
  if (auto load = dyn_cast<BufferLoadOp>(op))
    return PrefetchedLoad{op, load.getBuffer(), load.getOffsets(), load.getMask(), Value()};
  return std::nullopt;
}

/// How prefetched tiles travel: asynchronous copies straight into the shared ring (NVIDIA's
/// cp.async), or loads into registers that are stored to the ring one iteration later
/// (targets whose copies complete when issued: the load is in flight during the next
/// iteration's dot).
enum class PrefetchMode { AsyncCopies, Registers };

class LoopPipeliner {
public:
  LoopPipeliner(scf::ForOp loop, int64_t stages, PrefetchMode mode)
      : loop(loop), stages(mode == PrefetchMode::Registers ? 2 : stages), mode(mode), b(loop) {}

  /// Returns whether the loop was pipelined.
  bool run() {
    if (!collect())
      return false;
    b.setInsertionPoint(loop);
    for (const PrefetchedLoad &p : loads) {
      auto type = cast<RankedTensorType>(p.load->getResult(0).getType());
      SmallVector<int64_t> shape{stages};
      llvm::append_range(shape, type.getShape());
      rings.push_back(SharedAllocOp::create(b, loop.getLoc(), SharedType::get(shape, type.getElementType())));
    }
    if (mode == PrefetchMode::AsyncCopies)
      pipelineWithCopies();
    else
      pipelineThroughRegisters();
    return true;
  }

private:
  /// Iterations 0 .. S-2 are copied into slots 0 .. S-2 before the loop. Iteration k waits
  /// for its slot; once every thread is past the barrier nobody reads the previous
  /// iteration's slot any more, so it takes iteration k+S-1.
  void pipelineWithCopies() {
    Location loc = loop.getLoc();
    for (int64_t i = 0; i + 1 < stages; ++i)
      copy(iterationValue(loop.getLowerBound(), i), constant(i));
    b.setInsertionPointToStart(loop.getBody());
    Value iteration = iterationIndex();
    AsyncWaitOp::create(b, loc, ValueRange{}, int32_t((stages - 2) * int64_t(loads.size())));
    BarrierOp::create(b, loc);
    copy(iterationValue(loop.getInductionVar(), stages - 1), slotOf(iteration, stages - 1));
    readSlots(slotOf(iteration, 0));
    // Copies for iterations past the end are masked off but may still be in flight.
    b.setInsertionPointAfter(loop);
    AsyncWaitOp::create(b, loc, ValueRange{}, 0);
  }

  /// Iteration 0 is stored into slot 0 before the loop and iteration 1 loaded into registers
  /// that the loop carries. At the end of iteration k, the registers (iteration k+1) go to
  /// the slot iteration k-1 read, the loads of iteration k+2 are issued, and a barrier makes
  /// the slot visible; those loads are in flight during iteration k+1's dot.
  void pipelineThroughRegisters() {
    Location loc = loop.getLoc();
    store(load(loop.getLowerBound()), constant(0));
    SmallVector<Value> ahead = load(iterationValue(loop.getLowerBound(), 1));
    BarrierOp::create(b, loc);
    IRRewriter rewriter(b.getContext());
    FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
        rewriter, ahead, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> registers) {
          return SmallVector<Value>(registers.begin(), registers.end());
        });
    assert(succeeded(widened) && "scf.for can always carry more values");
    loop = cast<scf::ForOp>(widened->getOperation());
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    unsigned first = loop.getNumRegionIterArgs() - loads.size();
    b.setInsertionPoint(yield);
    store(SmallVector<Value>(loop.getRegionIterArgs().drop_front(first)), slotOf(iterationIndex(), 1));
    SmallVector<Value> next = load(iterationValue(loop.getInductionVar(), 2));
    BarrierOp::create(b, loc);
    for (auto [i, tile] : llvm::enumerate(next))
      yield->setOperand(first + i, tile);
    b.setInsertionPointToStart(loop.getBody());
    readSlots(slotOf(iterationIndex(), 0));
  }

  bool collect() {
    // Loads whose latency a K loop would wait on every iteration; others stay in registers.
    if (llvm::none_of(loop.getBody()->without_terminator(), [](Operation &op) { return isa<DotOp, ScaledDotOp>(op); }))
      return false;
    // Prefetching moves loads ahead of the loop's other memory effects: only loops that
    // write no memory and manage no shared memory themselves qualify.
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (isa<StoreOp, BufferStoreOp, AtomicAddOp, SharedAllocOp, SharedStoreOp, SharedLoadOp, AsyncCopyOp,
              AsyncWaitOp, BarrierOp>(op) ||
          op.getNumRegions())
        return false;
      auto prefetch = asPrefetch(&op);
      if (!prefetch)
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

  /// (iv - lb) / step of the current iteration.
  Value iterationIndex() {
    Location loc = loop.getLoc();
    return arith::DivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, loop.getInductionVar(), loop.getLowerBound()), loop.getStep());
  }

  /// The ring slot of the iteration `ahead` iterations after `iteration`.
  Value slotOf(Value iteration, int64_t ahead) {
    Location loc = loop.getLoc();
    Value target = ahead ? Value(arith::AddIOp::create(b, loc, iteration, constant(ahead))) : iteration;
    return arith::RemSIOp::create(b, loc, target, constant(stages));
  }

  Value entry(Value ring, Value slot) {
    return SharedSliceOp::create(b, loop.getLoc(), cast<SharedType>(ring.getType()).entryType(), ring, slot);
  }

  /// Recomputes the loads' address and mask ops for the iteration whose induction variable
  /// is `iv`; returns the mapping and sets `inLoop` to whether that iteration exists.
  IRMapping addressesAt(Value iv, Value &inLoop) {
    IRMapping map;
    map.map(loop.getInductionVar(), iv);
    // Ops in program order, so each clone's operands are already mapped.
    for (Operation &op : loop.getBody()->without_terminator())
      if (addressOps.contains(&op))
        b.clone(op, map);
    inLoop = arith::CmpIOp::create(b, loop.getLoc(), arith::CmpIPredicate::slt, iv, loop.getUpperBound());
    return map;
  }

  /// The load's mask at the mapped iteration, and-ed with whether that iteration exists, so
  /// iterations past the end touch no memory.
  Value maskAt(const PrefetchedLoad &p, const IRMapping &map, Value inLoop) {
    auto shape = cast<RankedTensorType>(p.offsets.getType()).getShape();
    Value mask = SplatOp::create(b, loop.getLoc(), RankedTensorType::get(shape, b.getI1Type()), inLoop);
    if (p.mask)
      mask = arith::AndIOp::create(b, loop.getLoc(), mask, map.lookupOrDefault(p.mask));
    return mask;
  }

  /// Issues the copies of the iteration whose induction variable is `iv` into `slot`.
  void copy(Value iv, Value slot) {
    Value inLoop;
    IRMapping map = addressesAt(iv, inLoop);
    for (auto [p, ring] : llvm::zip(loads, rings))
      AsyncCopyOp::create(b, loop.getLoc(), AsyncTokenType::get(b.getContext()), map.lookupOrDefault(p.base),
                          map.lookupOrDefault(p.offsets), entry(ring, slot), maskAt(p, map, inLoop));
  }

  /// The loads of the iteration whose induction variable is `iv`, into registers.
  SmallVector<Value> load(Value iv) {
    Value inLoop;
    IRMapping map = addressesAt(iv, inLoop);
    SmallVector<Value> tiles;
    for (const PrefetchedLoad &p : loads) {
      Type type = p.load->getResult(0).getType();
      Value base = map.lookupOrDefault(p.base), offsets = map.lookupOrDefault(p.offsets), mask = maskAt(p, map, inLoop);
      tiles.push_back(isa<LoadOp>(p.load)
                          ? Value(LoadOp::create(b, loop.getLoc(), type, base, offsets, mask, zeroFill(p)))
                          : Value(BufferLoadOp::create(b, loop.getLoc(), type, base, offsets, mask)));
    }
    return tiles;
  }

  /// A zero `other` (a constant, maybe defined in the loop) where the load is re-issued.
  Value zeroFill(const PrefetchedLoad &p) {
    return p.other ? b.clone(*p.other.getDefiningOp())->getResult(0) : Value();
  }

  void store(ArrayRef<Value> tiles, Value slot) {
    for (auto [tile, ring] : llvm::zip(tiles, rings))
      SharedStoreOp::create(b, loop.getLoc(), tile, entry(ring, slot));
  }

  /// Replaces the loads in the loop by reads of `slot`.
  void readSlots(Value slot) {
    for (auto [p, ring] : llvm::zip(loads, rings)) {
      b.setInsertionPoint(p.load);
      Value tile = SharedLoadOp::create(b, loop.getLoc(), p.load->getResult(0).getType(), entry(ring, slot));
      p.load->getResult(0).replaceAllUsesWith(tile);
      p.load->erase();
    }
  }

  scf::ForOp loop;
  int64_t stages; // ring slots
  PrefetchMode mode;
  OpBuilder b;
  SmallVector<PrefetchedLoad> loads;
  llvm::SetVector<Operation *> addressOps;
  SmallVector<Value> rings;
};

struct TilePipelineLoops : wavetile::tile::impl::TilePipelineLoopsBase<TilePipelineLoops> {
  using TilePipelineLoopsBase::TilePipelineLoopsBase;
  void runOnOperation() override {
    if (mode == "off")
      return;
    if (mode != "async-copies" && mode != "registers" && mode != "by-depth") {
      getOperation().emitError()
          << "tile-pipeline-loops: mode must be async-copies, registers, by-depth or off, got '" << mode << "'";
      return signalPassFailure();
    }
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      auto stages = kernel->getAttrOfType<IntegerAttr>(TileDialect::kNumStagesAttrName);
      if (!kernel->hasAttr(TileDialect::kKernelAttrName) || !stages || stages.getInt() < 2)
        continue;
      // by-depth: two stages through registers, deeper rings through async copies.
      PrefetchMode prefetch = mode == "registers" || (mode == "by-depth" && stages.getInt() == 2)
                                  ? PrefetchMode::Registers
                                  : PrefetchMode::AsyncCopies;
      SmallVector<scf::ForOp> loops;
      kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        LoopPipeliner(loop, stages.getInt(), prefetch).run();
    }
  }
};
} // namespace
