//===- AssignLayouts.cpp - distributed layouts for every tile -------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "wavetile/Atoms/AtomTable.h"
#include "wavetile/Dialect/Tile/IR/Distribution.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace wavetile::tile {
#define GEN_PASS_DEF_TILEASSIGNLAYOUTS
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace wavetile::tile

using namespace mlir;
using namespace wavetile::tile;

namespace {

bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

RankedTensorType withLayout(RankedTensorType type, Attribute layout) {
  return RankedTensorType::get(type.getShape(), type.getElementType(), layout);
}

Attribute layoutOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type ? type.getEncoding() : Attribute();
}

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

class LayoutAssigner {
public:
  LayoutAssigner(func::FuncOp kernel, int64_t warpSize, int64_t numWarps,
                 std::optional<wavetile::atoms::Target> target)
      : kernel(kernel), context(kernel.getContext()), warpSize(warpSize), numWarps(numWarps), target(target) {}

  LogicalResult run() {
    collectMemoryWidths();
    if (target)
      kernel.walk([&](Operation *op) {
        auto dot = dyn_cast<DotOp>(op);
        auto scaled = dyn_cast<ScaledDotOp>(op);
        if (!dot && !scaled)
          return;
        // Operands: A, B, then (scaled dots) the scales of A and B, at dot-operand indices 0-3.
        SmallVector<Value> operands = dot ? SmallVector<Value>{dot.getA(), dot.getB()}
                                          : SmallVector<Value>{scaled.getA(), scaled.getB(), scaled.getAScale(),
                                                               scaled.getBScale()};
        Value acc = dot ? dot.getAcc() : scaled.getAcc();
        if (MmaLayoutAttr mma = chooseMma(operands[0], operands[1], acc, /*blockScaled=*/bool(scaled))) {
          dotLayouts[op] = mma;
          startAccumulator(acc, mma);
          for (auto [index, operand] : llvm::enumerate(operands)) {
            loadOperandDirectly(operand, DotOperandLayoutAttr::get(context, unsigned(index), mma));
            // An operand the warps share (A across warps along N, B across warps along M) is
            // decoded once, spread over every warp, and reaches them through shared memory:
            // in its operand layout each warp sharing it would decode all of it again.
            if (dot && mma.getWarpsPerBlock()[1 - index] == 1)
              decodeOperandInPlace(operand, DotOperandLayoutAttr::get(context, unsigned(index), mma));
          }
        }
      });
    WalkResult warpgroupDots = kernel.walk([&](SharedDotOp dot) {
      MmaLayoutAttr mma = target ? chooseWarpgroupMma(dot) : MmaLayoutAttr();
      if (!mma) {
        dot.emitOpError() << "has no warpgroup matrix instruction on target '"
                          << (target ? wavetile::atoms::targetName(*target) : "none") << "' for "
                          << dot.getA().getType() << " x " << dot.getB().getType() << " with " << numWarps << " warps";
        return WalkResult::interrupt();
      }
      dotLayouts[dot] = mma;
      startAccumulator(dot.getAcc(), mma);
      desired.try_emplace(dot.getResult(), mma);
      return WalkResult::advance();
    });
    if (warpgroupDots.wasInterrupted())
      return failure();
    splitIndexComputations();
    kernel.walk([&](ReduceOp op) { chooseRowReduction(op); });
    kernel.walk([&](BroadcastOp op) { desireBroadcastSources(op); });
    kernel.walk([&](Operation *op) { desireMemoryLayouts(op); });
    WalkResult typed = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
      return failed(assignResults(op)) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (typed.wasInterrupted())
      return failure();
    kernel.walk([&](Operation *op) { convertOperands(op); });
    mergeIndexCopies();
    eraseUnusedIndexComputations();
    kernel.walk([&](SharedAllocOp alloc) { swizzleOperandStage(alloc); });
    return success();
  }

private:
  /// Index and mask arithmetic built only from aranges, splats and constants (through
  /// expand_dims, broadcasts and elementwise arith): cheaper to recompute in each layout its
  /// users want than to move between layouts through shared memory.
  bool isIndexComputation(Operation *op) {
    if (!op || op->getNumResults() != 1 || op->getNumRegions() || !isMemoryEffectFree(op))
      return false;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || type.getEncoding())
      return false;
    auto [it, inserted] = indexComputation.try_emplace(op, false);
    if (!inserted)
      return it->second;
    bool index = isa<ArangeOp, SplatOp, arith::ConstantOp>(op);
    if (isa<ExpandDimsOp, BroadcastOp>(op) ||
        (op->hasTrait<OpTrait::Elementwise>() && isa<arith::ArithDialect>(op->getDialect()))) {
      index = llvm::all_of(op->getOperands(), [&](Value operand) {
        return !isa<RankedTensorType>(operand.getType()) || isIndexComputation(operand.getDefiningOp());
      });
    }
    return indexComputation[op] = index;
  }

  /// Gives every use of an index computation its own copy (placed next to the original, so it
  /// dominates every user), so each can take the layout its user wants.
  void splitIndexComputations() {
    SmallVector<Operation *> ops;
    kernel.walk([&](Operation *op) {
      if (isIndexComputation(op))
        ops.push_back(op);
    });
    // Users before their operands: a copied user's operands get their own copies in turn.
    for (Operation *op : llvm::reverse(ops)) {
      auto uses = llvm::map_to_vector(op->getResult(0).getUses(), [](OpOperand &use) { return &use; });
      OpBuilder b(context);
      b.setInsertionPointAfter(op);
      SmallVector<Operation *> &group = copies.emplace_back(1, op);
      for (OpOperand *use : llvm::drop_begin(uses, uses.empty() ? 0 : 1)) {
        Operation *copy = b.clone(*op);
        indexComputation[copy] = true;
        use->set(copy->getResult(0));
        group.push_back(copy);
      }
    }
  }

  /// Copies that ended up in the same layout on the same operands are one computation again.
  /// Operands first (the groups were made users first), so merged operands make users equal.
  void mergeIndexCopies() {
    for (SmallVector<Operation *> &group : llvm::reverse(copies)) {
      for (auto [i, op] : llvm::enumerate(group)) {
        if (!op)
          continue;
        for (Operation *&other : llvm::drop_begin(group, i + 1)) {
          if (other && other->getResultTypes() == op->getResultTypes() && other->getOperands() == op->getOperands() &&
              other->getAttrDictionary() == op->getAttrDictionary()) {
            other->replaceAllUsesWith(op); // op comes first in the block, so it dominates other's users
            other->erase();
            other = nullptr;
          }
        }
      }
    }
  }

  /// Index computations every user rebuilt in another layout: lowered, a layout change
  /// without users would still cost barriers.
  void eraseUnusedIndexComputations() {
    SmallVector<Operation *> ops;
    kernel.walk([&](Operation *op) {
      if (indexComputation.lookup(op))
        ops.push_back(op);
    });
    for (Operation *op : llvm::reverse(ops)) // users before their operands
      if (op->use_empty()) {
        indexComputation.erase(op);
        op->erase();
      }
  }

  /// A tile loaded only to be broadcast (a row of weights or of cos/sin against a tile of
  /// rows) is loaded in the broadcast's layout, through the elementwise ops in between: each
  /// thread then reads the elements it repeats, instead of moving them through shared memory.
  void desireBroadcastSources(BroadcastOp broadcast) {
    Value source = broadcast.getSource();
    Attribute layout = defaultLayout(broadcast.getType());
    Attribute sourceLayout = layout;
    if (auto expand = source.getDefiningOp<ExpandDimsOp>()) {
      // A loaded vector expanded, broadcast and (after elementwise ops) reshaped back to the
      // consumer's shape (a per-group scale over the group's elements, a byte over its two
      // nibbles): the broadcast takes the layout that reshapes to the consumer's default in
      // registers, the vector its slice.
      ReshapeOp reshape;
      // Through elementwise ops, conversions of the element type included (a word's halves
      // truncated and read as bf16).
      for (Value v = broadcast.getResult(); v.hasOneUse() && !reshape;) {
        Operation *user = *v.getUsers().begin();
        reshape = dyn_cast<ReshapeOp>(user);
        auto result = user->getNumResults() == 1 ? dyn_cast<RankedTensorType>(user->getResult(0).getType()) : nullptr;
        if (!reshape && (!user->hasTrait<OpTrait::Elementwise>() || !result ||
                         result.getShape() != cast<RankedTensorType>(v.getType()).getShape()))
          break;
        v = user->getResult(0);
      }
      if (!source.hasOneUse())
        return; // expand_dims gives the layout (resultLayout)
      // Without a reshape (an outer product: [m, 1, k] times [1, n, k]) the broadcast keeps
      // its default layout and the vector is loaded in its slice.
      auto blocked = dyn_cast<BlockedLayoutAttr>(layout);
      if (reshape) {
        RankedTensorType consumer = reshape.getType();
        blocked = reshapedBlockedLayout(defaultLayout(consumer), consumer.getShape(), broadcast.getType().getShape());
      }
      if (!blocked)
        return;
      layout = blocked;
      sourceLayout = SliceLayoutAttr::get(context, expand.getAxis(), blocked);
      if (!desireLoadedChain(expand.getSource(), sourceLayout))
        return;
      desired.try_emplace(source, layout);
      desired.try_emplace(broadcast.getResult(), layout);
      return;
    }
    // A loaded row or column broadcast into arithmetic with a dot's result (scales applied
    // to a block's sum) is broadcast straight into the dot's layout: each thread gathers the
    // elements its accumulator registers need (from the shared tile itself when the row was
    // read from shared memory) instead of the whole tile changing layout.
    MmaLayoutAttr mma = mmaLayoutMeeting(broadcast.getResult());
    if (desireLoadedChain(source, sourceLayout))
      desired.try_emplace(broadcast.getResult(), mma ? Attribute(mma) : layout);
  }

  /// The MMA layout of a dot result that `v` meets in an elementwise op (through other
  /// elementwise ops computed from that result), directly or after elementwise ops of its
  /// own (two scales multiplied before they meet a block's sum), or null.
  MmaLayoutAttr mmaLayoutMeeting(Value v, int depth = 4) {
    for (Operation *user : v.getUsers()) {
      if (!user->hasTrait<OpTrait::Elementwise>() || user->getNumResults() != 1)
        continue;
      for (Value other : user->getOperands())
        if (other != v)
          if (MmaLayoutAttr mma = dotLayoutReaching(other, /*depth=*/4))
            return mma;
      if (depth > 0)
        if (MmaLayoutAttr mma = mmaLayoutMeeting(user->getResult(0), depth - 1))
          return mma;
    }
    return {};
  }

  /// The MMA layout of the dot whose result `v` is, or is computed elementwise from.
  MmaLayoutAttr dotLayoutReaching(Value v, int depth) {
    Operation *def = v.getDefiningOp();
    if (!def || depth < 0)
      return {};
    if (isa<DotOp, ScaledDotOp, SharedDotOp>(def))
      return dotLayouts.lookup(def);
    if (!def->hasTrait<OpTrait::Elementwise>())
      return {};
    for (Value operand : def->getOperands())
      if (MmaLayoutAttr mma = dotLayoutReaching(operand, depth - 1))
        return mma;
    return {};
  }

  /// Records `layout` for `v` and the elementwise computation that makes it from loads
  /// (operands that are index computations aside: masks, splats, rebuilt in any layout),
  /// when nothing outside it uses `v` or any of its values; false (nothing recorded) when
  /// `v` is not such a computation.
  bool desireLoadedChain(Value v, Attribute layout) {
    SmallVector<Operation *> loads;
    SetVector<Value> computation = elementwiseComputation(v, isLoad, &loads);
    for (Value value : computation)
      desired.try_emplace(value, layout);
    return !computation.empty();
  }

  /// Memory ops want their offsets and masks in the coalesced default layout of their shape;
  /// index computations feeding them are built in it directly.
  void desireMemoryLayouts(Operation *op) {
    Value offsets;
    if (auto load = dyn_cast<LoadOp>(op))
      offsets = load.getOffsets();
    else if (auto load = dyn_cast<BufferLoadOp>(op))
      offsets = load.getOffsets();
    else if (auto store = dyn_cast<StoreOp>(op))
      offsets = store.getOffsets();
    else if (auto store = dyn_cast<BufferStoreOp>(op))
      offsets = store.getOffsets();
    else if (auto copy = dyn_cast<AsyncCopyOp>(op))
      offsets = copy.getOffsets();
    else if (auto atomic = dyn_cast<AtomicAddOp>(op))
      offsets = atomic.getOffsets();
    else
      return;
    auto type = cast<RankedTensorType>(offsets.getType());
    if (type.getEncoding())
      return;
    // cp.async moves 4, 8 or 16 bytes: a thread holding a narrower run of a small tile would
    // copy it through registers, and the pipelined loop would wait for that load. Its owner
    // copies a 4-byte run instead; the threads that repeat it skip the copy.
    Attribute layout = defaultLayout(type, isa<AsyncCopyOp>(op) && cpAsyncCopies() ? 32 : 0);
    for (Value operand : op->getOperands())
      if (auto t = dyn_cast<RankedTensorType>(operand.getType()); t && t.getShape() == type.getShape())
        desire(operand, layout);
  }

  /// Records the layout an index computation should be built in, and what its operands need.
  void desire(Value value, Attribute layout) {
    Operation *def = value.getDefiningOp();
    if (!isIndexComputation(def) || !desired.try_emplace(value, layout).second)
      return;
    if (auto expand = dyn_cast<ExpandDimsOp>(def)) {
      if (auto parent = dyn_cast<DistributedLayoutAttr>(layout))
        desire(expand.getSource(), SliceLayoutAttr::get(context, expand.getAxis(), parent));
      return;
    }
    for (Value operand : def->getOperands())
      if (isa<RankedTensorType>(operand.getType()))
        desire(operand, layout); // broadcasts and elementwise ops keep the layout
  }

  /// Bits of the narrowest element loaded and stored per tile shape: the default layout gives
  /// each thread 128 bits of the narrowest loaded, or stored where none is loaded. Loads decide
  /// because a run of more than 16 loaded bytes a thread makes each warp-wide load use only
  /// part of every sector it touches, while a narrower store is not waited for (16 fp8 codes a
  /// thread: the quantizing RMSNorm's bf16 row took 32 sectors a request and 3.5% more time over
  /// 4096 and more rows of 16384 on an H100 than with 8).
  void collectMemoryWidths() {
    auto note = [&](Type t, bool loaded) {
      if (auto tile = dyn_cast<RankedTensorType>(t)) {
        int64_t bits = std::max<int64_t>(8, tile.getElementTypeBitWidth());
        MemoryWidths &widths = memoryBits[llvm::to_vector(tile.getShape())];
        int64_t &narrowest = loaded ? widths.loaded : widths.stored;
        narrowest = narrowest ? std::min(narrowest, bits) : bits;
      }
    };
    kernel.walk([&](Operation *op) {
      if (isa<LoadOp, BufferLoadOp>(op))
        note(op->getResult(0).getType(), /*loaded=*/true);
      else if (auto store = dyn_cast<StoreOp>(op))
        note(store.getValue().getType(), /*loaded=*/false);
      else if (auto store = dyn_cast<BufferStoreOp>(op))
        note(store.getValue().getType(), /*loaded=*/false);
      else if (auto copy = dyn_cast<AsyncCopyOp>(op)) // the copied elements, at the offsets' shape
        note(RankedTensorType::get(copy.getDest().getType().getShape(), copy.getDest().getType().getElementType()),
             /*loaded=*/true);
    });
  }

  /// The largest atom of the target computing the dot's types whose tile, times a split of
  /// the kernel's warps, divides the dot's tiles; null when none fits.
  /// The MMA layout for a dot (or, `blockScaled`, a scaled dot) of these operands: the
  /// largest atom of the target that computes their types and divides their tiles.
  MmaLayoutAttr chooseMma(Value aValue, Value bValue, Value accValue, bool blockScaled) {
    auto a = cast<RankedTensorType>(aValue.getType()), b = cast<RankedTensorType>(bValue.getType()),
         c = cast<RankedTensorType>(accValue.getType());
    int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
    std::vector<const wavetile::atoms::Atom *> candidates;
    for (const auto *atom : wavetile::atoms::atomsFor(*target))
      if (atom->a && atom->b && bool(atom->scaleType) == blockScaled && atom->waveSize == warpSize &&
          typeName(a.getElementType()) == wavetile::atoms::scalarKindName(atom->aType) &&
          typeName(b.getElementType()) == wavetile::atoms::scalarKindName(atom->bType) &&
          typeName(c.getElementType()) == wavetile::atoms::scalarKindName(atom->cType))
        candidates.push_back(atom);
    std::stable_sort(candidates.begin(), candidates.end(), [](const auto *x, const auto *y) {
      return std::make_pair(x->m * x->n, x->k) > std::make_pair(y->m * y->n, y->k);
    });
    const bool aDecoded = !blockScaled && decodedInRegisters(aValue),
               bDecoded = !blockScaled && decodedInRegisters(bValue);
    // Per K step, an operand of `extent` rows (A) or columns (B) split `split` ways and held
    // by `sharers` warps each.
    auto cost = [&](int64_t extent, int64_t split, int64_t sharers, bool decoded) {
      if (!decoded)
        return extent / split;
      if (sharers == 1)
        return kDecodeCost * extent / split;
      return (kDecodeCost + 1) * extent / numWarps + extent / split;
    };
    for (const auto *atom : candidates) {
      if (m % atom->m || n % atom->n || k % atom->k)
        continue;
      // Of the warp splits the tile divides, the one whose warps read the fewest operand
      // elements per K step (m/warpsM rows of A plus n/warpsN columns of B); ties go to
      // more warps along M. An operand decoded in registers costs its decode too: in place
      // where one warp holds each of its elements, else once spread over all warps and then
      // stored and read back through shared memory.
      std::optional<std::pair<int64_t, int64_t>> best;
      int64_t bestCost = 0;
      for (int64_t warpsM = numWarps; warpsM >= 1; warpsM /= 2) {
        int64_t warpsN = numWarps / warpsM;
        if (warpsM * warpsN != numWarps || m % (atom->m * warpsM) || n % (atom->n * warpsN))
          continue;
        int64_t total = cost(m, warpsM, warpsN, aDecoded) + cost(n, warpsN, warpsM, bDecoded);
        if (!best || total < bestCost) {
          best = {warpsM, warpsN};
          bestCost = total;
        }
      }
      if (!best)
        continue;
      return MmaLayoutAttr::get(context, atom->name, {unsigned(best->first), unsigned(best->second)});
    }
    return {};
  }

  /// The wgmma layout for a shared dot: warpgroups stacked along M, the widest instruction
  /// whose N divides the tile's; null when none computes it.
  MmaLayoutAttr chooseWarpgroupMma(SharedDotOp dot) {
    SharedType a = dot.getA().getType(), b = dot.getB().getType();
    int64_t warpgroups = numWarps / 4, m = a.getDimSize(0), n = b.getDimSize(0), k = a.getDimSize(1);
    if (numWarps % 4 || m % (64 * warpgroups))
      return {};
    const wavetile::atoms::Atom *best = nullptr;
    for (const auto *atom : wavetile::atoms::atomsFor(*target))
      if (atom->waveSize == 4 * warpSize && atom->aSource == wavetile::atoms::OperandSource::SharedMemoryDescriptor &&
          typeName(a.getElementType()) == wavetile::atoms::scalarKindName(atom->aType) &&
          typeName(b.getElementType()) == wavetile::atoms::scalarKindName(atom->bType) &&
          typeName(dot.getAcc().getType().getElementType()) == wavetile::atoms::scalarKindName(atom->cType) &&
          n % atom->n == 0 && k % atom->k == 0 &&
          (!best || atom->n > best->n))
        best = atom;
    if (!best)
      return {};
    return MmaLayoutAttr::get(context, best->name, {unsigned(warpgroups), 1u});
  }

  /// A sum over the last dimension of a tile with a row for each warp (the skinny GEMM's
  /// [rows, cols, K] products) stays within warps (rowReductionLayout), in runs of 16 loaded
  /// bytes per lane. Tiles of its shape, and of the shapes it is expanded and broadcast from,
  /// default to that layout and its slices, so loads and the elementwise work before the sum
  /// need no conversion; a loop-carried sum starts in the sum's layout.
  void chooseRowReduction(ReduceOp reduce) {
    Value source = reduce.getSource();
    auto type = cast<RankedTensorType>(source.getType());
    if (type.getEncoding() || reduce.getAxis() != type.getRank() - 1)
      return;
    bool regrouped = false;
    int64_t run = loadedRun(source, type.getShape().back(), &regrouped);
    // Rows of at most four loaded 16-byte vectors stay whole in a thread (where there are
    // rows enough for every lane): no lane exchanges, and what is computed once per row (an
    // MXFP4 group's scale) is computed by one lane instead of each lane holding a part.
    if (type.getShape().back() <= 4 * run)
      run = type.getShape().back();
    BlockedLayoutAttr layout = rowReductionLayout(context, type.getShape(), run, warpSize, numWarps);
    if (!layout)
      return;
    SmallVector<Value> worklist{source};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      shapeLayouts.try_emplace(llvm::to_vector(t.getShape()), layout);
      Operation *def = v.getDefiningOp();
      if (auto expand = dyn_cast_or_null<ExpandDimsOp>(def)) {
        if (BlockedLayoutAttr unexpanded = droppedDimLayout(layout, t.getShape(), unsigned(expand.getAxis())))
          shapeLayouts.try_emplace(llvm::to_vector(expand.getSource().getType().getShape()), unexpanded);
      } else if (def && (isa<BroadcastOp>(def) || def->hasTrait<OpTrait::Elementwise>())) {
        for (Value operand : def->getOperands())
          if (auto operandType = dyn_cast<RankedTensorType>(operand.getType());
              operandType && operandType.getRank() == t.getRank())
            worklist.push_back(operand);
      } else if (regrouped && isa_and_nonnull<ReshapeOp>(def)) {
        // Codes decoded in pairs and regrouped (MXFP4 bytes into scale groups of 32) are
        // decoded in the sum's layout.
        decodeInLayout(v, layout);
      }
    }
    // Group sums are combined elementwise with per-group scales: those tiles, and the tiles
    // broadcast to them, default to the sums' layout.
    auto sums = SliceLayoutAttr::get(context, reduce.getAxis(), layout);
    auto resultType = dyn_cast<RankedTensorType>(reduce.getType());
    if (regrouped && resultType && resultType.getRank() >= 2) {
      shapeLayouts.try_emplace(llvm::to_vector(resultType.getShape()), sums);
      for (Operation *user : reduce->getUsers())
        if (user->hasTrait<OpTrait::Elementwise>())
          for (Value operand : user->getOperands())
            if (auto broadcast = operand.getDefiningOp<BroadcastOp>())
              shapeLayouts.try_emplace(llvm::to_vector(broadcast.getSource().getType().getShape()), sums);
    }
    // sum = sum + reduce(...) carried by a loop: the loop carries it in the sum's layout.
    if (!reduce->hasOneUse())
      return;
    auto add = dyn_cast<arith::AddFOp>(*reduce->getUsers().begin());
    auto loop = reduce->getParentOfType<scf::ForOp>();
    if (!add || !loop || !add->hasOneUse() || !isa<scf::YieldOp>(*add->getUsers().begin()))
      return;
    for (Value operand : add->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == loop.getBody() && arg.getArgNumber() > 0)
        startAccumulator(arg, SliceLayoutAttr::get(context, reduce.getAxis(), layout));
  }

  /// Elements along the last dimension of `v` that 16 bytes of the narrowest load it is
  /// computed from cover (a byte of two e2m1 codes covers two); 128 bits of f32 without loads.
  /// Sets `regrouped` when a reshape regroups loaded runs into the last dimension.
  int64_t loadedRun(Value v, int64_t length, bool *regrouped = nullptr) {
    int64_t run = 0;
    SmallVector<Value> worklist{v};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (!seen.insert(value).second || !def || isIndexComputation(def))
        continue;
      auto type = cast<RankedTensorType>(value.getType());
      if (isa<LoadOp, BufferLoadOp>(def)) {
        int64_t loaded = type.getShape().back();
        int64_t bits = std::max<int64_t>(8, type.getElementTypeBitWidth());
        if (length % loaded == 0)
          run = run ? std::min(run, 128 / bits * (length / loaded)) : 128 / bits * (length / loaded);
        continue;
      }
      // A reshape that regroups the last dimension into groups holding whole loaded runs
      // (codes into scale groups of 32): the source's runs. One that splits runs (RoPE's
      // pairs) is not a sum along loaded rows.
      if (auto reshape = dyn_cast<ReshapeOp>(def)) {
        int64_t whole = 1;
        for (int64_t d : llvm::reverse(reshape.getSource().getType().getShape()))
          if ((whole *= d) % length == 0)
            break;
        if (whole != length && whole % length == 0) {
          int64_t split = loadedRun(reshape.getSource(), whole);
          if (split <= length) {
            run = run ? std::min(run, split) : split;
            if (regrouped)
              *regrouped = true;
            continue;
          }
        }
      }
      if (isa<BroadcastOp, ExpandDimsOp, ReshapeOp>(def) || def->hasTrait<OpTrait::Elementwise>())
        for (Value operand : def->getOperands())
          if (isa<RankedTensorType>(operand.getType()))
            worklist.push_back(operand);
    }
    return run ? run : 4;
  }

  /// Gives the values an accumulator starts from (through loop-carried values) `layout` (an
  /// MMA layout: the loop carries the sum in matrix-core registers instead of converting it
  /// each step).
  void startAccumulator(Value acc, Attribute layout) {
    auto type = cast<RankedTensorType>(acc.getType());
    if (type.getEncoding())
      return;
    if (auto arg = dyn_cast<BlockArgument>(acc)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (loop && arg.getArgNumber() > 0)
        startAccumulator(loop.getInitArgs()[arg.getArgNumber() - 1], layout);
      return;
    }
    Operation *def = acc.getDefiningOp();
    if (!isa<SplatOp, arith::ConstantOp>(def))
      return;
    RankedTensorType laidOut = withLayout(type, layout);
    acc.setType(laidOut);
    if (auto constant = dyn_cast<arith::ConstantOp>(def))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        constant.setValueAttr(dense.reshape(laidOut));
  }

  /// A dot operand read from shared memory only by the dot is read straight into the
  /// operand layout, instead of into a blocked layout and then converted. An operand that is
  /// a transpose (weights stored [N, K]) comes out of it in the operand layout: its source
  /// then takes the transposed operand layout (see convertOperands), directly when that
  /// source is a shared load.
  void loadOperandDirectly(Value operand, DotOperandLayoutAttr layout) {
    if (!operand.hasOneUse())
      return;
    if (isa_and_nonnull<SharedLoadOp>(operand.getDefiningOp())) {
      desired.try_emplace(operand, layout);
      return;
    }
    auto trans = operand.getDefiningOp<TransOp>();
    if (!trans)
      return;
    desired.try_emplace(operand, layout);
    Value source = trans.getSource();
    if (isa_and_nonnull<SharedLoadOp>(source.getDefiningOp()) && source.hasOneUse())
      desired.try_emplace(source, transposed(layout));
  }

  /// Instructions to decode an element of an operand decoded in registers (MXFP4 as bf16
  /// pairs: about 3.5), against one to store or read it through shared memory.
  static constexpr int64_t kDecodeCost = 4;

  /// The elementwise computation that decodes `decoded` from reshapes (of broadcast
  /// narrower loads), with the reshapes; empty when it is not decoded so.
  SetVector<Value> decodeComputation(Value decoded, SmallVector<Operation *> *reshapes) {
    SetVector<Value> computation = elementwiseComputation(
        decoded, [](Operation *def) { return isa<ReshapeOp>(def); }, reshapes);
    return reshapes->empty() ? SetVector<Value>() : computation;
  }

  /// Whether the dot operand `operand` (or the tile it transposes) is decoded in registers.
  bool decodedInRegisters(Value operand) {
    if (auto trans = operand.getDefiningOp<TransOp>())
      operand = trans.getSource();
    SmallVector<Operation *> reshapes;
    return !decodeComputation(operand, &reshapes).empty();
  }

  /// A dot operand decoded in registers from narrower loaded values (MXFP4: each byte
  /// broadcast over its two codes, each e8m0 scale over its 32, reshaped to the operand's
  /// shape, then elementwise arithmetic) is decoded in the operand layout: the broadcasts take
  /// blocked layouts that reshape to it in registers and the loads their slices. Otherwise the
  /// decoded tile, 4 times the loaded bytes, would move to the operand layout through shared
  /// memory every K step.
  void decodeOperandInPlace(Value operand, DotOperandLayoutAttr layout) {
    if (auto trans = operand.getDefiningOp<TransOp>()) // weights stored [N, K]
      decodeInLayout(trans.getSource(), transposed(layout));
    else
      decodeInLayout(operand, layout);
  }

  /// Lays out the decoding of `decoded` (see decodeOperandInPlace) so that it ends in `layout`
  /// without leaving registers; nothing when it is not decoded so.
  void decodeInLayout(Value decoded, Attribute layout) {
    SmallVector<Operation *> reshapes;
    SetVector<Value> computation = decodeComputation(decoded, &reshapes);
    if (computation.empty())
      return;
    // Each reshape's source: elementwise ops on a broadcast of an expanded tile computed
    // elementwise from loads. All of them or none: a reshape left in another layout would move
    // its 32-bit codes through shared memory.
    struct Source {
      SetVector<Value> spread, loaded;
      ExpandDimsOp expand;
      BlockedLayoutAttr blocked;
    };
    SmallVector<Source> sources;
    for (Operation *op : reshapes) {
      auto reshape = cast<ReshapeOp>(op);
      RankedTensorType source = reshape.getSource().getType();
      BlockedLayoutAttr blocked = equivalentBlockedLayout(layout, reshape.getType().getShape(), source.getShape());
      SmallVector<Operation *> broadcasts;
      SetVector<Value> spread = elementwiseComputation(
          reshape.getSource(), [](Operation *def) { return isa<BroadcastOp>(def); }, &broadcasts);
      if (!blocked || spread.empty() || broadcasts.size() != 1)
        return;
      auto expand = cast<BroadcastOp>(broadcasts[0]).getSource().getDefiningOp<ExpandDimsOp>();
      if (!expand || !expand->hasOneUse())
        return;
      SmallVector<Operation *> loads;
      SetVector<Value> loaded = elementwiseComputation(expand.getSource(), isLoad, &loads);
      if (loaded.empty())
        return;
      sources.push_back({spread, loaded, expand, blocked});
    }
    for (Source &source : sources) {
      Attribute slice = SliceLayoutAttr::get(context, source.expand.getAxis(), source.blocked);
      for (Value value : source.loaded)
        desired.try_emplace(value, slice);
      desired.try_emplace(source.expand.getResult(), source.blocked);
      for (Value value : source.spread)
        desired.try_emplace(value, source.blocked);
    }
    for (Value value : computation)
      desired.try_emplace(value, layout);
  }

  /// The elementwise computation that makes `v` from the results of ops `isLeaf` accepts
  /// (collected in `leaves`) and index computations (masks, splats: rebuilt in any layout),
  /// leaves included, when nothing outside it uses any of its values but `v`; empty
  /// otherwise.
  SetVector<Value> elementwiseComputation(Value v, llvm::function_ref<bool(Operation *)> isLeaf,
                                          SmallVector<Operation *> *leaves) {
    if (!v.hasOneUse())
      return {};
    SmallVector<Value> worklist{v};
    SetVector<Value> computation;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (!computation.insert(value))
        continue;
      Operation *def = value.getDefiningOp();
      if (!def || isIndexComputation(def))
        return {};
      if (isLeaf(def)) {
        leaves->push_back(def);
        continue;
      }
      if (!def->hasTrait<OpTrait::Elementwise>() || def->getNumResults() != 1)
        return {};
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()) && !isIndexComputation(operand.getDefiningOp()))
          worklist.push_back(operand);
    }
    for (Value value : computation)
      if (value != v && llvm::any_of(value.getUsers(), [&](Operation *user) {
            return user->getNumResults() != 1 || !computation.contains(user->getResult(0));
          }))
        return {};
    return computation;
  }

  static bool isLoad(Operation *op) { return isa<LoadOp, BufferLoadOp, SharedLoadOp>(op); }

  DotOperandLayoutAttr transposed(DotOperandLayoutAttr layout) {
    return DotOperandLayoutAttr::get(context, layout.getOperandIndex(), layout.getParent(), !layout.getTransposed());
  }

  /// A shared buffer that only stages dot operands (written by copies or stores, read by
  /// shared_loads into dot-operand layouts) gets the swizzle that makes those reads free of
  /// bank conflicts. Buffers with a layout of their own are left as they are.
  void swizzleOperandStage(SharedAllocOp alloc) {
    SharedType type = alloc.getType();
    if (type.getEncoding() || type.getRank() < 2)
      return;
    bool readsOperands = false;
    for (Value view : sharedViews(alloc))
      for (Operation *user : view.getUsers()) {
        if (auto slice = dyn_cast<SharedSliceOp>(user)) {
          if (slice.getSource().getType().getRank() < 3)
            return; // a 1-D entry cannot keep a row swizzle
        } else if (auto load = dyn_cast<SharedLoadOp>(user)) {
          if (!isa<DotOperandLayoutAttr>(layoutOf(load.getResult())))
            return;
          readsOperands = true;
        } else if (!isa<AsyncCopyOp, SharedStoreOp>(user)) {
          return;
        }
      }
    SharedLayoutAttr swizzle = operandSharedLayout(context, type.getShape(), type.getElementType());
    if (readsOperands && swizzle)
      setSharedLayout(alloc, swizzle);
  }

  bool cpAsyncCopies() const {
    return target && (*target == wavetile::atoms::Target::sm_90 || *target == wavetile::atoms::Target::sm_90a);
  }

  /// The default layout for tiles of `type`'s shape; `minBits`: at least that many bits per
  /// thread along the last dimension where it holds them.
  Attribute defaultLayout(RankedTensorType type, int64_t minBits = 0) {
    SmallVector<int64_t> shape(type.getShape());
    if (auto it = shapeLayouts.find(shape); it != shapeLayouts.end())
      return it->second;
    auto it = memoryBits.find(shape);
    int64_t bits = it == memoryBits.end() ? 32 : it->second.run();
    return defaultBlockedLayout(context, shape, 128 / bits, warpSize, numWarps, minBits / bits);
  }

  /// The layout an op's tile result should have, given its (already typed) operands.
  Attribute resultLayout(Operation *op, RankedTensorType type) {
    if (op->getNumResults() == 1)
      if (Attribute layout = desired.lookup(op->getResult(0)))
        return layout;
    // Operands that are index computations can be rebuilt in any layout: the others decide.
    auto firstTileOperandLayout = [&]() -> Attribute {
      Attribute index;
      for (Value operand : op->getOperands())
        if (auto t = dyn_cast<RankedTensorType>(operand.getType()); t && t.getShape() == type.getShape())
          if (t.getEncoding()) {
            Operation *def = operand.getDefiningOp();
            if (!def || !indexComputation.lookup(def))
              return t.getEncoding();
            if (!index)
              index = t.getEncoding();
          }
      return index;
    };
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      // Reductions run on blocked layouts (see convertOperands): slice the one they will see.
      RankedTensorType source = reduce.getSource().getType();
      Attribute input = source.getEncoding();
      if (!blockedGeometry(input, source.getShape()))
        input = defaultLayout(source);
      return SliceLayoutAttr::get(context, reduce.getAxis(), cast<DistributedLayoutAttr>(input));
    }
    if (op->hasTrait<OpTrait::Elementwise>() || isa<LoadOp, BufferLoadOp, AtomicAddOp, ScanOp, FpConvertOp>(op))
      if (Attribute layout = firstTileOperandLayout())
        return layout;
    // expand_dims undoes the reduction a slice layout came from; broadcasting that keeps the
    // layout, so each thread already holds what it repeats.
    if (auto expand = dyn_cast<ExpandDimsOp>(op))
      if (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layoutOf(expand.getSource())))
        if (slice.getDim() == expand.getAxis())
          return slice.getParent();
    if (auto broadcast = dyn_cast<BroadcastOp>(op))
      if (broadcast.getSource().getDefiningOp<ExpandDimsOp>())
        if (auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layoutOf(broadcast.getSource())))
          return blocked;
    // A reshape keeps each thread's elements when the source layout allows it.
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      RankedTensorType source = reshape.getSource().getType();
      if (Attribute layout = reshapedBlockedLayout(source.getEncoding(), source.getShape(), type.getShape()))
        return layout;
    }
    if (auto dot = dyn_cast<DotOp>(op))
      return layoutOf(dot.getAcc());
    if (auto dot = dyn_cast<ScaledDotOp>(op))
      return layoutOf(dot.getAcc());
    if (auto dot = dyn_cast<SharedDotOp>(op))
      return layoutOf(dot.getAcc());
    return defaultLayout(type);
  }

  LogicalResult checkShape(Operation *op, RankedTensorType type) {
    for (int64_t d : type.getShape())
      if (!isPowerOf2(d))
        return op->emitOpError() << "GPU targets need power-of-two tile dimensions, got a tile of "
                                 << type << "; pad the tile and mask the tail";
    return success();
  }

  LogicalResult assignResults(Operation *op) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      // Carried tiles keep the layout of their initial values.
      for (auto [init, arg, result] : llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
        arg.setType(init.getType());
        result.setType(init.getType());
      }
      return success();
    }
    if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      // The condition forwards the carried tiles unchanged: one layout, the initial value's,
      // on both sides and after the loop.
      for (auto [i, init] : llvm::enumerate(loop.getInits())) {
        loop.getBeforeArguments()[i].setType(init.getType());
        loop.getAfterArguments()[i].setType(init.getType());
        loop.getResult(i).setType(init.getType());
      }
      return success();
    }
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || type.getEncoding())
        continue;
      if (failed(checkShape(op, type)))
        return failure();
      RankedTensorType laidOut = withLayout(type, resultLayout(op, type));
      result.setType(laidOut);
      // A constant's value carries its type too.
      if (auto constant = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          constant.setValueAttr(dense.reshape(laidOut));
    }
    return success();
  }

  /// Converts `operand` of `user` to `layout` when it differs: an index computation is
  /// built again in that layout, anything else moves.
  void require(Operation *user, OpOperand &operand, Attribute layout) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !layout || type.getEncoding() == layout)
      return;
    OpBuilder b(user);
    if (Value rebuilt = rebuildIn(b, operand.get(), layout)) {
      operand.set(rebuilt);
      return;
    }
    auto convert = ConvertLayoutOp::create(b, user->getLoc(), withLayout(type, layout), operand.get());
    operand.set(convert);
  }

  /// A copy of the index computation `value` in `layout` (its operands rebuilt as needed),
  /// or null when `value` is not one.
  Value rebuildIn(OpBuilder &b, Value value, Attribute layout) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getEncoding() == layout)
      return value;
    Operation *def = value.getDefiningOp();
    if (!def || !indexComputation.lookup(def))
      return {};
    auto distributed = dyn_cast<DistributedLayoutAttr>(layout);
    if (!distributed)
      return {};
    // Operands first, so they come before their user.
    IRMapping operands;
    for (Value operand : def->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()))
        continue;
      Attribute operandLayout = layout;
      if (auto expand = dyn_cast<ExpandDimsOp>(def))
        operandLayout = SliceLayoutAttr::get(context, expand.getAxis(), distributed);
      Value rebuilt = rebuildIn(b, operand, operandLayout);
      if (!rebuilt)
        return {};
      operands.map(operand, rebuilt);
    }
    Operation *copy = b.clone(*def, operands);
    RankedTensorType laidOut = withLayout(type, layout);
    copy->getResult(0).setType(laidOut);
    if (auto constant = dyn_cast<arith::ConstantOp>(copy))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        constant.setValueAttr(dense.reshape(laidOut));
    indexComputation[copy] = true;
    return copy->getResult(0);
  }

  void convertOperands(Operation *op) {
    // Every tile operand of these ops has the reference tile's shape.
    auto requireAll = [&](Attribute layout) {
      for (OpOperand &operand : op->getOpOperands())
        require(op, operand, layout);
    };
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      Operation *parent = op->getParentOp();
      for (auto [i, operand] : llvm::enumerate(yield->getOpOperands()))
        require(op, operand, layoutOf(parent->getResult(i)));
      return;
    }
    if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
      Operation *loop = op->getParentOp();
      for (auto [i, operand] : llvm::enumerate(condition.getArgsMutable()))
        require(op, operand, layoutOf(loop->getResult(i)));
      return;
    }
    if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1)
      return requireAll(layoutOf(op->getResult(0)));
    if (isa<LoadOp, BufferLoadOp, AtomicAddOp>(op))
      return requireAll(layoutOf(op->getResult(0)));
    // Reduction results are stored from where the reduction left them (their offsets and
    // masks are rebuilt there): few elements, not worth a trip through shared memory.
    if (auto store = dyn_cast<StoreOp>(op))
      return requireAll(layoutOf(isa<SliceLayoutAttr>(layoutOf(store.getValue())) ? store.getValue()
                                                                                   : store.getOffsets()));
    if (auto store = dyn_cast<BufferStoreOp>(op))
      return requireAll(layoutOf(isa<SliceLayoutAttr>(layoutOf(store.getValue())) ? store.getValue()
                                                                                   : store.getOffsets()));
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      return requireAll(layoutOf(copy.getOffsets()));
    if (auto dot = dyn_cast<DotOp>(op)) {
      Attribute layout = layoutOf(dot.getResult());
      if (auto mma = dyn_cast<MmaLayoutAttr>(layout)) {
        require(op, dot.getAMutable(), DotOperandLayoutAttr::get(context, 0, mma));
        require(op, dot.getBMutable(), DotOperandLayoutAttr::get(context, 1, mma));
      }
      return require(op, dot.getAccMutable(), layout);
    }
    if (auto dot = dyn_cast<SharedDotOp>(op))
      return require(op, dot.getAccMutable(), layoutOf(dot.getResult()));
    // Reductions run on blocked layouts: an MMA-laid-out input is converted first.
    if (auto reduce = dyn_cast<ReduceOp>(op))
      if (!blockedGeometry(layoutOf(reduce.getSource()), reduce.getSource().getType().getShape()))
        return require(op, reduce.getSourceMutable(), defaultLayout(reduce.getSource().getType()));
    if (auto dot = dyn_cast<ScaledDotOp>(op)) {
      Attribute layout = layoutOf(dot.getResult());
      if (auto mma = dyn_cast<MmaLayoutAttr>(layout)) {
        require(op, dot.getAMutable(), DotOperandLayoutAttr::get(context, 0, mma));
        require(op, dot.getBMutable(), DotOperandLayoutAttr::get(context, 1, mma));
        require(op, dot.getAScaleMutable(), DotOperandLayoutAttr::get(context, 2, mma));
        require(op, dot.getBScaleMutable(), DotOperandLayoutAttr::get(context, 3, mma));
      }
      return require(op, dot.getAccMutable(), layout);
    }
    // A transpose into a dot-operand layout is free from the transposed operand layout; any
    // other layout reaches that one through the staged (swizzled, vectorized) conversion.
    if (auto trans = dyn_cast<TransOp>(op))
      if (auto operand = dyn_cast<DotOperandLayoutAttr>(layoutOf(trans.getResult())))
        return require(op, trans.getSourceMutable(), transposed(operand));
  }

  func::FuncOp kernel;
  MLIRContext *context;
  int64_t warpSize, numWarps;
  std::optional<wavetile::atoms::Target> target;
  struct MemoryWidths {
    int64_t loaded = 0, stored = 0; // 0: none
    int64_t run() const { return loaded ? loaded : stored; } // the element sizing a thread's run
  };
  std::map<SmallVector<int64_t>, MemoryWidths> memoryBits;
  std::map<SmallVector<int64_t>, Attribute> shapeLayouts; // defaults set by chooseRowReduction
  DenseMap<Operation *, bool> indexComputation;
  SmallVector<SmallVector<Operation *>> copies; // each index computation and its copies
  DenseMap<Value, Attribute> desired;
  DenseMap<Operation *, MmaLayoutAttr> dotLayouts; // the layout chosen for each dot's result
};

struct TileAssignLayouts : wavetile::tile::impl::TileAssignLayoutsBase<TileAssignLayouts> {
  using TileAssignLayoutsBase::TileAssignLayoutsBase;
  void runOnOperation() override {
    if (warpSize != 32 && warpSize != 64) {
      getOperation().emitError() << "tile-assign-layouts needs warp-size=32 or 64, got " << int64_t(warpSize);
      return signalPassFailure();
    }
    std::optional<wavetile::atoms::Target> atomTarget;
    if (!target.empty()) {
      atomTarget = wavetile::atoms::parseTarget(target);
      if (!atomTarget) {
        getOperation().emitError() << "tile-assign-layouts: unknown target '" << target << "'";
        return signalPassFailure();
      }
    }
    OpBuilder b(&getContext());
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      if (!kernel->hasAttr(TileDialect::kKernelAttrName))
        continue;
      auto numWarps = kernel->getAttrOfType<IntegerAttr>(TileDialect::kNumWarpsAttrName);
      if (!numWarps) {
        kernel.emitError() << "kernel needs a '" << TileDialect::kNumWarpsAttrName << "' attribute";
        return signalPassFailure();
      }
      kernel->setAttr(TileDialect::kWarpSizeAttrName, b.getI32IntegerAttr(int32_t(warpSize)));
      if (failed(LayoutAssigner(kernel, warpSize, numWarps.getInt(), atomTarget).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
