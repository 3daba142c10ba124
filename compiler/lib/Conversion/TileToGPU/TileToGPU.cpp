//===- TileToGPU.cpp - distribute tile kernels over GPU threads -----------===//
//
// A tile with a blocked (or slice) layout becomes, in each thread, the vector of the
// elements that layout gives the thread, in register order (BlockedGeometry). The
// coordinates of those elements are computed from the thread's lane and warp ids with the
// layout's per-dimension formula, which is what arange, loads, stores and shared-memory
// accesses need. Data movement between layouts is decided at compile time from the
// layouts' complete thread/register tables: when every thread already holds each element it
// needs, the movement is a register permutation; otherwise it goes through shared memory.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Conversion/Passes.h"

#include "DirectToLds.h"
#include "wavetile/Dialect/Tile/IR/Distribution.h"
#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "wavetile/Dialect/Tile/Transforms/LoweringUtils.h"
#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace wavetile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

using namespace mlir;
using namespace wavetile;
using namespace wavetile::tile;

namespace {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kBufferResourceAddressSpace = 8; // AMDGPU buffer resource: ptr addrspace(8)
/// Word 3 of a CDNA (gfx9) raw buffer resource: DST_SEL_XYZW and DATA_FORMAT=32 bits, as
/// the CDNA3 ISA guide's buffer resource table defines for untyped buffer accesses.
constexpr int32_t kCdnaBufferFlags = 0x00027000;

/// Along a tile's last dimension: runs of `contiguous` elements that step by +1, and runs
/// of `constant` equal elements; both runs start at multiples of their length. Every element
/// that starts a contiguous run is a multiple of `divisibility` (a power of two).
struct Contiguity {
  int64_t contiguous = 1, constant = 1, divisibility = 1;
};

/// The largest divisibility tracked (beyond it, a value is as good as 0).
constexpr int64_t kMaxDivisibility = int64_t(1) << 16;

/// The power of two dividing `v` (capped; 0 is divisible by anything).
int64_t powerOfTwoDividing(int64_t v) {
  if (v == 0)
    return kMaxDivisibility;
  return std::min<int64_t>(kMaxDivisibility, int64_t(1) << llvm::countr_zero(uint64_t(v)));
}

/// Divisibility of the elements at positions that are multiples of `run` along the last
/// dimension.
int64_t divisibilityAt(const Contiguity &c, int64_t run) {
  return run >= c.contiguous ? c.divisibility : std::min(c.divisibility, run);
}

/// Per-kernel facts the patterns share.
struct KernelContext {
  int64_t warpSize = 0, numWarps = 0;
  bool amd = false;
  Value lane, warp;                      // i32 ids of this thread
  SmallVector<Value, 3> gridSizes;       // i32 kernel arguments
  Value scratch;                         // workgroup memref<Nxi8> for movement and reductions
  llvm::DenseMap<Operation *, Value> sharedBuffers; // tile.shared_alloc -> workgroup memref
  llvm::DenseMap<Value, Contiguity> contiguity; // integer tiles of the original IR
  /// Kernel arguments with `tile.divisibility`: pointers aligned to, or integers multiples
  /// of, that many (bytes for pointers); keyed by the values the kernel's ops use.
  llvm::DenseMap<Value, int64_t> argumentDivisibility;
  /// AMD: the most bytes one lane moves with a load-to-LDS instruction (0: not used).
  int64_t directLdsBytes = 0;
  /// Async copies written with load-to-LDS instructions, and the fewest instructions one
  /// of them issues per thread (what async_wait counts in).
  llvm::DenseMap<Operation *, std::pair<direct_lds::CopyShape, direct_lds::Plan>> directCopies;
  int64_t fewestDirectInstructions = 0;
  /// The kernel has shared dots (wgmma), which read shared memory through the async proxy.
  bool warpgroupDots = false;
  /// The fp8 formats the target's conversion instructions read (CDNA3: the fnuz pair, CDNA4
  /// and NVIDIA: OCP e4m3fn and e5m2).
  bool ocpFp8 = true;
  /// NaN-propagating f32 minimum and maximum are instructions (CDNA4: v_minimum3_f32,
  /// v_maximum3_f32); elsewhere on AMD they take a compare and a select each.
  bool nativeMinimumMaximum = false;
  /// Float maxima (elementwise arith.maximumf and max reductions of the original IR) whose
  /// operands all have clear sign bits, lowered as integer maxima of their bits.
  llvm::DenseSet<Operation *> maximaOfBits;
};

/// The power of two an i32 scalar of the original IR is known to be a multiple of.
int64_t scalarDivisibility(const KernelContext &ctx, Value v, int depth = 0) {
  if (depth > 8)
    return 1;
  if (auto it = ctx.argumentDivisibility.find(v); it != ctx.argumentDivisibility.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    // A loop's induction variable: lower bound plus multiples of the step.
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()); loop && arg.getArgNumber() == 0)
      return std::min(scalarDivisibility(ctx, loop.getLowerBound(), depth + 1),
                      scalarDivisibility(ctx, loop.getStep(), depth + 1));
    return 1;
  }
  Operation *op = v.getDefiningOp();
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return powerOfTwoDividing(constant.getSExtValue());
  auto operand = [&](unsigned i) { return scalarDivisibility(ctx, op->getOperand(i), depth + 1); };
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return std::min(operand(0), operand(1));
  if (isa<arith::MulIOp>(op))
    return std::min(kMaxDivisibility, operand(0) * operand(1));
  if (isa<arith::ExtSIOp, arith::ExtUIOp>(op))
    return operand(0);
  // An exact division by a power of two (the dividend a multiple of it), e.g. a chunk's
  // start halved for packed pairs.
  if (isa<arith::DivSIOp, arith::DivUIOp>(op) && matchPattern(op->getOperand(1), m_ConstantInt(&constant))) {
    int64_t divisor = constant.getSExtValue(), dividend = operand(0);
    if (divisor > 0 && llvm::isPowerOf2_64(uint64_t(divisor)) && dividend % divisor == 0)
      return dividend / divisor;
  }
  return 1;
}

//===----------------------------------------------------------------------===//
// Contiguity of integer tiles (what makes vector memory accesses possible)
//===----------------------------------------------------------------------===//

Contiguity contiguityOf(const KernelContext &ctx, Value v) {
  auto it = ctx.contiguity.find(v);
  return it == ctx.contiguity.end() ? Contiguity{} : it->second;
}

/// B where `op` is x >> log2(B) or x & (B - 1) with a constant (splat) right operand.
std::optional<int64_t> powerOfTwoBlock(Operation *op) {
  if (!isa<arith::ShRSIOp, arith::ShRUIOp, arith::AndIOp>(op))
    return std::nullopt;
  auto constant = op->getOperand(1).getDefiningOp<arith::ConstantOp>();
  auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue()) : SplatElementsAttr();
  if (!splat)
    return std::nullopt;
  const int64_t v = splat.getSplatValue<APInt>().getSExtValue();
  if (isa<arith::AndIOp>(op))
    return v >= 0 && llvm::isPowerOf2_64(uint64_t(v) + 1) ? std::optional(v + 1) : std::nullopt;
  return v >= 0 && v < 31 ? std::optional(int64_t(1) << v) : std::nullopt;
}

/// Whether every element of `v` has its sign bit clear: absolute values and non-negative
/// constants, seen through widening, element moves, maxima of such values and loops that
/// carry them (`assumed`: loop arguments taken to hold while their loop is checked).
bool signBitsClear(Value v, llvm::SmallPtrSetImpl<Value> &assumed) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || arg.getArgNumber() == 0)
      return false;
    if (!assumed.insert(v).second)
      return true;
    const unsigned i = arg.getArgNumber() - 1;
    return signBitsClear(loop.getInitArgs()[i], assumed) && signBitsClear(loop.getYieldedValues()[i], assumed);
  }
  Operation *def = v.getDefiningOp();
  if (isa<math::AbsFOp>(def))
    return true;
  if (auto loop = dyn_cast<scf::ForOp>(def))
    return signBitsClear(loop.getRegionIterArgs()[cast<OpResult>(v).getResultNumber()], assumed);
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    auto scalar = dyn_cast<FloatAttr>(constant.getValue());
    return (splat && isa<FloatType>(splat.getElementType()) && !splat.getSplatValue<APFloat>().isNegative()) ||
           (scalar && !scalar.getValue().isNegative());
  }
  if (isa<arith::MaximumFOp>(def))
    return signBitsClear(def->getOperand(0), assumed) && signBitsClear(def->getOperand(1), assumed);
  if (isa<arith::ExtFOp, SplatOp, ReshapeOp, ConvertLayoutOp, ExpandDimsOp, BroadcastOp, TransOp>(def))
    return signBitsClear(def->getOperand(0), assumed);
  return false;
}

/// Where a NaN-propagating float maximum takes a compare and a select per step (CDNA3), the
/// maximum of f32 with clear sign bits (an amax) is the integer maximum of their bits, NaN
/// included (its bits exceed +Inf's): one v_max3_i32 per two elements. Finds such maxima.
void findMaximaOfBits(Operation *root, KernelContext &ctx) {
  if (!ctx.amd || ctx.nativeMinimumMaximum)
    return;
  root->walk([&](Operation *op) {
    llvm::SmallPtrSet<Value, 4> assumed;
    auto reduce = dyn_cast<ReduceOp>(op);
    if (reduce && reduce.getKind() == CombineKind::max && getElementTypeOrSelf(reduce.getSource()).isF32() &&
        signBitsClear(reduce.getSource(), assumed))
      ctx.maximaOfBits.insert(op);
    if (isa<arith::MaximumFOp>(op) && isa<RankedTensorType>(op->getResult(0).getType()) &&
        getElementTypeOrSelf(op->getResult(0)).isF32() && signBitsClear(op->getResult(0), assumed))
      ctx.maximaOfBits.insert(op);
  });
}

/// max(x, y) of f32 values (scalars or vectors) with clear sign bits, as integers.
Value maximumOfBits(OpBuilder &b, Location loc, Value x, Value y) {
  Type bits = b.getI32Type(), type = x.getType();
  if (auto vector = dyn_cast<VectorType>(type))
    bits = vector.clone(bits);
  return arith::BitcastOp::create(b, loc, type,
                                  arith::MaxSIOp::create(b, loc, arith::BitcastOp::create(b, loc, bits, x),
                                                         arith::BitcastOp::create(b, loc, bits, y)));
}

/// Forward pass over a kernel in program order; unknown values get runs of 1.
void analyzeContiguity(Operation *root, KernelContext &ctx) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    auto tile = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!tile || !tile.getElementType().isSignlessInteger() || tile.getRank() == 0)
      return;
    int64_t last = tile.getShape().back();
    auto in = [&](unsigned i) { return contiguityOf(ctx, op->getOperand(i)); };
    Contiguity c;
    if (auto arange = dyn_cast<ArangeOp>(op)) {
      c.contiguous = last;
      if (arange.getStart() % last != 0) // runs must start at multiples of their length
        c.contiguous = int64_t(1) << llvm::countr_zero(uint64_t(arange.getStart()) | uint64_t(last));
      c.divisibility = std::min(powerOfTwoDividing(arange.getStart()), c.contiguous == last ? kMaxDivisibility
                                                                                           : c.contiguous);
    } else if (auto splat = dyn_cast<SplatOp>(op)) {
      c.constant = last;
      c.divisibility = scalarDivisibility(ctx, splat.getOperand());
    } else if (auto constant = dyn_cast<arith::ConstantOp>(op);
               constant && isa<SplatElementsAttr>(constant.getValue())) {
      c.constant = last;
      c.divisibility = powerOfTwoDividing(cast<SplatElementsAttr>(constant.getValue()).getSplatValue<APInt>().getSExtValue());
    } else if (isa<arith::AddIOp, arith::SubIOp>(op)) {
      Contiguity a = in(0), b = in(1);
      c.contiguous = isa<arith::SubIOp>(op) ? std::min(a.contiguous, b.constant)
                                            : std::max(std::min(a.contiguous, b.constant),
                                                       std::min(b.contiguous, a.constant));
      c.constant = std::min(a.constant, b.constant);
      c.divisibility = std::min(divisibilityAt(a, c.contiguous), divisibilityAt(b, c.contiguous));
    } else if (isa<arith::MulIOp>(op)) {
      Contiguity a = in(0), b = in(1); // products of single elements
      c.constant = std::min(a.constant, b.constant);
      c.divisibility = std::min(kMaxDivisibility, divisibilityAt(a, 1) * divisibilityAt(b, 1));
    } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      Contiguity a = in(0), b = in(1);
      c.constant = std::min(a.constant, b.constant);
      // x < t (and its negation x >= t) where x steps by +1 along aligned runs of g and t is a
      // multiple of g, constant along them: x < t holds for all of a run or none of it.
      auto belowThreshold = [](const Contiguity &x, const Contiguity &t) {
        return std::min({x.contiguous, x.divisibility, t.divisibility, t.constant});
      };
      using P = arith::CmpIPredicate;
      P p = cmp.getPredicate();
      if (p == P::slt || p == P::ult || p == P::sge || p == P::uge)
        c.constant = std::max(c.constant, belowThreshold(a, b));
      else if (p == P::sgt || p == P::ugt || p == P::sle || p == P::ule) // t > x, t <= x
        c.constant = std::max(c.constant, belowThreshold(b, a));
    } else if (std::optional<int64_t> block = powerOfTwoBlock(op)) {
      // x >> log2(B) (floor division, for negative x too) and x & (B - 1) (floor modulo) by a
      // power of two B: within a run of x that starts at a multiple of the run's length, at
      // most B elements share a quotient and step through remainders.
      Contiguity x = in(0);
      const int64_t aligned = std::min({x.contiguous, x.divisibility, *block});
      if (isa<arith::AndIOp>(op)) {
        c.contiguous = aligned;
        c.constant = x.constant;
        c.divisibility = std::min(divisibilityAt(x, aligned), *block);
      } else {
        c.constant = std::max(x.constant, aligned);
        c.divisibility = divisibilityAt(x, c.constant) > *block ? divisibilityAt(x, c.constant) / *block : 1;
      }
    } else if (isa<arith::AndIOp, arith::OrIOp, arith::SelectOp, arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(op)) {
      c.constant = last;
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        if (isa<RankedTensorType>(op->getOperand(i).getType()))
          c.constant = std::min(c.constant, in(i).constant);
      if (isa<arith::ExtSIOp, arith::ExtUIOp>(op)) { // widening keeps +1 steps and factors
        c.contiguous = in(0).contiguous;
        c.divisibility = in(0).divisibility;
      }
    } else if (isa<ConvertLayoutOp>(op)) {
      c = in(0);
    } else if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
      if (expand.getAxis() < int64_t(tile.getRank()) - 1)
        c = in(0);
      else // a new last dimension of 1: every element stands alone
        c.divisibility = divisibilityAt(in(0), 1);
    } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      if (broadcast.getSource().getType().getShape().back() == 1) {
        c.constant = last;
        c.divisibility = divisibilityAt(in(0), 1);
      } else {
        c = in(0);
      }
    }
    ctx.contiguity[op->getResult(0)] = c;
  });
}

//===----------------------------------------------------------------------===//
// Small IR helpers
//===----------------------------------------------------------------------===//

Value i32Const(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
Value indexConst(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
Value toIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
}

Type memoryType(Type element) {
  if (auto f = dyn_cast<FloatType>(element))
    if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(f))
      return IntegerType::get(element.getContext(), f.getWidth());
  if (element.isInteger(1))
    return IntegerType::get(element.getContext(), 8);
  return element;
}

/// Values as they are kept in memory (shared memory or global): i1 as i8, narrow floats as ints.
Value toMemory(OpBuilder &b, Location loc, Value v) {
  Type memory = memoryType(v.getType());
  if (memory == v.getType())
    return v;
  if (v.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, memory, v);
  return arith::BitcastOp::create(b, loc, memory, v);
}

Value fromMemory(OpBuilder &b, Location loc, Value v, Type element) {
  if (v.getType() == element)
    return v;
  if (element.isInteger(1))
    return arith::TruncIOp::create(b, loc, element, v);
  return arith::BitcastOp::create(b, loc, element, v);
}

Value extract(OpBuilder &b, Location loc, Value vector, int64_t i) {
  return vector::ExtractOp::create(b, loc, vector, ArrayRef<int64_t>{i});
}

Value fromElements(OpBuilder &b, Location loc, VectorType type, ArrayRef<Value> elements) {
  return vector::FromElementsOp::create(b, loc, type, elements);
}

SmallVector<Value> elementsOf(OpBuilder &b, Location loc, Value vector) {
  SmallVector<Value> result;
  for (int64_t i = 0, e = cast<VectorType>(vector.getType()).getNumElements(); i < e; ++i)
    result.push_back(extract(b, loc, vector, i));
  return result;
}

Value andOf(OpBuilder &b, Location loc, Value x, Value y) {
  if (!x)
    return y;
  if (!y)
    return x;
  return arith::AndIOp::create(b, loc, x, y);
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  Type memory = memoryType(type);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(memory));
  return fromMemory(b, loc, zero, type);
}

//===----------------------------------------------------------------------===//
// Thread geometry in generated code
//===----------------------------------------------------------------------===//

/// A laid-out tile in one thread: which elements it holds, in register order.
struct ThreadTile : HeldElements {
  RankedTensorType type;
  VectorType vectorType;

  /// Blocked-only operations (vector access, reductions, owners) ask for this.
  const BlockedGeometry &geometry() const {
    assert(blocked && "needs a blocked or slice layout");
    return *blocked;
  }
};

std::optional<ThreadTile> maybeThreadTile(RankedTensorType type) {
  std::optional<HeldElements> held = heldElements(type.getEncoding(), type.getShape());
  if (!held)
    return std::nullopt;
  return ThreadTile{*held, type, VectorType::get({held->registers}, type.getElementType())};
}

ThreadTile threadTile(RankedTensorType type) {
  auto t = maybeThreadTile(type);
  assert(t && "distribution supports blocked, slice, mma and dot-operand layouts");
  return *t;
}

/// Lane and warp ids of this thread along root dimension `d`, and its block-pattern base.
Value threadBase(OpBuilder &b, Location loc, const KernelContext &ctx, const BlockedGeometry &g, unsigned d) {
  auto idAlong = [&](Value id, auto extent, unsigned dim) -> Value {
    int64_t below = 1;
    for (unsigned o : g.order) {
      if (o == dim)
        break;
      below *= extent(o);
    }
    if (extent(dim) == 1)
      return i32Const(b, loc, 0);
    Value shifted = below == 1 ? id : Value(arith::DivUIOp::create(b, loc, id, i32Const(b, loc, below)));
    return arith::RemUIOp::create(b, loc, shifted, i32Const(b, loc, extent(dim)));
  };
  Value laneId = idAlong(ctx.lane, [&](unsigned o) { return g.dims[o].threads; }, d);
  Value warpId = idAlong(ctx.warp, [&](unsigned o) { return g.dims[o].warps; }, d);
  const DimPlacement &p = g.dims[d];
  Value thread = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, warpId, i32Const(b, loc, p.threads)), laneId);
  return arith::MulIOp::create(b, loc, thread, i32Const(b, loc, p.sizePerThread));
}

/// Unsigned i32 arithmetic emitted as IR. Index formulas that are also evaluated at compile
/// time (ConstantArith in IndexArith.h, to prove accesses contiguous or aligned) are written once as
/// templates over both.
struct IRArith {
  OpBuilder &b;
  Location loc;
  Value constant(int64_t v) const { return i32Const(b, loc, v); }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) const { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) const { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) const { return arith::RemUIOp::create(b, loc, x, y); }
  Value bitXor(Value x, Value y) const { return arith::XOrIOp::create(b, loc, x, y); }
};

/// Per register, the (row, column) of an MMA-laid-out tile: the atom's lane map gives the
/// position inside the atom tile as laneTerm(lane) + valueTerm(value) (its modes add up).
SmallVector<SmallVector<Value>> mmaCoordinates(OpBuilder &b, Location loc, const KernelContext &ctx,
                                               const MmaGeometry &g) {
  const wavetile::layout::Layout &map = g.map->laneValueToElement;
  wavetile::layout::Layout lanes = map.mode(0);
  // A warpgroup atom's "lane" is the thread's index in its warpgroup, its "warp" the warpgroup.
  Value lane = ctx.lane, warp = ctx.warp;
  if (int64_t warpsPerAtom = g.map->lanes / ctx.warpSize; warpsPerAtom > 1) {
    IRArith a{b, loc};
    lane = a.add(a.mul(a.rem(ctx.warp, a.constant(warpsPerAtom)), a.constant(ctx.warpSize)), ctx.lane);
    warp = a.div(ctx.warp, a.constant(warpsPerAtom));
  }
  Value laneTerm = i32Const(b, loc, 0);
  int64_t below = 1;
  for (auto [size, stride] : llvm::zip(lanes.shape().flatten(), lanes.stride().flatten())) {
    Value digit = arith::RemUIOp::create(b, loc, arith::DivUIOp::create(b, loc, lane, i32Const(b, loc, below)),
                                         i32Const(b, loc, size));
    laneTerm = arith::AddIOp::create(b, loc, laneTerm, arith::MulIOp::create(b, loc, digit, i32Const(b, loc, stride)));
    below *= size;
  }
  Value wi = arith::RemUIOp::create(b, loc, warp, i32Const(b, loc, g.warpsM));
  Value wj = arith::DivUIOp::create(b, loc, warp, i32Const(b, loc, g.warpsM));
  SmallVector<SmallVector<Value>> result;
  for (int64_t r = 0; r < g.elementsPerThread(); ++r) {
    int64_t rep = r / g.valuesPerLane(), value = r % g.valuesPerLane();
    int64_t r0 = rep / g.reps[1], r1 = rep % g.reps[1];
    Value index = arith::AddIOp::create(b, loc, laneTerm, i32Const(b, loc, map(value * g.map->lanes)));
    Value row = arith::RemUIOp::create(b, loc, index, i32Const(b, loc, g.atomRows));
    Value col = arith::DivUIOp::create(b, loc, index, i32Const(b, loc, g.atomRows));
    // Warps tile rows for A and C, columns for B and C (see MmaGeometry::coordinate).
    auto place = [&](Value within, int64_t repIndex, Value warpIndex, int64_t warps, int64_t extent) -> Value {
      Value block = warps > 1 ? Value(arith::AddIOp::create(b, loc, i32Const(b, loc, repIndex * warps), warpIndex))
                              : i32Const(b, loc, repIndex);
      return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, block, i32Const(b, loc, extent)), within);
    };
    // K of A (columns) and B (rows), with K steps packed.
    IRArith a{b, loc};
    Value tileRow = g.operand == 1 ? g.tileK(a, row, r0) : place(row, r0, wi, g.warpsM, g.atomRows);
    Value tileCol = g.operand == 0 ? g.tileK(a, col, r1) : place(col, r1, wj, g.warpsN, g.atomCols);
    if (g.transposed)
      std::swap(tileRow, tileCol);
    result.push_back({tileRow, tileCol});
  }
  return result;
}

/// Per register, the tile coordinates (i32) of the element it holds.
SmallVector<SmallVector<Value>> coordinates(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t) {
  if (t.mma)
    return mmaCoordinates(b, loc, ctx, *t.mma);
  const BlockedGeometry &g = t.geometry();
  SmallVector<Value> bases(g.dims.size());
  for (unsigned d = 0; d < g.dims.size(); ++d)
    if (!g.isDropped(d))
      bases[d] = threadBase(b, loc, ctx, g, d);
  SmallVector<SmallVector<Value>> result;
  for (int64_t r = 0; r < t.registers; ++r) {
    SmallVector<int64_t> index = g.registerIndex(r);
    SmallVector<Value> coords(t.type.getRank());
    for (unsigned d = 0; d < g.dims.size(); ++d) {
      if (g.isDropped(d))
        continue;
      const DimPlacement &p = g.dims[d];
      int64_t fixed = (index[d] / p.sizePerThread) * p.blockExtent() + index[d] % p.sizePerThread;
      Value c = arith::AddIOp::create(b, loc, bases[d], i32Const(b, loc, fixed));
      if (p.size < p.blockExtent()) // the block pattern wraps around a smaller tile
        c = arith::RemUIOp::create(b, loc, c, i32Const(b, loc, p.size));
      coords[g.tileDim(d)] = c;
    }
    result.push_back(coords);
  }
  return result;
}

/// Row-major linear index of `coords` in `shape`.
template <typename Arith, typename T>
T linearIndexWith(const Arith &a, ArrayRef<T> coords, ArrayRef<int64_t> shape) {
  T linear = a.constant(0);
  for (auto [c, dim] : llvm::zip(coords, shape))
    linear = a.add(a.mul(linear, a.constant(dim)), c);
  return linear;
}

Value linearIndex(OpBuilder &b, Location loc, ArrayRef<Value> coords, ArrayRef<int64_t> shape) {
  return linearIndexWith(IRArith{b, loc}, coords, shape);
}

int64_t linearOf(ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) {
  return linearIndexWith(ConstantArith{}, coords, shape);
}

/// Whether this thread is the one owner of register `r`'s element among the threads that
/// replicate it (null when nothing is replicated). Stores and atomics use it so every
/// element is written once.
Value ownerMask(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t, int64_t r) {
  const BlockedGeometry &g = t.geometry(); // stores and atomics see blocked layouts only
  SmallVector<int64_t> index = g.registerIndex(r);
  Value mask;
  for (unsigned d = 0; d < g.dims.size(); ++d) {
    const DimPlacement &p = g.dims[d];
    if (g.isDropped(d)) {
      if (p.threads * p.warps == 1)
        continue;
      // Every lane/warp along a sliced-away dimension holds the same elements: id 0 owns them.
      Value base = threadBase(b, loc, ctx, g, d);
      mask = andOf(b, loc, mask, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, base, i32Const(b, loc, 0)));
    } else if (p.size < p.blockExtent()) {
      Value unwrapped = arith::AddIOp::create(b, loc, threadBase(b, loc, ctx, g, d),
                                              i32Const(b, loc, index[d] % p.sizePerThread));
      mask = andOf(b, loc, mask,
                   arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unwrapped, i32Const(b, loc, p.size)));
    }
  }
  return mask;
}

//===----------------------------------------------------------------------===//
// Shared-memory scratch
//===----------------------------------------------------------------------===//

/// A typed view of the kernel's scratch buffer, `byteOffset` bytes in.
Value scratchView(OpBuilder &b, Location loc, const KernelContext &ctx, Type element, int64_t count,
                  int64_t byteOffset = 0) {
  auto scratchType = cast<MemRefType>(ctx.scratch.getType());
  auto viewType = MemRefType::get({count}, memoryType(element), MemRefLayoutAttrInterface(),
                                  scratchType.getMemorySpace());
  return memref::ViewOp::create(b, loc, viewType, ctx.scratch, indexConst(b, loc, byteOffset), ValueRange{});
}

int64_t bytesOf(Type element, int64_t count) {
  return count * std::max<int64_t>(1, memoryType(element).getIntOrFloatBitWidth() / 8);
}

void storeShared(OpBuilder &b, Location loc, Value view, Value linear, Value value) {
  memref::StoreOp::create(b, loc, toMemory(b, loc, value), view, ValueRange{toIndex(b, loc, linear)});
}

Value loadShared(OpBuilder &b, Location loc, Value view, Value linear, Type element) {
  Value raw = memref::LoadOp::create(b, loc, view, ValueRange{toIndex(b, loc, linear)});
  return fromMemory(b, loc, raw, element);
}

void barrier(OpBuilder &b, Location loc) { gpu::BarrierOp::create(b, loc); }

SmallVector<int64_t> delinearize(int64_t linear, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    coords[d] = linear % shape[d];
    linear /= shape[d];
  }
  return coords;
}

/// Position of tile coordinates in a shared buffer, with its swizzle and padding.
template <typename Arith, typename T>
T sharedIndexWith(const Arith &a, SharedType type, ArrayRef<T> coords) {
  auto layout = dyn_cast_or_null<SharedLayoutAttr>(type.getEncoding());
  ArrayRef<int64_t> shape = type.getShape();
  if (!layout || shape.size() < 2)
    return linearIndexWith(a, coords, shape);
  unsigned fast = layout.getOrder()[0], slow = layout.getOrder()[1];
  // Swizzle the vec-groups of the fastest dimension by the row (slower dimension) phase.
  T phase = a.rem(a.div(coords[slow], a.constant(layout.getPerPhase())), a.constant(layout.getMaxPhase()));
  T vec = a.constant(layout.getVec());
  T group = a.bitXor(a.div(coords[fast], vec), phase);
  SmallVector<T> swizzled(coords);
  swizzled[fast] = a.add(a.mul(group, vec), a.rem(coords[fast], vec));
  SmallVector<int64_t> padded(shape);
  padded[fast] += layout.getPadding();
  return linearIndexWith(a, ArrayRef<T>(swizzled), padded);
}

Value sharedIndex(OpBuilder &b, Location loc, SharedType type, ArrayRef<Value> coords) {
  return sharedIndexWith(IRArith{b, loc}, type, coords);
}

int64_t sharedOffset(SharedType type, ArrayRef<int64_t> coords) {
  return sharedIndexWith(ConstantArith{}, type, coords);
}

/// Byte alignment of every workgroup buffer (shared allocations and the scratch).
constexpr int64_t kSharedAlignment = 16;
/// Byte alignment of buffers wgmma reads: the 128-byte swizzle repeats every 8 rows of 128
/// bytes (PTX ISA, wgmma shared memory layouts).
constexpr int64_t kWgmmaSharedAlignment = 1024;

int64_t sharedElements(SharedType type) {
  int64_t n = 1;
  auto layout = dyn_cast_or_null<SharedLayoutAttr>(type.getEncoding());
  for (auto [d, dim] : llvm::enumerate(type.getShape()))
    n *= dim + (layout && type.getRank() >= 2 && d == layout.getOrder()[0] ? layout.getPadding() : 0);
  return n;
}

/// Bytes a view of `source` is known to be aligned to: allocations are
/// kSharedAlignment-aligned and a slice starts at a multiple of its own size.
int64_t sharedViewAlignment(SharedType source) {
  int64_t bytes = sharedElements(source) * bytesOf(source.getElementType(), 1);
  return std::min<int64_t>(kSharedAlignment, int64_t(1) << llvm::countr_zero(uint64_t(bytes)));
}

/// The largest n such that, in every thread, each group of n registers sits at n
/// consecutive positions of `source` (after its swizzle) starting at a multiple of n, within
/// 128 bits and within the view's alignment. Such a group is one aligned vector access.
/// Widths count elements of `source` (`t` may be the tile of their offsets).
int64_t sharedVectorWidth(const ThreadTile &t, SharedType source) {
  ArrayRef<int64_t> shape = t.type.getShape();
  Type element = source.getElementType();
  // Sub-byte elements take a byte each; a vector of them would be bit-packed (see vectorWidth).
  if (source.getShape() != shape || memoryType(element).getIntOrFloatBitWidth() < 8)
    return 1;
  int64_t bytes = bytesOf(element, 1);
  for (int64_t n = sharedViewAlignment(source) / bytes; n > 1; n /= 2) {
    if (t.registers % n)
      continue;
    bool grouped = true;
    for (int64_t warp = 0; grouped && warp < t.numWarps(); ++warp)
      for (int64_t lane = 0; grouped && lane < t.warpSize(); ++lane)
        for (int64_t r = 0; grouped && r < t.registers; r += n) {
          int64_t first = sharedOffset(source, delinearize(t.elementAt(r, lane, warp), shape));
          grouped = first % n == 0;
          for (int64_t i = 1; grouped && i < n; ++i)
            grouped = sharedOffset(source, delinearize(t.elementAt(r + i, lane, warp), shape)) == first + i;
        }
    if (grouped)
      return n;
  }
  return 1;
}

/// The shared-memory (address space 3) pointer of element `index` of a workgroup memref.
Value sharedAddress(OpBuilder &b, Location loc, Value buffer, Value index, Type element) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value offset = memref::ExtractStridedMetadataOp::create(b, loc, buffer).getOffset();
  Value elements = arith::AddIOp::create(b, loc, offset, toIndex(b, loc, index));
  auto shared = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value address = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), base);
  Value pointer = LLVM::IntToPtrOp::create(b, loc, Type(shared), address);
  return LLVM::GEPOp::create(b, loc, shared, memoryType(element), pointer,
                             ValueRange{arith::IndexCastUIOp::create(b, loc, b.getI64Type(), elements)});
}

/// On sm_90a, where wgmma reads shared memory through the async proxy, orders this thread's
/// stores into shared memory from registers (the generic proxy) before the barrier that
/// publishes them to a wgmma.
void fenceForWarpgroupDots(OpBuilder &b, Location loc, const KernelContext &ctx) {
  if (ctx.warpgroupDots)
    NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
                               NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
}

/// Writes a distributed tile into a shared buffer of its shape, with one vector store per
/// group of registers that sits contiguously in the buffer.
void storeTileToShared(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t, Value vector,
                       SharedType type, Value view) {
  Type element = t.type.getElementType();
  auto coords = coordinates(b, loc, ctx, t);
  int64_t n = sharedVectorWidth(t, type);
  for (int64_t r = 0; r < t.registers; r += n) {
    Value index = sharedIndex(b, loc, type, coords[r]);
    if (n == 1) {
      storeShared(b, loc, view, index, extract(b, loc, vector, r));
      continue;
    }
    SmallVector<Value> group;
    for (int64_t i = 0; i < n; ++i)
      group.push_back(toMemory(b, loc, extract(b, loc, vector, r + i)));
    vector::StoreOp::create(b, loc, fromElements(b, loc, VectorType::get({n}, memoryType(element)), group), view,
                            ValueRange{toIndex(b, loc, index)}, /*nontemporal=*/false, llvm::Align(bytesOf(element, n)));
  }
}

/// How `ldmatrix` (PTX ISA, warp-level matrix load) fills a thread's registers from shared
/// memory. Each 32-bit group of registers (a pair of 16-bit or four 8-bit ones) must be one
/// fragment of an 8x8 matrix of 16-bit units whose rows are 16 contiguous, aligned bytes:
/// lane t holds row t/4, units 2(t%4) and 2(t%4)+1, or, with `.trans` (16-bit elements only),
/// rows 2(t%4) and 2(t%4)+1 of column t/4. Lane t gives the address of row t%8 of the
/// instruction's matrix t/8; in tile coordinates that row starts at groupBase[instruction]
/// plus laneStep[b] for each set bit b of the lane id plus warpStep[b] for each set bit of
/// the warp id, a decomposition checked for every lane and warp.
struct LdMatrixPlan {
  bool transposed = false;
  int64_t matrices = 0; // per instruction: 1, 2 or 4
  SmallVector<SmallVector<int64_t>> groupBase, laneStep, warpStep;
};

std::optional<LdMatrixPlan> planLdMatrix(const ThreadTile &t, SharedType source) {
  ArrayRef<int64_t> shape = t.type.getShape();
  unsigned bits = t.type.getElementType().getIntOrFloatBitWidth();
  if (t.warpSize() != 32 || shape.size() != 2 || source.getShape() != shape || (bits != 16 && bits != 8) ||
      sharedViewAlignment(source) < 16)
    return std::nullopt;
  int64_t perWord = 32 / bits, rowElements = 128 / bits; // elements per 32-bit fragment / 16-byte row
  if (t.registers % perWord)
    return std::nullopt;
  auto coordsOf = [&](int64_t reg, int64_t lane, int64_t warp) {
    return delinearize(t.elementAt(reg, lane, warp), shape);
  };
  auto offsetOf = [&](int64_t reg, int64_t lane, int64_t warp) { return sharedOffset(source, coordsOf(reg, lane, warp)); };
  int64_t words = t.registers / perWord;
  std::optional<bool> transposed;
  // rowStart[word][warp][row]: tile coordinates of the first element of that matrix row.
  SmallVector<SmallVector<SmallVector<SmallVector<int64_t>>>> rowStart(words);
  for (int64_t p = 0; p < words; ++p) {
    int64_t first = perWord * p;
    for (int64_t w = 0; w < t.numWarps(); ++w) {
      bool plain = true, trans = perWord == 2;
      for (int64_t lane = 0; lane < 32; ++lane) {
        int64_t low = offsetOf(first, lane, w), rowLow = offsetOf(first, lane & ~3, w);
        plain = plain && low == rowLow + perWord * (lane % 4) && rowLow % rowElements == 0;
        for (int64_t i = 1; plain && i < perWord; ++i)
          plain = offsetOf(first + i, lane, w) == low + i;
        if (trans) {
          int64_t high = offsetOf(first + 1, lane, w);
          int64_t columnLow = offsetOf(first, lane % 4, w), columnHigh = offsetOf(first + 1, lane % 4, w);
          trans = low == columnLow + lane / 4 && high == columnHigh + lane / 4 && columnLow % 8 == 0 &&
                  columnHigh % 8 == 0;
        }
      }
      if ((!plain && !trans) || (transposed && *transposed != !plain))
        return std::nullopt;
      transposed = !plain;
      SmallVector<SmallVector<int64_t>> rows;
      for (int64_t row = 0; row < 8; ++row)
        rows.push_back(plain ? coordsOf(first, 4 * row, w) : coordsOf(first + row % 2, row / 2, w));
      rowStart[p].push_back(std::move(rows));
    }
  }
  LdMatrixPlan plan;
  plan.transposed = *transposed;
  plan.matrices = words % 4 == 0 ? 4 : words % 2 == 0 ? 2 : 1;
  auto address = [&](int64_t group, int64_t warp, int64_t lane) -> ArrayRef<int64_t> {
    return rowStart[group * plan.matrices + (lane / 8) % plan.matrices][warp][lane % 8];
  };
  auto difference = [](ArrayRef<int64_t> x, ArrayRef<int64_t> y) {
    return SmallVector<int64_t>{x[0] - y[0], x[1] - y[1]};
  };
  for (int64_t g = 0; g < words / plan.matrices; ++g)
    plan.groupBase.push_back(SmallVector<int64_t>(address(g, 0, 0)));
  for (int64_t bit = 1; bit < 32; bit *= 2)
    plan.laneStep.push_back(difference(address(0, 0, bit), plan.groupBase[0]));
  for (int64_t bit = 1; bit < t.numWarps(); bit *= 2)
    plan.warpStep.push_back(difference(address(0, bit, 0), plan.groupBase[0]));
  for (int64_t g = 0; g < int64_t(plan.groupBase.size()); ++g)
    for (int64_t w = 0; w < t.numWarps(); ++w)
      for (int64_t lane = 0; lane < 32; ++lane) {
        SmallVector<int64_t> expected(plan.groupBase[g]);
        for (auto [steps, id] : {std::pair(&plan.laneStep, lane), std::pair(&plan.warpStep, w)})
          for (auto [b, step] : llvm::enumerate(*steps))
            if (id >> b & 1)
              expected = {expected[0] + step[0], expected[1] + step[1]};
        if (ArrayRef<int64_t>(expected) != address(g, w, lane))
          return std::nullopt;
      }
  return plan;
}

/// Reads a tile with the `ldmatrix` instructions of `plan`.
Value loadTileWithLdMatrix(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t,
                           const LdMatrixPlan &plan, SharedType type, Value view) {
  // This lane's row-address coordinates, less the instruction's base.
  IRArith a{b, loc};
  SmallVector<Value> offset(2, a.constant(0));
  for (auto [steps, id] : {std::pair(&plan.laneStep, ctx.lane), std::pair(&plan.warpStep, ctx.warp)})
    for (auto [bit, step] : llvm::enumerate(*steps)) {
      Value set = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, id, a.constant(bit)), a.constant(1));
      for (int d = 0; d < 2; ++d)
        if (step[d])
          offset[d] = a.add(offset[d], a.mul(set, a.constant(step[d])));
    }
  Type element = t.type.getElementType();
  Type word = b.getI32Type();
  Type result = plan.matrices == 1 ? word
                                   : LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(plan.matrices, word));
  auto shape = NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8);
  auto layout = plan.transposed ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  SmallVector<Value> elements;
  for (ArrayRef<int64_t> base : plan.groupBase) {
    SmallVector<Value> row{a.add(a.constant(base[0]), offset[0]), a.add(a.constant(base[1]), offset[1])};
    Value address = sharedAddress(b, loc, view, sharedIndex(b, loc, type, row), element);
    Value loaded = NVVM::LdMatrixOp::create(b, loc, result, address, plan.matrices, layout, shape,
                                            NVVM::LdStMatrixEltType::B16);
    for (int64_t m = 0; m < plan.matrices; ++m) {
      Value fragment = plan.matrices == 1 ? loaded : Value(LLVM::ExtractValueOp::create(b, loc, loaded, m));
      int64_t perWord = 32 / element.getIntOrFloatBitWidth();
      Value word = LLVM::BitcastOp::create(b, loc, VectorType::get({perWord}, memoryType(element)), fragment);
      for (int64_t i = 0; i < perWord; ++i)
        elements.push_back(fromMemory(b, loc, extract(b, loc, word, i), element));
    }
  }
  return fromElements(b, loc, t.vectorType, elements);
}

/// Reads a distributed tile from a shared buffer of its shape: with `ldmatrix` where its
/// fragments are the thread's registers (NVIDIA), else one vector load per group of
/// registers that sits contiguously in the buffer.
Value loadTileFromShared(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t, SharedType type,
                         Value view) {
  if (!ctx.amd)
    if (auto plan = planLdMatrix(t, type))
      return loadTileWithLdMatrix(b, loc, ctx, t, *plan, type, view);
  Type element = t.type.getElementType();
  auto coords = coordinates(b, loc, ctx, t);
  int64_t n = sharedVectorWidth(t, type);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < t.registers; r += n) {
    Value index = sharedIndex(b, loc, type, coords[r]);
    if (n == 1) {
      elements.push_back(loadShared(b, loc, view, index, element));
      continue;
    }
    Value group = vector::LoadOp::create(b, loc, VectorType::get({n}, memoryType(element)), view,
                                         ValueRange{toIndex(b, loc, index)}, /*nontemporal=*/false,
                                         llvm::Align(bytesOf(element, n)));
    for (int64_t i = 0; i < n; ++i)
      elements.push_back(fromMemory(b, loc, extract(b, loc, group, i), element));
  }
  return fromElements(b, loc, t.vectorType, elements);
}

/// Writes every register of `t` at its row-major position in a scratch view.
Value spillToScratch(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t, Value vector,
                     int64_t byteOffset = 0) {
  Value view = scratchView(b, loc, ctx, t.type.getElementType(), t.type.getNumElements(), byteOffset);
  auto coords = coordinates(b, loc, ctx, t);
  for (int64_t r = 0; r < t.registers; ++r)
    storeShared(b, loc, view, linearIndex(b, loc, coords[r], t.type.getShape()), extract(b, loc, vector, r));
  return view;
}

//===----------------------------------------------------------------------===//
// Data movement between layouts and shapes
//===----------------------------------------------------------------------===//

/// Where the element an output coordinate needs sits in the input tile.
struct Movement {
  enum class Kind { SameOrder, Broadcast, Transpose } kind;
  SmallVector<int32_t> order; // Transpose: output dim i is input dim order[i]

  /// Input coordinates (row-major linearized by the caller) for output coordinates.
  template <typename T, typename Zero>
  SmallVector<T> inputCoords(ArrayRef<T> out, ArrayRef<int64_t> inShape, Zero zero) const {
    SmallVector<T> in(inShape.size());
    switch (kind) {
    case Kind::SameOrder:
      break; // callers use the linear index directly
    case Kind::Broadcast:
      for (size_t d = 0; d < inShape.size(); ++d)
        in[d] = inShape[d] == 1 ? zero() : out[d];
      break;
    case Kind::Transpose:
      for (size_t i = 0; i < order.size(); ++i)
        in[order[i]] = out[i];
      break;
    }
    return in;
  }
};

int64_t inputLinear(const Movement &m, int64_t outLinear, ArrayRef<int64_t> outShape, ArrayRef<int64_t> inShape) {
  if (m.kind == Movement::Kind::SameOrder)
    return outLinear; // reshape, expand_dims and convert_layout keep row-major order
  SmallVector<int64_t> out = delinearize(outLinear, outShape);
  return linearOf(m.inputCoords<int64_t>(out, inShape, [] { return int64_t(0); }), inShape);
}

/// For each output register, the input register of the same thread holding its element,
/// when that is one register number for every thread; nullopt otherwise.
std::optional<SmallVector<int64_t>> registerLocalMap(const ThreadTile &in, const ThreadTile &out, const Movement &m) {
  if (in.warpSize() != out.warpSize() || in.numWarps() != out.numWarps())
    return std::nullopt;
  SmallVector<int64_t> map(out.registers, -1);
  for (int64_t warp = 0; warp < in.numWarps(); ++warp) {
    for (int64_t lane = 0; lane < in.warpSize(); ++lane) {
      llvm::DenseMap<int64_t, int64_t> held; // element -> input register
      for (int64_t r = 0; r < in.registers; ++r)
        held.try_emplace(in.elementAt(r, lane, warp), r);
      for (int64_t r = 0; r < out.registers; ++r) {
        int64_t need = inputLinear(m, out.elementAt(r, lane, warp), out.type.getShape(), in.type.getShape());
        auto it = held.find(need);
        if (it == held.end() || (map[r] >= 0 && map[r] != it->second))
          return std::nullopt;
        map[r] = it->second;
      }
    }
  }
  return map;
}

/// Moves a distributed tile into another layout/shape: a register permutation when the
/// layouts allow it, else a round trip through shared memory.
Value move(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &in, Value input,
           const ThreadTile &out, const Movement &m) {
  if (auto map = registerLocalMap(in, out, m)) {
    SmallVector<Value> elements;
    for (int64_t r : *map)
      elements.push_back(extract(b, loc, input, r));
    return fromElements(b, loc, out.vectorType, elements);
  }
  barrier(b, loc); // the scratch may still be read by an earlier movement
  if (m.kind == Movement::Kind::SameOrder && in.type.getShape() == out.type.getShape()) {
    // A layout change: the tile is staged whole, swizzled when dot operands will read it.
    Type element = in.type.getElementType();
    Attribute swizzle;
    if (isa<DotOperandLayoutAttr>(out.type.getEncoding()))
      swizzle = operandSharedLayout(b.getContext(), in.type.getShape(), element);
    auto staging = SharedType::get(b.getContext(), in.type.getShape(), element, swizzle);
    Value view = scratchView(b, loc, ctx, element, in.type.getNumElements());
    storeTileToShared(b, loc, ctx, in, input, staging, view);
    barrier(b, loc);
    return loadTileFromShared(b, loc, ctx, out, staging, view);
  }
  Value view = spillToScratch(b, loc, ctx, in, input);
  barrier(b, loc);
  auto outCoords = coordinates(b, loc, ctx, out);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < out.registers; ++r) {
    Value linear;
    if (m.kind == Movement::Kind::SameOrder) {
      linear = linearIndex(b, loc, outCoords[r], out.type.getShape());
    } else {
      auto inCoords = m.inputCoords<Value>(outCoords[r], in.type.getShape(), [&] { return i32Const(b, loc, 0); });
      linear = linearIndex(b, loc, inCoords, in.type.getShape());
    }
    elements.push_back(loadShared(b, loc, view, linear, in.type.getElementType()));
  }
  return fromElements(b, loc, out.vectorType, elements);
}

/// The shared load whose tile `op` broadcasts, when each thread reads the elements its
/// result registers repeat straight from that shared tile: the threads do not hold them
/// already, and nothing in between may write the tile.
SharedLoadOp broadcastFromShared(BroadcastOp op) {
  auto load = op.getSource().getDefiningOp<SharedLoadOp>();
  if (!load || load->getBlock() != op->getBlock() ||
      registerLocalMap(threadTile(load.getType()), threadTile(op.getType()), Movement{Movement::Kind::Broadcast, {}}))
    return {};
  for (Operation *between = load->getNextNode(); between != op.getOperation(); between = between->getNextNode())
    if (isa<SharedStoreOp, AsyncCopyOp, AsyncWaitOp, BarrierOp>(between) || between->getNumRegions())
      return {};
  return load;
}

/// Scratch bytes a movement needs (0 when it stays in registers).
int64_t movementScratch(RankedTensorType in, RankedTensorType out, const Movement &m) {
  if (registerLocalMap(threadTile(in), threadTile(out), m))
    return 0;
  return bytesOf(in.getElementType(), in.getNumElements());
}

Movement movementOf(Operation *op) {
  if (auto trans = dyn_cast<TransOp>(op))
    return {Movement::Kind::Transpose, SmallVector<int32_t>(trans.getOrder())};
  if (isa<BroadcastOp>(op))
    return {Movement::Kind::Broadcast, {}};
  return {Movement::Kind::SameOrder, {}};
}

//===----------------------------------------------------------------------===//
// Combining (reductions and scans)
//===----------------------------------------------------------------------===//

/// Distinct (non-replicated) lanes and warps along root dim `d`.
std::pair<int64_t, int64_t> distinctThreads(const DimPlacement &p) {
  int64_t lanes = std::min(p.threads, std::max<int64_t>(1, p.size / p.sizePerThread));
  int64_t warps = std::min(p.warps, std::max<int64_t>(1, p.size / (p.sizePerThread * p.threads)));
  return {lanes, warps};
}

int64_t laneStride(const BlockedGeometry &g, unsigned d) {
  int64_t below = 1;
  for (unsigned o : g.order) {
    if (o == d)
      break;
    below *= g.dims[o].threads;
  }
  return below;
}

int64_t reductionScratch(ReduceOp op) {
  ThreadTile in = threadTile(op.getSource().getType());
  const DimPlacement &p = in.geometry().dims[in.geometry().rootDim(op.getAxis())];
  int64_t warps = distinctThreads(p).second;
  if (warps == 1)
    return 0;
  int64_t outputs = in.type.getNumElements() / in.type.getDimSize(op.getAxis());
  return bytesOf(in.type.getElementType(), warps * outputs);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename Op>
struct GpuPattern : OpConversionPattern<Op> {
  GpuPattern(const TypeConverter &converter, MLIRContext *context, KernelContext &ctx, PatternBenefit benefit = 1)
      : OpConversionPattern<Op>(converter, context, benefit), ctx(ctx) {}
  KernelContext &ctx;
};

struct ProgramIdLowering : GpuPattern<ProgramIdOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(ProgramIdOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto dim = std::array{gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}[op.getAxis()];
    Value id = gpu::BlockIdOp::create(rw, op.getLoc(), dim);
    rw.replaceOpWithNewOp<arith::IndexCastUIOp>(op, rw.getI32Type(), id);
    return success();
  }
};

struct NumProgramsLowering : GpuPattern<NumProgramsOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(NumProgramsOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, ctx.gridSizes[op.getAxis()]);
    return success();
  }
};

struct ArangeLowering : GpuPattern<ArangeOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(ArangeOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    ThreadTile t = threadTile(op.getType());
    Location loc = op.getLoc();
    SmallVector<Value> elements;
    for (auto &coords : coordinates(rw, loc, ctx, t))
      elements.push_back(arith::AddIOp::create(rw, loc, coords[0], i32Const(rw, loc, op.getStart())));
    rw.replaceOp(op, fromElements(rw, loc, t.vectorType, elements));
    return success();
  }
};

struct SplatLowering : GpuPattern<SplatOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SplatOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<vector::BroadcastOp>(op, threadTile(op.getType()).vectorType, adaptor.getValue());
    return success();
  }
};

/// convert_layout, expand_dims, broadcast, reshape and trans are data movements.
template <typename Op>
struct MovementLowering : GpuPattern<Op> {
  using GpuPattern<Op>::GpuPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    ThreadTile in = threadTile(op.getSource().getType()), out = threadTile(op.getType());
    if constexpr (std::is_same_v<Op, BroadcastOp>)
      if (SharedLoadOp load = broadcastFromShared(op)) {
        rw.replaceOp(op, broadcastRead(rw, op.getLoc(), load, rw.getRemappedValue(load.getSource()), out));
        return success();
      }
    rw.replaceOp(op, move(rw, op.getLoc(), this->ctx, in, adaptor.getSource(), out, movementOf(op)));
    return success();
  }

  /// Each register of `out` read from where its element lies in the shared tile `load` reads.
  Value broadcastRead(OpBuilder &b, Location loc, SharedLoadOp load, Value view, const ThreadTile &out) const {
    SharedType type = load.getSource().getType();
    Movement m{Movement::Kind::Broadcast, {}};
    SmallVector<Value> elements;
    for (const SmallVector<Value> &coords : coordinates(b, loc, this->ctx, out)) {
      SmallVector<Value> in = m.inputCoords<Value>(coords, type.getShape(), [&] { return i32Const(b, loc, 0); });
      elements.push_back(loadShared(b, loc, view, sharedIndex(b, loc, type, in), type.getElementType()));
    }
    return fromElements(b, loc, out.vectorType, elements);
  }
};

/// Per-register global address of `base[offsets[r]]`.
Value globalAddress(OpBuilder &b, Location loc, Value base, Type element, Value offset) {
  return LLVM::GEPOp::create(b, loc, base.getType(), memoryType(element), base, ValueRange{offset});
}

/// How many consecutive registers of `t` one vector access can move: they must hold
/// consecutive elements of the last dimension (which the layout keeps fastest, without
/// wrapping) at consecutive offsets, within 128 bits of `element`.
int64_t vectorWidth(const ThreadTile &t, Contiguity offsets, Type element) {
  // Sub-byte elements (fp4, fp6) each occupy a byte in memory, but an LLVM vector of them is
  // bit-packed: they move one by one.
  if (!t.blocked || memoryType(element).getIntOrFloatBitWidth() < 8)
    return 1;
  const BlockedGeometry &g = t.geometry();
  unsigned last = g.rootDim(t.type.getRank() - 1);
  const DimPlacement &p = g.dims[last];
  // The fastest dim the tile keeps (a slice drops its reduced dims).
  const unsigned *fastest = llvm::find_if(g.order, [&](unsigned d) { return !g.isDropped(d); });
  if (fastest == g.order.end() || *fastest != last || p.size < p.blockExtent())
    return 1;
  int64_t bits = memoryType(element).getIntOrFloatBitWidth();
  int64_t n = std::min({p.sizePerThread, offsets.contiguous, 128 / bits});
  return n > 1 ? int64_t(llvm::bit_floor(uint64_t(n))) : 1;
}

/// Whether `address` is aligned for an access of `bytes`.
Value isAligned(OpBuilder &b, Location loc, Value address, int64_t bytes) {
  Value asInt = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), address);
  Value low = arith::AndIOp::create(b, loc, asInt, arith::ConstantIntOp::create(b, loc, bytes - 1, 64));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, low, arith::ConstantIntOp::create(b, loc, 0, 64));
}

/// Moves a thread's registers in groups of `n`. For each group, `groupFastPath(r)` emits what
/// the group needs and, when n > 1, returns the run-time condition (all of it active and
/// aligned) under which `vectorAccess` moves it at once; otherwise `elementAccess` moves it
/// register by register. Both paths compute the same values, so the check only picks the
/// faster one. Returns what the accesses return (the loaded registers; nothing for stores).
SmallVector<Value> accessInGroups(OpBuilder &b, Location loc, int64_t registers, int64_t n,
                                  function_ref<Value(int64_t)> groupFastPath,
                                  function_ref<SmallVector<Value>(OpBuilder &, int64_t)> vectorAccess,
                                  function_ref<SmallVector<Value>(OpBuilder &, int64_t)> elementAccess) {
  SmallVector<Value> result;
  for (int64_t r = 0; r < registers; r += n) {
    Value fast = groupFastPath(r);
    if (n == 1) {
      llvm::append_range(result, elementAccess(b, r));
      continue;
    }
    auto ifOp = scf::IfOp::create(
        b, loc, fast, [&](OpBuilder &tb, Location l) { scf::YieldOp::create(tb, l, vectorAccess(tb, r)); },
        [&](OpBuilder &eb, Location l) {
          SmallVector<Value> values;
          for (int64_t i = 0; i < n; ++i)
            llvm::append_range(values, elementAccess(eb, r + i));
          scf::YieldOp::create(eb, l, values);
        });
    llvm::append_range(result, ifOp.getResults());
  }
  return result;
}

struct AtomicAddLowering : GpuPattern<AtomicAddOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(AtomicAddOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(op.getType());
    Type element = t.type.getElementType();
    auto kind = isa<FloatType>(element) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
    SmallVector<Value> elements;
    bool replicated = false;
    for (int64_t r = 0; r < t.registers; ++r) {
      Value mask = adaptor.getMask() ? extract(rw, loc, adaptor.getMask(), r) : Value();
      // A replicated element is added once, by its owner.
      Value owner = ownerMask(rw, loc, ctx, t, r);
      replicated |= bool(owner);
      elements.push_back(guarded(
          rw, loc, andOf(rw, loc, mask, owner),
          [&](OpBuilder &b) -> Value {
            Value address = globalAddress(b, loc, adaptor.getBase(), element, extract(b, loc, adaptor.getOffsets(), r));
            return LLVM::AtomicRMWOp::create(b, loc, kind, address, extract(b, loc, adaptor.getValue(), r),
                                             LLVM::AtomicOrdering::monotonic);
          },
          [&](OpBuilder &b) { return zeroOf(b, loc, element); }));
    }
    Value result = fromElements(rw, loc, t.vectorType, elements);
    if (replicated) {
      // Replicas learn the previous values from the owners through shared memory.
      barrier(rw, loc);
      Value view = scratchView(rw, loc, ctx, element, t.type.getNumElements());
      auto coords = coordinates(rw, loc, ctx, t);
      for (int64_t r = 0; r < t.registers; ++r)
        guardedEffect(rw, loc, ownerMask(rw, loc, ctx, t, r), [&](OpBuilder &b) {
          storeShared(b, loc, view, linearIndex(b, loc, coords[r], t.type.getShape()), elements[r]);
        });
      barrier(rw, loc);
      SmallVector<Value> shared;
      for (int64_t r = 0; r < t.registers; ++r)
        shared.push_back(loadShared(rw, loc, view, linearIndex(rw, loc, coords[r], t.type.getShape()), element));
      result = fromElements(rw, loc, t.vectorType, shared);
    }
    rw.replaceOp(op, result);
    return success();
  }
};

/// A buffer view is {base, element count}; on AMD the base is a raw buffer resource whose
/// hardware range check covers the same bytes, elsewhere the global pointer.
struct MakeBufferLowering : GpuPattern<MakeBufferOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(MakeBufferOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = cast<LLVM::LLVMStructType>(getTypeConverter()->convertType(op.getType()));
    Value base = adaptor.getBase();
    if (ctx.amd) {
      Value count = arith::ExtUIOp::create(rw, loc, rw.getI64Type(), adaptor.getNumElements());
      Value bytes = arith::MulIOp::create(rw, loc, count,
                                          arith::ConstantIntOp::create(rw, loc, bytesOf(op.getType().getElementType(), 1), 64));
      Value stride = arith::ConstantIntOp::create(rw, loc, 0, 16);
      base = ROCDL::MakeBufferRsrcOp::create(rw, loc, type.getBody()[0], base, stride, bytes,
                                             i32Const(rw, loc, kCdnaBufferFlags));
    }
    Value view = LLVM::PoisonOp::create(rw, loc, type);
    view = LLVM::InsertValueOp::create(rw, loc, view, base, ArrayRef<int64_t>{0});
    rw.replaceOpWithNewOp<LLVM::InsertValueOp>(op, view, adaptor.getNumElements(), ArrayRef<int64_t>{1});
    return success();
  }
};

Value bufferBase(OpBuilder &b, Location loc, Value view) {
  return LLVM::ExtractValueOp::create(b, loc, view, ArrayRef<int64_t>{0});
}

Value bufferCount(OpBuilder &b, Location loc, Value view) {
  return LLVM::ExtractValueOp::create(b, loc, view, ArrayRef<int64_t>{1});
}

/// How one op reaches global memory: through a pointer, where the mask alone decides which
/// elements are accessed (offsets are signed), or through a buffer view, where an element
/// is accessed only if its offset is also below the view's count (unsigned). On AMD a view
/// is a raw buffer resource whose hardware range check reads 0 for, and drops writes to,
/// what lies outside it.
class GlobalAccess {
public:
  static GlobalAccess pointer(const KernelContext &ctx, Value pointer, Type element) {
    return GlobalAccess(ctx, pointer, Value(), element);
  }
  static GlobalAccess view(OpBuilder &b, Location loc, const KernelContext &ctx, Value view, Type element) {
    return GlobalAccess(ctx, bufferBase(b, loc, view), bufferCount(b, loc, view), element);
  }

  bool isView() const { return bool(count); }

  /// Whether the element at `offset` whose mask is `mask` (null: set) is accessed; null
  /// when it always is.
  Value elementActive(OpBuilder &b, Location loc, Value offset, Value mask) const {
    if (!isView())
      return mask;
    return andOf(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, offset, count), mask);
  }

  /// For `n` consecutive offsets from `first`: whether all are in range (null for pointers
  /// and for views of a pointer's 2 GiB promise, where every active access is in range).
  /// The last one must be below the count and the run must not wrap around 2^32.
  Value groupInRange(OpBuilder &b, Location loc, Value first, int64_t n) const {
    if (!isView() || promised)
      return {};
    Value last = arith::AddIOp::create(b, loc, first, i32Const(b, loc, n - 1));
    return andOf(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, last, first),
                 arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, last, count));
  }

  /// What is known before run time: the base address's alignment in bytes (0: only the
  /// element's) and the divisibility of the offsets (from a kernel's specialization).
  /// Also whether the view stands for a pointer's 2 GiB promise (tile-use-buffer-views), and
  /// along how many consecutive elements the mask is known not to change.
  GlobalAccess &assume(int64_t baseAlignment, const Contiguity &offsets, bool promised, int64_t maskConstancy) {
    this->baseAlignment = baseAlignment;
    this->offsets = offsets;
    this->promised = promised;
    this->maskConstancy = maskConstancy;
    return *this;
  }

  /// Whether a group of `n` (aligned to n) is either all active or all masked off, and
  /// needs no run-time check beyond that to be moved with one access: then its element-wise
  /// path only ever sees masked-off groups.
  bool groupsAllOrNothing(int64_t n) const {
    return maskConstancy >= n && (!isView() || promised) && alignedAtCompileTime(n);
  }

  /// Whether a group of `n` elements from `first` is aligned for one access: NVIDIA faults on
  /// misaligned vectors; CDNA buffer accesses only need the offset aligned. Null when that is
  /// known at compile time (the group starts at a multiple of `n` of an aligned base).
  Value groupAligned(OpBuilder &b, Location loc, Value first, int64_t n) const {
    if (alignedAtCompileTime(n))
      return {};
    if (isView() && ctx.amd)
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                   arith::RemUIOp::create(b, loc, first, i32Const(b, loc, n)), i32Const(b, loc, 0));
    return isAligned(b, loc, address(b, loc, first), bytesOf(element, n));
  }

  /// Whether `n` elements from `first` are all in range and aligned for one access.
  Value groupReady(OpBuilder &b, Location loc, Value first, int64_t n) const {
    return andOf(b, loc, groupInRange(b, loc, first, n), groupAligned(b, loc, first, n));
  }

  /// The global address of the element at `offset` (not for AMD views, which go through
  /// their resource).
  Value address(OpBuilder &b, Location loc, Value offset) const {
    if (isView())
      offset = arith::ExtUIOp::create(b, loc, b.getI64Type(), offset);
    return globalAddress(b, loc, base, element, offset);
  }

  /// The element at `offset` if `active` (null: always), else `otherwise()`.
  Value loadElement(OpBuilder &b, Location loc, Value offset, Value active,
                    function_ref<Value(OpBuilder &)> otherwise) const {
    Type memory = memoryType(element);
    if (isView() && ctx.amd) // inactive elements read 0 in hardware (views have no `other`)
      return fromMemory(b, loc, bufferLoad(b, loc, memory, amdBufferOffset(b, loc, offset, active)), element);
    return guarded(
        b, loc, active,
        [&](OpBuilder &tb) {
          return fromMemory(tb, loc, LLVM::LoadOp::create(tb, loc, memory, address(tb, loc, offset)), element);
        },
        otherwise);
  }

  /// `n` consecutive elements from `first`, known active, in range and aligned, with one
  /// access; in memory types.
  Value loadGroup(OpBuilder &b, Location loc, Value first, int64_t n) const {
    VectorType type = VectorType::get({n}, memoryType(element));
    if (isView() && ctx.amd) {
      Value words = bufferLoad(b, loc, bufferWords(b, n), amdBufferOffset(b, loc, first, Value()));
      return LLVM::BitcastOp::create(b, loc, type, words);
    }
    return LLVM::LoadOp::create(b, loc, type, address(b, loc, first), bytesOf(element, n));
  }

  /// One load-to-LDS instruction: `bytes` from `first` in each lane, written at
  /// `ldsRun` + lane * bytes. Through a view, a lane that is not `ready` (null: every lane
  /// is) writes zeros; through a pointer every lane must be ready.
  void loadToLds(OpBuilder &b, Location loc, Value first, Value ready, Value ldsRun, int64_t bytes) const {
    if (isView()) {
      ROCDL::RawPtrBufferLoadLdsOp::create(b, loc, base, ldsRun, i32Const(b, loc, bytes),
                                           amdBufferOffset(b, loc, first, ready), zero(b, loc), zero(b, loc),
                                           zero(b, loc), nullptr, nullptr, nullptr);
      return;
    }
    ROCDL::GlobalLoadLDSOp::create(b, loc, address(b, loc, first), ldsRun, bytes, 0, 0, nullptr, nullptr, nullptr);
  }

  /// `n` consecutive elements from `first` (aligned, in range if active) if `active` (null:
  /// always), else zeros; in memory types. No branch: AMD views read an out-of-range offset
  /// as zeros, NVIDIA predicates the load.
  Value loadGroupIf(OpBuilder &b, Location loc, Value first, int64_t n, Value active) const {
    VectorType type = VectorType::get({n}, memoryType(element));
    if (!active)
      return loadGroup(b, loc, first, n);
    if (isView() && ctx.amd) {
      Value words = bufferLoad(b, loc, bufferWords(b, n), amdBufferOffset(b, loc, first, active));
      return LLVM::BitcastOp::create(b, loc, type, words);
    }
    int64_t words = bytesOf(element, n) / 4;
    if (!ctx.amd && bytesOf(element, n) % 4 == 0 && words <= 4) {
      std::string outputs, constraints;
      for (int64_t i = 0; i < words; ++i) {
        outputs += (i ? ", $" : "$") + std::to_string(i);
        constraints += "=r,";
      }
      std::string asmText = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(words + 1) + ", 0; ";
      for (int64_t i = 0; i < words; ++i)
        asmText += "mov.b32 $" + std::to_string(i) + ", 0; ";
      asmText += "@p ld.global" + std::string(words > 1 ? ".v" + std::to_string(words) : "") + ".b32 " +
                 (words > 1 ? "{" + outputs + "}" : outputs) + ", [$" + std::to_string(words) + "]; }";
      SmallVector<Type> fields(words, b.getI32Type());
      Type result = words == 1 ? Type(b.getI32Type()) : LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
      Value asmOp = predicatedAsm(b, loc, result, {address(b, loc, first)}, active, asmText, constraints + "l,r");
      Value vector = LLVM::PoisonOp::create(b, loc, VectorType::get({words}, b.getI32Type()));
      for (int64_t i = 0; i < words; ++i) {
        Value word = words == 1 ? asmOp : LLVM::ExtractValueOp::create(b, loc, asmOp, ArrayRef<int64_t>{i});
        vector = LLVM::InsertElementOp::create(b, loc, vector, word, i32Const(b, loc, i));
      }
      return LLVM::BitcastOp::create(b, loc, type, vector);
    }
    auto ifOp = scf::IfOp::create(
        b, loc, active, [&](OpBuilder &tb, Location l) { scf::YieldOp::create(tb, l, loadGroup(tb, l, first, n)); },
        [&](OpBuilder &eb, Location l) {
          scf::YieldOp::create(eb, l, Value(arith::ConstantOp::create(eb, l, eb.getZeroAttr(type))));
        });
    return ifOp.getResult(0);
  }

  /// Writes a vector of consecutive elements from `first` (aligned, in range if active) if
  /// `active` (null: always), without a branch where the target allows (as loadGroupIf).
  void storeGroupIf(OpBuilder &b, Location loc, Value first, Value vector, Value active) const {
    int64_t n = cast<VectorType>(vector.getType()).getNumElements();
    if (!active)
      return storeGroup(b, loc, first, vector);
    if (isView() && ctx.amd) {
      Value words = LLVM::BitcastOp::create(b, loc, bufferWords(b, n), vector);
      ROCDL::RawPtrBufferStoreOp::create(b, loc, words, base, amdBufferOffset(b, loc, first, active), zero(b, loc),
                                         zero(b, loc), nullptr, nullptr, nullptr);
      return;
    }
    int64_t words = bytesOf(element, n) / 4;
    if (!ctx.amd && bytesOf(element, n) % 4 == 0 && words <= 4) {
      Value asWords = LLVM::BitcastOp::create(b, loc, VectorType::get({words}, b.getI32Type()), vector);
      SmallVector<Value> operands{address(b, loc, first)};
      std::string data, constraints = "l,";
      for (int64_t i = 0; i < words; ++i) {
        operands.push_back(LLVM::ExtractElementOp::create(b, loc, asWords, i32Const(b, loc, i)));
        data += (i ? ", $" : "$") + std::to_string(i + 1);
        constraints += "r,";
      }
      std::string asmText = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(words + 1) + ", 0; @p st.global" +
                            std::string(words > 1 ? ".v" + std::to_string(words) : "") + ".b32 [$0], " +
                            (words > 1 ? "{" + data + "}" : data) + "; }";
      predicatedAsm(b, loc, Type(), operands, active, asmText, constraints + "r");
      return;
    }
    scf::IfOp::create(b, loc, active, [&](OpBuilder &tb, Location l) {
      storeGroup(tb, l, first, vector);
      scf::YieldOp::create(tb, l);
    });
  }

  /// Writes `value` (in its memory type) at `offset` if `active` (null: always).
  void storeElement(OpBuilder &b, Location loc, Value offset, Value active, Value value) const {
    if (isView() && ctx.amd) { // inactive elements are dropped in hardware
      ROCDL::RawPtrBufferStoreOp::create(b, loc, value, base, amdBufferOffset(b, loc, offset, active), zero(b, loc),
                                         zero(b, loc), nullptr, nullptr, nullptr);
      return;
    }
    guardedEffect(b, loc, active,
                  [&](OpBuilder &tb) { LLVM::StoreOp::create(tb, loc, value, address(tb, loc, offset)); });
  }

  /// Writes a vector of consecutive elements from `first`, known active, in range and aligned.
  void storeGroup(OpBuilder &b, Location loc, Value first, Value vector) const {
    int64_t n = cast<VectorType>(vector.getType()).getNumElements();
    if (isView() && ctx.amd) {
      Value words = LLVM::BitcastOp::create(b, loc, bufferWords(b, n), vector);
      ROCDL::RawPtrBufferStoreOp::create(b, loc, words, base, amdBufferOffset(b, loc, first, Value()), zero(b, loc),
                                         zero(b, loc), nullptr, nullptr, nullptr);
      return;
    }
    LLVM::StoreOp::create(b, loc, vector, address(b, loc, first), bytesOf(element, n));
  }

private:
  GlobalAccess(const KernelContext &ctx, Value base, Value count, Type element)
      : ctx(ctx), base(base), count(count), element(element) {}

  static Value zero(OpBuilder &b, Location loc) { return i32Const(b, loc, 0); }

  /// PTX `text` whose last operand is `predicate` (as a 32-bit integer); addresses as 64-bit
  /// integers. Marked as having side effects: it orders with the thread's other accesses.
  static Value predicatedAsm(OpBuilder &b, Location loc, Type result, SmallVector<Value> operands, Value predicate,
                             StringRef text, StringRef constraints) {
    operands[0] = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), operands[0]);
    operands.push_back(arith::ExtUIOp::create(b, loc, b.getI32Type(), predicate));
    auto op = LLVM::InlineAsmOp::create(b, loc, result ? TypeRange{result} : TypeRange{}, operands, text, constraints,
                                        /*has_side_effects=*/true, /*is_align_stack=*/false,
                                        LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
    return result ? op.getResult(0) : Value();
  }

  /// Whether groups of `n` (starting at multiples of n) are known aligned for one access.
  bool alignedAtCompileTime(int64_t n) const {
    int64_t startDivisibility = divisibilityAt(offsets, n);
    if (isView() && ctx.amd)
      return startDivisibility % n == 0;
    return std::min(baseAlignment, startDivisibility * bytesOf(element, 1)) >= bytesOf(element, n);
  }

  /// Byte offset into an AMD buffer resource: inactive elements (`active` false) get an
  /// offset past any buffer, which the hardware reads as 0 and never writes.
  Value amdBufferOffset(OpBuilder &b, Location loc, Value offset, Value active) const {
    Value bytes = arith::MulIOp::create(b, loc, offset, i32Const(b, loc, bytesOf(element, 1)));
    if (!active)
      return bytes;
    return arith::SelectOp::create(b, loc, active, bytes, i32Const(b, loc, int32_t(0x80000000u)));
  }

  /// The type a group of `n` elements moves as through a buffer resource: 32-bit words where
  /// it fills them (the backend cannot split buffer accesses of 16 x i8, for instance).
  /// The type a buffer access of `n` elements moves: i8 or i16 below a dword (the AMDGPU
  /// backend cannot select buffer loads of <2 x i8> and the like), else dwords.
  Type bufferWords(OpBuilder &b, int64_t n) const {
    int64_t bytes = bytesOf(element, n);
    if (bytes == 1 || bytes == 2)
      return b.getIntegerType(8 * bytes);
    if (bytes % 4)
      return VectorType::get({n}, memoryType(element));
    return bytes == 4 ? Type(b.getI32Type()) : Type(VectorType::get({bytes / 4}, b.getI32Type()));
  }

  Value bufferLoad(OpBuilder &b, Location loc, Type type, Value byteOffset) const {
    return ROCDL::RawPtrBufferLoadOp::create(b, loc, type, base, byteOffset, zero(b, loc), zero(b, loc), nullptr,
                                             nullptr, nullptr);
  }

  const KernelContext &ctx;
  Value base;  // a global pointer; for a view, its base (AMD: its buffer resource)
  Value count; // a view's element count; null for pointers
  Type element;
  int64_t baseAlignment = 0; // bytes known before run time (0: none beyond the element's)
  Contiguity offsets;        // of the offsets the access is made with
  bool promised = false;     // a view of a pointer's 2 GiB promise
  int64_t maskConstancy = 1; // the mask's constant runs (unmasked: any length)
};

/// The alignment in bytes a pointer (or a view's pointer) of the original IR is known to
/// have from the kernel's specialization; 0 when nothing is known.
int64_t pointerAlignment(const KernelContext &ctx, Value base) {
  if (auto view = base.getDefiningOp<MakeBufferOp>())
    base = view.getBase();
  auto it = ctx.argumentDivisibility.find(base);
  return it == ctx.argumentDivisibility.end() ? 0 : it->second;
}

/// The access a global memory op makes: through a buffer view or a pointer (by the type of
/// its original `base`, converted to `converted`), with what is known before run time about
/// the base's alignment and the divisibility of `offsets`.
GlobalAccess globalAccess(OpBuilder &b, Location loc, const KernelContext &ctx, Value base, Value converted,
                          Value offsets, Type element, Value mask = {}) {
  GlobalAccess access = isa<BufferType>(base.getType()) ? GlobalAccess::view(b, loc, ctx, converted, element)
                                                        : GlobalAccess::pointer(ctx, converted, element);
  auto view = base.getDefiningOp<MakeBufferOp>();
  bool promised = view && view->hasAttr(TileDialect::kWithin2GiBAttrName);
  int64_t maskConstancy = mask ? contiguityOf(ctx, mask).constant : kMaxDivisibility;
  access.assume(pointerAlignment(ctx, base), contiguityOf(ctx, offsets), promised, maskConstancy);
  return access;
}

/// The registers of a loaded vector, in the tile's element type.
SmallVector<Value> unpackLoaded(OpBuilder &b, Location loc, Value vector, Type element) {
  SmallVector<Value> values;
  for (int64_t i = 0; i < cast<VectorType>(vector.getType()).getNumElements(); ++i)
    values.push_back(fromMemory(b, loc, extract(b, loc, vector, i), element));
  return values;
}

/// Reads a distributed tile through `access`: each group of `n` registers with consecutive
/// offsets that is active, in range and aligned with one access, other registers one by one
/// (`otherwise(b, r)` gives register `r`'s value where it is not accessed).
Value loadTileFromGlobal(OpBuilder &b, Location loc, const ThreadTile &t, int64_t n, const GlobalAccess &access,
                         Value offsets, Value mask, function_ref<Value(OpBuilder &, int64_t)> otherwise) {
  Type element = t.type.getElementType();
  if (n > 1 && access.groupsAllOrNothing(n)) { // each group whole or not at all, without branches
    SmallVector<Value> elements;
    for (int64_t r = 0; r < t.registers; r += n) {
      Value active = mask ? extract(b, loc, mask, r) : Value();
      auto loaded = unpackLoaded(b, loc, access.loadGroupIf(b, loc, extract(b, loc, offsets, r), n, active), element);
      for (int64_t i = 0; i < n; ++i) {
        // An inactive group reads zeros (loadGroupIf), so a zero `other` needs no select.
        Value other = otherwise(b, r + i);
        bool zero = matchPattern(other, m_Zero()) || matchPattern(other, m_PosZeroFloat());
        elements.push_back(active && !zero ? Value(arith::SelectOp::create(b, loc, active, loaded[i], other))
                                           : loaded[i]);
      }
    }
    return fromElements(b, loc, t.vectorType, elements);
  }
  SmallVector<Value> offset(t.registers), masks(t.registers);
  auto elements = accessInGroups(
      b, loc, t.registers, n,
      [&](int64_t r) -> Value {
        Value fast;
        for (int64_t i = r; i < r + n; ++i) {
          offset[i] = extract(b, loc, offsets, i);
          masks[i] = mask ? extract(b, loc, mask, i) : Value();
          fast = andOf(b, loc, fast, masks[i]);
        }
        return n == 1 ? Value() : andOf(b, loc, fast, access.groupReady(b, loc, offset[r], n));
      },
      [&](OpBuilder &vb, int64_t r) { return unpackLoaded(vb, loc, access.loadGroup(vb, loc, offset[r], n), element); },
      [&](OpBuilder &eb, int64_t r) {
        Value active = access.elementActive(eb, loc, offset[r], masks[r]);
        return SmallVector<Value>{
            access.loadElement(eb, loc, offset[r], active, [&](OpBuilder &ob) { return otherwise(ob, r); })};
      });
  return fromElements(b, loc, t.vectorType, elements);
}

/// Writes a distributed tile through `access`, grouped as loadTileFromGlobal reads. Each
/// replicated element is written once, by its owner.
void storeTileToGlobal(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &t, int64_t n,
                       const GlobalAccess &access, Value offsets, Value mask, Value value) {
  Type memory = memoryType(t.type.getElementType());
  SmallVector<Value> offset(t.registers), masks(t.registers), values(t.registers);
  bool replicated = bool(ownerMask(b, loc, ctx, t, 0)); // then masks are not uniform over groups
  if (n > 1 && !replicated && access.groupsAllOrNothing(n)) { // each group whole or not at all
    for (int64_t r = 0; r < t.registers; r += n) {
      SmallVector<Value> group;
      for (int64_t i = 0; i < n; ++i)
        group.push_back(toMemory(b, loc, extract(b, loc, value, r + i)));
      access.storeGroupIf(b, loc, extract(b, loc, offsets, r),
                          fromElements(b, loc, VectorType::get({n}, memory), group),
                          mask ? extract(b, loc, mask, r) : Value());
    }
    return;
  }
  accessInGroups(
      b, loc, t.registers, n,
      [&](int64_t r) -> Value {
        Value fast;
        for (int64_t i = r; i < r + n; ++i) {
          offset[i] = extract(b, loc, offsets, i);
          masks[i] = andOf(b, loc, mask ? extract(b, loc, mask, i) : Value(), ownerMask(b, loc, ctx, t, i));
          values[i] = toMemory(b, loc, extract(b, loc, value, i));
          fast = andOf(b, loc, fast, masks[i]);
        }
        return n == 1 ? Value() : andOf(b, loc, fast, access.groupReady(b, loc, offset[r], n));
      },
      [&](OpBuilder &vb, int64_t r) {
        access.storeGroup(vb, loc, offset[r],
                          fromElements(vb, loc, VectorType::get({n}, memory), ArrayRef(values).slice(r, n)));
        return SmallVector<Value>{};
      },
      [&](OpBuilder &eb, int64_t r) {
        access.storeElement(eb, loc, offset[r], access.elementActive(eb, loc, offset[r], masks[r]), values[r]);
        return SmallVector<Value>{};
      });
}

struct LoadLowering : GpuPattern<LoadOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(LoadOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(op.getType());
    Type element = t.type.getElementType();
    Value other = adaptor.getOther();
    auto otherwise = [&](OpBuilder &b, int64_t r) {
      if (!other)
        return zeroOf(b, loc, element);
      return isa<VectorType>(other.getType()) ? extract(b, loc, other, r) : other;
    };
    int64_t n = vectorWidth(t, contiguityOf(ctx, op.getOffsets()), element);
    GlobalAccess access =
        globalAccess(rw, loc, ctx, op.getBase(), adaptor.getBase(), op.getOffsets(), element, op.getMask());
    rw.replaceOp(op, loadTileFromGlobal(rw, loc, t, n, access,
                                        adaptor.getOffsets(), adaptor.getMask(), otherwise));
    return success();
  }
};

struct BufferLoadLowering : GpuPattern<BufferLoadOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(BufferLoadOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(op.getType());
    Type element = t.type.getElementType();
    int64_t n = vectorWidth(t, contiguityOf(ctx, op.getOffsets()), element);
    GlobalAccess access =
        globalAccess(rw, loc, ctx, op.getBuffer(), adaptor.getBuffer(), op.getOffsets(), element, op.getMask());
    rw.replaceOp(op, loadTileFromGlobal(rw, loc, t, n, access,
                                        adaptor.getOffsets(), adaptor.getMask(),
                                        [&](OpBuilder &b, int64_t) { return zeroOf(b, loc, element); }));
    return success();
  }
};

struct StoreLowering : GpuPattern<StoreOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(StoreOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    ThreadTile t = threadTile(op.getValue().getType());
    Type element = t.type.getElementType();
    int64_t n = vectorWidth(t, contiguityOf(ctx, op.getOffsets()), element);
    GlobalAccess access = globalAccess(rw, op.getLoc(), ctx, op.getBase(), adaptor.getBase(), op.getOffsets(),
                                       element, op.getMask());
    storeTileToGlobal(rw, op.getLoc(), ctx, t, n, access,
                      adaptor.getOffsets(), adaptor.getMask(), adaptor.getValue());
    rw.eraseOp(op);
    return success();
  }
};

struct BufferStoreLowering : GpuPattern<BufferStoreOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(BufferStoreOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(op.getValue().getType());
    Type element = t.type.getElementType();
    int64_t n = vectorWidth(t, contiguityOf(ctx, op.getOffsets()), element);
    GlobalAccess access =
        globalAccess(rw, loc, ctx, op.getBuffer(), adaptor.getBuffer(), op.getOffsets(), element, op.getMask());
    storeTileToGlobal(rw, loc, ctx, t, n, access,
                      adaptor.getOffsets(), adaptor.getMask(), adaptor.getValue());
    rw.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

struct SharedAllocLowering : GpuPattern<SharedAllocOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SharedAllocOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    Value buffer = ctx.sharedBuffers.lookup(op);
    rw.replaceOpWithNewOp<memref::CastOp>(op, getTypeConverter()->convertType(op.getType()), buffer);
    return success();
  }
};

struct SharedStoreLowering : GpuPattern<SharedStoreOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SharedStoreOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    storeTileToShared(rw, op.getLoc(), ctx, threadTile(op.getValue().getType()), adaptor.getValue(),
                      op.getDest().getType(), adaptor.getDest());
    fenceForWarpgroupDots(rw, op.getLoc(), ctx);
    rw.eraseOp(op);
    return success();
  }
};

struct SharedLoadLowering : GpuPattern<SharedLoadOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SharedLoadOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, loadTileFromShared(rw, op.getLoc(), ctx, threadTile(op.getType()), op.getSource().getType(),
                                        adaptor.getSource()));
    return success();
  }
};

/// Entry `index` of a multi-buffer: the same allocation at offset + index * entry elements.
struct SharedSliceLowering : GpuPattern<SharedSliceOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SharedSliceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    int64_t entry = sharedElements(op.getType());
    Value base = memref::ExtractStridedMetadataOp::create(rw, loc, adaptor.getSource()).getOffset();
    Value start = arith::AddIOp::create(
        rw, loc, base, arith::MulIOp::create(rw, loc, toIndex(rw, loc, adaptor.getIndex()), indexConst(rw, loc, entry)));
    rw.replaceOpWithNewOp<memref::ReinterpretCastOp>(op, resultType, adaptor.getSource(), OpFoldResult(start),
                                                     ArrayRef<OpFoldResult>{rw.getIndexAttr(entry)},
                                                     ArrayRef<OpFoldResult>{rw.getIndexAttr(1)});
    return success();
  }
};

/// The load-to-LDS plan for an AMD async copy, when its layouts allow one (DirectToLds.h):
/// a row-major shared tile without padding, a swizzle (if any) on whole lane parts, and
/// offset groups of at least a dword.
std::optional<std::pair<direct_lds::CopyShape, direct_lds::Plan>> directCopyPlan(const KernelContext &ctx,
                                                                                 AsyncCopyOp op) {
  auto offsetsType = cast<RankedTensorType>(op.getOffsets().getType());
  SharedType dest = op.getDest().getType();
  std::optional<ThreadTile> t = maybeThreadTile(offsetsType);
  if (!ctx.directLdsBytes || !t || !t->blocked || dest.getRank() != 2 || dest.getShape() != offsetsType.getShape())
    return std::nullopt;
  auto layout = dyn_cast_or_null<SharedLayoutAttr>(dest.getEncoding());
  if (layout && (layout.getPadding() || layout.getOrder()[0] != 1))
    return std::nullopt;
  Type element = dest.getElementType();
  direct_lds::CopyShape shape{t->warpSize(), t->numWarps(), t->registers, bytesOf(element, 1),
                              vectorWidth(*t, contiguityOf(ctx, op.getOffsets()), element), dest.getDimSize(1)};
  if (layout)
    std::tie(shape.vec, shape.perPhase, shape.maxPhase) =
        std::make_tuple(layout.getVec(), layout.getPerPhase(), layout.getMaxPhase());
  auto ldsOffset = [&](int64_t reg, int64_t lane, int64_t warp) {
    return sharedOffset(dest, delinearize(t->elementAt(reg, lane, warp), dest.getShape()));
  };
  for (int64_t bytes = ctx.directLdsBytes; bytes >= 4; bytes /= 4)
    if (auto plan = direct_lds::planCopy(shape, bytes, ldsOffset))
      return std::make_pair(shape, *plan);
  return std::nullopt;
}

void planDirectCopies(Operation *root, KernelContext &ctx) {
  root->walk([&](AsyncCopyOp op) {
    if (auto plan = directCopyPlan(ctx, op)) {
      int64_t instructions = plan->second.instructions();
      ctx.fewestDirectInstructions = ctx.directCopies.empty() ? instructions
                                                              : std::min(ctx.fewestDirectInstructions, instructions);
      ctx.directCopies[op] = *plan;
    }
  });
}

/// An async copy with load-to-LDS instructions. Per register group and part, each lane
/// fetches the offset (and the mask bits) of the group that belongs at its slot of the
/// wave's LDS run from the lane that holds it, then the wave issues one instruction. A
/// wave in which some lane's part is partly masked, out of range or misaligned (or, through
/// a pointer, masked at all) copies that slot element by element instead.
void copyDirect(OpBuilder &b, Location loc, const KernelContext &ctx, const direct_lds::CopyShape &shape,
                const direct_lds::Plan &plan, const GlobalAccess &access, Value offsets, Value mask,
                SharedType destType, Value dest) {
  Type element = destType.getElementType();
  IRArith a{b, loc};
  auto fromLane = [&](Value value, Value lane) -> Value {
    if (!plan.permuted)
      return value;
    return ROCDL::DsBpermuteOp::create(b, loc, b.getI32Type(), a.mul(lane, a.constant(4)), value);
  };
  Value notSet = arith::ConstantIntOp::create(b, loc, 0, 1);
  int64_t partMask = (int64_t(1) << plan.laneElements) - 1;
  // Each lane's run known before run time to be aligned and masked whole: one instruction,
  // masked-off lanes (through a view) writing zeros, without the wave's check and fallback.
  // Only for 16-byte lanes: with 4-byte lanes (CDNA3) a copy issues four times as many
  // instructions, and without the branches between them the backend keeps each one's LDS
  // address in its own SGPR (gemm_a8w8 on gfx942 then spilled 28 SGPRs).
  bool wholeRuns = bytesOf(element, plan.laneElements) == 16 && access.groupsAllOrNothing(plan.laneElements) &&
                   (!mask || access.isView());
  for (int64_t group = 0; group < plan.groups(); ++group) {
    int64_t first = group * shape.groupElements;
    Value offset = extract(b, loc, offsets, first);
    Value bits; // the group's mask, bit i for register first + i
    if (mask)
      for (int64_t i = 0; i < shape.groupElements; ++i) {
        Value bit = arith::ExtUIOp::create(b, loc, b.getI32Type(), extract(b, loc, mask, first + i));
        bit = arith::ShLIOp::create(b, loc, bit, a.constant(i));
        bits = bits ? Value(arith::OrIOp::create(b, loc, bits, bit)) : bit;
      }
    for (int64_t instruction = 0; instruction < plan.instructionsPerGroup; ++instruction) {
      direct_lds::Slot<Value> slot = direct_lds::slotWith(a, shape, plan, ctx.lane, ctx.warp, group, instruction);
      Value partStart = a.mul(slot.part, a.constant(plan.laneElements));
      Value start = a.add(fromLane(offset, slot.owner), partStart);
      Value partBits, allOff = notSet;
      if (mask)
        partBits = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, fromLane(bits, slot.owner), partStart),
                                         a.constant(partMask));
      Value run = sharedAddress(b, loc, dest, slot.runStart, element);
      const int64_t runBytes = bytesOf(element, plan.laneElements);
      if (wholeRuns) {
        Value active = mask ? Value(arith::TruncIOp::create(b, loc, b.getI1Type(), partBits)) : Value();
        access.loadToLds(b, loc, start, active, run, runBytes);
        continue;
      }
      Value ready = access.groupReady(b, loc, start, plan.laneElements);
      if (mask) {
        auto equals = [&](int64_t v) {
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, partBits, a.constant(v));
        };
        ready = andOf(b, loc, equals(partMask), ready);
        allOff = equals(0);
      }
      Value direct = ready && access.isView() ? Value(arith::OrIOp::create(b, loc, ready, allOff)) : ready;
      auto issue = [&](OpBuilder &ib) { access.loadToLds(ib, loc, start, ready, run, runBytes); };
      if (!direct) {
        issue(b);
        continue;
      }
      Value notDirect = arith::XOrIOp::create(b, loc, direct, arith::ConstantIntOp::create(b, loc, 1, 1));
      Value anyNotDirect = ROCDL::BallotOp::create(b, loc, b.getI64Type(), notDirect);
      Value waveDirect = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, anyNotDirect,
                                               arith::ConstantIntOp::create(b, loc, 0, 64));
      scf::IfOp::create(
          b, loc, waveDirect,
          [&](OpBuilder &tb, Location) {
            issue(tb);
            scf::YieldOp::create(tb, loc);
          },
          [&](OpBuilder &eb, Location) {
            IRArith e{eb, loc};
            Value slotStart = e.add(slot.runStart, e.mul(ctx.lane, e.constant(plan.laneElements)));
            for (int64_t i = 0; i < plan.laneElements; ++i) {
              Value at = e.add(start, e.constant(i));
              Value active;
              if (mask) {
                Value bit = arith::AndIOp::create(eb, loc, arith::ShRUIOp::create(eb, loc, partBits, e.constant(i)),
                                                  e.constant(1));
                active = arith::TruncIOp::create(eb, loc, eb.getI1Type(), bit);
              }
              Value value = access.loadElement(eb, loc, at, access.elementActive(eb, loc, at, active),
                                               [&](OpBuilder &zb) { return zeroOf(zb, loc, element); });
              storeShared(eb, loc, dest, e.add(slotStart, e.constant(i)), value);
            }
            scf::YieldOp::create(eb, loc);
          });
    }
  }
}

/// Each thread copies the destination elements that the offsets' layout gives it, in groups
/// of 4, 8 or 16 contiguous bytes where both addresses are aligned. On NVIDIA a group goes
/// through cp.async (a fully masked group zero-fills through the source size) and completes
/// at async_wait; on AMD a fully active group is one vector load and one LDS store, complete
/// when issued. Where the mask, the alignment and the range are known before run time to
/// hold for whole groups, that is all a group costs; otherwise a run-time check picks it and
/// other elements are copied one by one before the op completes. From a buffer view, a group
/// must also lie in range, checked once for the group.
struct AsyncCopyLowering : GpuPattern<AsyncCopyOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(cast<RankedTensorType>(op.getOffsets().getType()));
    SharedType dest = op.getDest().getType();
    Type element = dest.getElementType();
    GlobalAccess access =
        globalAccess(rw, loc, ctx, op.getBase(), adaptor.getBase(), op.getOffsets(), element, op.getMask());
    if (auto direct = ctx.directCopies.find(op); direct != ctx.directCopies.end()) {
      copyDirect(rw, loc, ctx, direct->second.first, direct->second.second, access, adaptor.getOffsets(),
                 adaptor.getMask(), dest, adaptor.getDest());
      rw.replaceOpWithNewOp<arith::ConstantIntOp>(op, 1, 1);
      return success();
    }
    auto coords = coordinates(rw, loc, ctx, t);
    auto maskOf = [&](OpBuilder &b, int64_t r) {
      return adaptor.getMask() ? extract(b, loc, adaptor.getMask(), r) : Value();
    };
    auto copyOne = [&](OpBuilder &b, int64_t r) {
      Value offset = extract(b, loc, adaptor.getOffsets(), r);
      Value value = access.loadElement(b, loc, offset, access.elementActive(b, loc, offset, maskOf(b, r)),
                                       [&](OpBuilder &eb) { return zeroOf(eb, loc, element); });
      storeShared(b, loc, adaptor.getDest(), sharedIndex(b, loc, dest, coords[r]), value);
    };
    // A group is contiguous in shared memory too unless a swizzle splits it.
    int64_t n = vectorWidth(t, contiguityOf(ctx, op.getOffsets()), element);
    auto layout = dyn_cast_or_null<SharedLayoutAttr>(dest.getEncoding());
    if (layout && (layout.getVec() < n || layout.getOrder()[0] != dest.getRank() - 1))
      n = 1;
    if (int64_t groupBytes = bytesOf(element, n); groupBytes != 4 && groupBytes != 8 && groupBytes != 16)
      n = 1;
    const int64_t bytes = bytesOf(element, n);
    // On NVIDIA an element of 4 or 8 bytes is a cp.async of its own (a block scale): copied
    // through registers, the loop would wait for its load before the barrier every iteration.
    const bool asyncElements = n == 1 && !ctx.amd && (bytes == 4 || bytes == 8) && t.blocked;
    // One group from `first` to `dst` (both aligned, in range if copied): copied whole if
    // `copied` (null: always), else zeros.
    auto copyGroup = [&](OpBuilder &b, Location l, Value first, Value dst, Value copied) {
      if (ctx.amd) {
        LLVM::StoreOp::create(b, l, access.loadGroupIf(b, l, first, n, copied), dst, bytes);
        return;
      }
      Value size = i32Const(b, l, bytes);
      Value sourceBytes = copied ? Value(arith::SelectOp::create(b, l, copied, size, i32Const(b, l, 0))) : size;
      auto cache = bytes == 16 ? NVVM::LoadCacheModifierKind::CG : NVVM::LoadCacheModifierKind::CA;
      NVVM::CpAsyncOp::create(b, l, dst, access.address(b, l, first), b.getI32IntegerAttr(bytes),
                              NVVM::LoadCacheModifierKindAttr::get(b.getContext(), cache), sourceBytes);
    };
    bool checkedAtCompileTime = n > 1 && access.groupsAllOrNothing(n) && sharedVectorWidth(t, dest) >= n;
    // The copy of registers [r, r + n), element by element or as one group.
    auto copyRegisters = [&](OpBuilder &b, int64_t r) {
      if (n == 1 && !asyncElements) {
        copyOne(b, r);
        return;
      }
      Value first = extract(b, loc, adaptor.getOffsets(), r);
      Value dst = sharedAddress(b, loc, adaptor.getDest(), sharedIndex(b, loc, dest, coords[r]), element);
      if (asyncElements) {
        copyGroup(b, loc, first, dst, access.elementActive(b, loc, first, maskOf(b, r)));
        return;
      }
      if (checkedAtCompileTime) { // the group's first mask stands for all of it
        copyGroup(b, loc, first, dst, maskOf(b, r));
        return;
      }
      Value allOn, allOff; // every mask set / every mask clear (null: no mask)
      for (int64_t i = 0; i < n; ++i) {
        Value active = maskOf(b, r + i);
        if (!active)
          continue;
        allOn = andOf(b, loc, allOn, active);
        Value inactive = arith::XOrIOp::create(b, loc, active, arith::ConstantIntOp::create(b, loc, 1, 1));
        allOff = andOf(b, loc, allOff, inactive);
      }
      // Every element of the group is copied (null: unconditionally).
      Value full = andOf(b, loc, allOn, access.groupInRange(b, loc, first, n));
      // NVIDIA zero-fills a fully masked group through the source size, so it is uniform too.
      Value uniform = full && allOff && !ctx.amd ? Value(arith::OrIOp::create(b, loc, full, allOff)) : full;
      Value srcAligned = access.groupAligned(b, loc, first, n);
      Value fast = andOf(b, loc, andOf(b, loc, uniform, srcAligned), isAligned(b, loc, dst, bytes));
      scf::IfOp::create(
          b, loc, fast,
          [&](OpBuilder &tb, Location l) {
            // On AMD the fast path only takes fully active groups.
            copyGroup(tb, l, first, dst, ctx.amd ? Value() : full);
            scf::YieldOp::create(tb, l);
          },
          [&](OpBuilder &eb, Location l) {
            for (int64_t i = 0; i < n; ++i)
              copyOne(eb, r + i);
            fenceForWarpgroupDots(eb, l, ctx);
            scf::YieldOp::create(eb, l);
          });
    };
    // Where threads repeat elements (a tile smaller than the block, or a sliced layout) only
    // each element's owner copies it: a masked-off repeat would write zeros over it, and the
    // repeats' copies cost as much as the owner's.
    for (int64_t r = 0; r < t.registers; r += n) {
      Value owner = t.blocked ? ownerMask(rw, loc, ctx, t, r) : Value();
      guardedEffect(rw, loc, owner, [&](OpBuilder &b) { copyRegisters(b, r); });
    }
    if (n == 1 && !asyncElements)
      fenceForWarpgroupDots(rw, loc, ctx);
    if (!ctx.amd)
      NVVM::CpAsyncCommitGroupOp::create(rw, loc); // one group per async_copy: async_wait counts them
    rw.replaceOpWithNewOp<arith::ConstantIntOp>(op, 1, 1);
    return success();
  }
};

/// A barrier that orders shared-memory accesses. On AMD, once load-to-LDS instructions
/// exist, the workgroup-scope fences of gpu.barrier would also wait for every one in flight
/// (they write LDS), which would undo the copies' overlap with compute. There the barrier is
/// the hardware one after this wave's LDS accesses complete (gfx90a+ do not wait by
/// themselves), between fences that only keep the compiler from moving memory accesses
/// across it; async_wait waits for the copies a barrier publishes.
struct BarrierLowering : GpuPattern<BarrierOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(BarrierOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (!ctx.amd || !ctx.fewestDirectInstructions) {
      rw.replaceOpWithNewOp<gpu::BarrierOp>(op);
      return success();
    }
    Location loc = op.getLoc();
    LLVM::FenceOp::create(rw, loc, LLVM::AtomicOrdering::release, "singlethread");
    amdgpu::MemoryCounterWaitOp::create(rw, loc, IntegerAttr(), IntegerAttr(), rw.getI32IntegerAttr(0), IntegerAttr(),
                                        IntegerAttr());
    ROCDL::SBarrierOp::create(rw, loc);
    rw.replaceOpWithNewOp<LLVM::FenceOp>(op, LLVM::AtomicOrdering::acquire, "singlethread");
    return success();
  }
};

/// Device scope is "agent" to AMDGPU (on CDNA3 a release writes back the L2 that the other
/// XCDs do not share, an acquire invalidates it) and "device" to NVPTX (fence.acq_rel.gpu
/// either way).
struct FenceLowering : GpuPattern<FenceOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(FenceOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto ordering = op.getOrdering() == FenceOrdering::release ? LLVM::AtomicOrdering::release
                                                                : LLVM::AtomicOrdering::acquire;
    rw.replaceOpWithNewOp<LLVM::FenceOp>(op, ordering, ctx.amd ? "agent" : "device");
    return success();
  }
};

/// NVIDIA: wait until at most `pending` cp.async groups are in flight. AMD copies through
/// registers are complete when issued; load-to-LDS instructions are vector memory loads,
/// which complete in order: once at most `pending` times the fewest instructions a direct
/// copy issues are outstanding, every older copy has landed (a copy that fell back to
/// element-wise loads waited for them, and so for everything before it). Either way, a
/// barrier must follow before other threads read.
struct AsyncWaitLowering : GpuPattern<AsyncWaitOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(AsyncWaitOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    if (ctx.amd && ctx.fewestDirectInstructions)
      rw.replaceOpWithNewOp<amdgpu::MemoryCounterWaitOp>(
          op, rw.getI32IntegerAttr(int32_t(op.getPending() * ctx.fewestDirectInstructions)), IntegerAttr(),
          IntegerAttr(), IntegerAttr(), IntegerAttr());
    else if (ctx.amd)
      rw.eraseOp(op);
    else {
      // No proxy fence for wgmma here: a landed cp.async is visible to it after the barrier,
      // as in Triton's pipelines (whose fences cover stores from registers only). The fence
      // compiles to MEMBAR.ALL.CTA, which cost the 4096^3 and 8192^3 rings 2-7% on the H200
      // (bench/gemm-notes.md v26). Stores from registers fence themselves (fenceForWarpgroupDots).
      NVVM::CpAsyncWaitGroupOp::create(rw, op.getLoc(), rw.getI32IntegerAttr(op.getPending()));
      rw.eraseOp(op);
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

/// A gpu.shuffle of `value`, whose lanes move 32-bit words: narrower values travel
/// zero-extended in one.
Value shuffleValue(OpBuilder &b, Location loc, const KernelContext &ctx, Value value, int64_t offset,
                   gpu::ShuffleMode mode) {
  Type type = value.getType();
  unsigned width = type.getIntOrFloatBitWidth();
  if (width >= 32)
    return gpu::ShuffleOp::create(b, loc, value, int32_t(offset), int32_t(ctx.warpSize), mode).getShuffleResult();
  Type bits = b.getIntegerType(width);
  Value narrow = type == bits ? value : arith::BitcastOp::create(b, loc, bits, value).getResult();
  Value word = arith::ExtUIOp::create(b, loc, b.getI32Type(), narrow);
  Value moved = gpu::ShuffleOp::create(b, loc, word, int32_t(offset), int32_t(ctx.warpSize), mode).getShuffleResult();
  Value back = arith::TruncIOp::create(b, loc, bits, moved);
  return type == bits ? back : arith::BitcastOp::create(b, loc, type, back).getResult();
}

/// The value lane (id xor `mask`) holds, for a butterfly whose earlier steps combined the
/// lane bits from `stride` up to `mask`. On CDNA, 32-bit values move with DPP within a row
/// where DPP has the pattern: quad_perm swaps for masks 1 and 2, and, once the lower bits
/// are combined (every lane of a quad, or of a half-row, then holds the same value),
/// row_half_mirror (lane ^ 7) for mask 4 and row_mirror (lane ^ 15) for mask 8, which then
/// meet the same partner values as ^ 4 and ^ 8. Elsewhere a xor shuffle (ds_swizzle /
/// ds_bpermute, shfl.sync.bfly). Either way every lane ends with the same combination.
Value butterflyPartner(OpBuilder &b, Location loc, const KernelContext &ctx, Value value, int64_t mask,
                       int64_t stride) {
  bool word = value.getType().isF32() || value.getType().isInteger(32);
  if (ctx.amd && word && (mask <= 2 || (stride == 1 && mask <= 8))) {
    auto i32 = [&](int64_t v) { return b.getI32IntegerAttr(int32_t(v)); };
    amdgpu::DPPPerm kind = mask == 4 ? amdgpu::DPPPerm::row_half_mirror
                           : mask == 8 ? amdgpu::DPPPerm::row_mirror
                                       : amdgpu::DPPPerm::quad_perm;
    Attribute argument;
    if (kind == amdgpu::DPPPerm::quad_perm)
      argument = b.getArrayAttr(mask == 1 ? ArrayRef<Attribute>{i32(1), i32(0), i32(3), i32(2)}
                                          : ArrayRef<Attribute>{i32(2), i32(3), i32(0), i32(1)});
    return amdgpu::DPPOp::create(b, loc, value.getType(), value, value, kind, argument);
  }
  return shuffleValue(b, loc, ctx, value, mask, gpu::ShuffleMode::XOR);
}

struct ReduceLowering : GpuPattern<ReduceOp> {
  using GpuPattern::GpuPattern;
  /// For an i32 sum of products of sign-extended bytes, the converted byte tiles (registers
  /// as the reduction's): four products at a time are one dp4a (NVIDIA) or v_dot4_i32_i8
  /// (CDNA3/4, `llvm.amdgcn.sdot4` without clamping), exactly the sum, wrapping.
  std::optional<std::pair<Value, Value>> byteProductFactors(ReduceOp op, ConversionPatternRewriter &rw) const {
    if (op.getKind() != CombineKind::sum)
      return std::nullopt;
    auto product = op.getSource().getDefiningOp<arith::MulIOp>();
    if (!product || !getElementTypeOrSelf(product.getType()).isInteger(32))
      return std::nullopt;
    auto byteOf = [&](Value v) -> Value {
      auto widen = v.getDefiningOp<arith::ExtSIOp>();
      auto in = widen ? dyn_cast<RankedTensorType>(widen.getIn().getType()) : RankedTensorType();
      if (!in || !in.getElementType().isInteger(8) ||
          in.getEncoding() != cast<RankedTensorType>(op.getSource().getType()).getEncoding())
        return {};
      Value converted = rw.getRemappedValue(widen.getIn());
      return converted && isa<VectorType>(converted.getType()) ? converted : Value();
    };
    Value a = byteOf(product.getLhs()), b = byteOf(product.getRhs());
    if (!a || !b)
      return std::nullopt;
    return std::make_pair(a, b);
  }
  /// For an f32 sum of products that may be contracted (`contract` on the multiply, as
  /// dsl::sumOfProducts sets), the converted factor tiles: a thread's products are summed as a
  /// chain of fused multiply-adds, in the same order, each rounding once instead of twice.
  std::optional<std::pair<Value, Value>> floatProductFactors(ReduceOp op, ConversionPatternRewriter &rw) const {
    auto product = op.getSource().getDefiningOp<arith::MulFOp>();
    if (op.getKind() != CombineKind::sum || !product || !getElementTypeOrSelf(product.getType()).isF32() ||
        !arith::bitEnumContainsAll(product.getFastmath(), arith::FastMathFlags::contract))
      return std::nullopt;
    Value a = rw.getRemappedValue(product.getLhs()), b = rw.getRemappedValue(product.getRhs());
    if (!a || !b || !isa<VectorType>(a.getType()) || !isa<VectorType>(b.getType()))
      return std::nullopt;
    return std::make_pair(a, b);
  }
  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile in = threadTile(op.getSource().getType());
    if (!in.blocked)
      return op.emitOpError() << "reductions on GPU targets need a blocked or slice input layout";
    const BlockedGeometry &g = in.geometry();
    if (auto result = dyn_cast<RankedTensorType>(op.getType()))
      if (result.getEncoding() != SliceLayoutAttr::get(op.getContext(), op.getAxis(),
                                                       cast<DistributedLayoutAttr>(in.type.getEncoding())))
        return op.emitOpError() << "result layout must be the slice of the input layout along the axis";
    unsigned axisRoot = g.rootDim(op.getAxis());
    for (const DimPlacement &p : g.dims)
      if (!llvm::isPowerOf2_64(p.threads) || !llvm::isPowerOf2_64(p.sizePerThread) || !llvm::isPowerOf2_64(p.warps))
        return op.emitOpError() << "reductions on GPU targets need power-of-two layout parameters";
    const DimPlacement &p = g.dims[axisRoot];
    Region &combiner = op.getCombiner();
    const bool ofBits = ctx.maximaOfBits.contains(op);
    auto combineValues = [&](OpBuilder &b, Value x, Value y) {
      return ofBits ? maximumOfBits(b, loc, x, y) : buildCombine(b, loc, op.getKind(), combiner, x, y);
    };

    // 1. In-thread: registers that differ only along the axis, in increasing coordinate.
    SmallVector<SmallVector<int64_t>> groups; // output slot -> input registers
    llvm::DenseMap<int64_t, int64_t> slotOf;  // register index with axis zeroed -> slot
    for (int64_t r = 0; r < in.registers; ++r) {
      SmallVector<int64_t> index = g.registerIndex(r);
      index[axisRoot] = 0;
      int64_t key = g.registerNumber(index);
      auto [it, inserted] = slotOf.try_emplace(key, groups.size());
      if (inserted)
        groups.emplace_back();
      groups[it->second].push_back(r);
    }
    SmallVector<Value> partials;
    auto bytes = byteProductFactors(op, rw);
    auto floats = floatProductFactors(op, rw);
    for (auto &group : groups) {
      if (bytes && group.size() % 4 == 0) {
        // Four byte products a step, summed into the partial by one dot4 instruction.
        Value acc = i32Const(rw, loc, 0);
        auto four = [&](Value vector, size_t first) {
          SmallVector<Value> elements;
          for (size_t i = first; i < first + 4; ++i)
            elements.push_back(extract(rw, loc, vector, group[i]));
          return fromElements(rw, loc, VectorType::get({4}, rw.getI8Type()), elements);
        };
        auto isSigned = NVVM::DotAccumulateTypeAttr::get(rw.getContext(), NVVM::DotAccumulateType::SIGNED);
        // AMD's intrinsic takes the four bytes packed in an i32, byte 0 lowest.
        auto word = [&](Value vector, size_t first) {
          return extract(rw, loc,
                         vector::BitCastOp::create(rw, loc, VectorType::get({1}, rw.getI32Type()), four(vector, first)),
                         0);
        };
        for (size_t i = 0; i < group.size(); i += 4)
          acc = ctx.amd ? LLVM::CallIntrinsicOp::create(
                              rw, loc, rw.getI32Type(), rw.getStringAttr("llvm.amdgcn.sdot4"),
                              ValueRange{word(bytes->first, i), word(bytes->second, i), acc,
                                         arith::ConstantIntOp::create(rw, loc, 0, 1)})
                              .getResult(0)
                        : NVVM::DotAccumulate4WayOp::create(rw, loc, rw.getI32Type(), four(bytes->first, i),
                                                            isSigned, four(bytes->second, i), isSigned, acc)
                              .getResult();
        partials.push_back(acc);
        continue;
      }
      Value acc = extract(rw, loc, adaptor.getSource(), group[0]);
      for (size_t i = 1; i < group.size(); ++i)
        acc = floats ? math::FmaOp::create(rw, loc, extract(rw, loc, floats->first, group[i]),
                                           extract(rw, loc, floats->second, group[i]), acc)
                     : combineValues(rw, acc, extract(rw, loc, adaptor.getSource(), group[i]));
      partials.push_back(acc);
    }

    // 2. Across lanes: butterfly over the lane bits of distinct coordinates along the axis.
    auto [lanes, warps] = distinctThreads(p);
    int64_t stride = laneStride(g, axisRoot);
    // Combines each value over `span` lanes, `stride` apart, in every one of them (a lane
    // distance at a time, across the values: independent exchanges back to back).
    auto butterfly = [&](MutableArrayRef<Value> values, int64_t span) {
      for (int64_t mask = stride; mask < stride * span; mask *= 2)
        for (Value &value : values)
          value = combineValues(rw, value, butterflyPartner(rw, loc, ctx, value, mask, stride));
    };
    butterfly(partials, lanes);

    // 3. Across warps: each warp's partials meet in shared memory.
    if (warps > 1) {
      Type element = in.type.getElementType();
      int64_t outputs = in.type.getNumElements() / in.type.getDimSize(op.getAxis());
      SmallVector<int64_t> outShape(in.type.getShape());
      outShape.erase(outShape.begin() + op.getAxis());
      auto outCoords = coordinatesOfSlots(rw, loc, in, groups, op.getAxis());
      barrier(rw, loc);
      Value view = scratchView(rw, loc, ctx, element, warps * outputs);
      // Warp id along the axis: the block pattern base divided by the lanes' span.
      Value warpAlong = arith::DivUIOp::create(rw, loc, threadBase(rw, loc, ctx, g, axisRoot),
                                               i32Const(rw, loc, p.sizePerThread * p.threads));
      Value warpSlot = arith::RemUIOp::create(rw, loc, warpAlong, i32Const(rw, loc, warps));
      SmallVector<Value> outLinear;
      for (auto &coords : outCoords)
        outLinear.push_back(linearIndex(rw, loc, coords, outShape));
      for (auto [partial, linear] : llvm::zip(partials, outLinear)) {
        Value slot = arith::AddIOp::create(rw, loc, arith::MulIOp::create(rw, loc, warpSlot, i32Const(rw, loc, outputs)),
                                           linear);
        storeShared(rw, loc, view, slot, partial);
      }
      barrier(rw, loc);
      // Lanes along the axis share their outputs. Where there are at least as many as warps,
      // lane i reads warp (i mod warps)'s partial and a butterfly over those lanes combines
      // them: one shared load and log2(warps) shuffles per output, not a load and a combine
      // per warp (fewer instructions and registers between the reduction and its users).
      if (warps <= p.threads) {
        Value axisLane = arith::DivUIOp::create(rw, loc, ctx.lane, i32Const(rw, loc, stride));
        Value readWarp = arith::RemUIOp::create(rw, loc, axisLane, i32Const(rw, loc, warps));
        Value readBase = arith::MulIOp::create(rw, loc, readWarp, i32Const(rw, loc, outputs));
        for (auto [partial, linear] : llvm::zip(partials, outLinear)) {
          partial = loadShared(rw, loc, view, arith::AddIOp::create(rw, loc, readBase, linear), element);
          butterfly(partial, warps);
        }
      } else {
        for (auto [partial, linear] : llvm::zip(partials, outLinear)) {
          Value acc = loadShared(rw, loc, view, linear, element);
          for (int64_t w = 1; w < warps; ++w) {
            Value slot = arith::AddIOp::create(rw, loc, i32Const(rw, loc, w * outputs), linear);
            acc = combineValues(rw, acc, loadShared(rw, loc, view, slot, element));
          }
          partial = acc;
        }
      }
    }

    if (in.type.getRank() == 1) {
      rw.replaceOp(op, partials.front());
      return success();
    }
    // The result layout is the slice of the input's along the axis: its registers are the
    // input's with the axis index zeroed, in the same order as the slots.
    ThreadTile out = threadTile(cast<RankedTensorType>(op.getType()));
    SmallVector<Value> elements(out.registers);
    for (int64_t r = 0; r < out.registers; ++r) {
      SmallVector<int64_t> index = out.geometry().registerIndex(r);
      elements[r] = partials[slotOf.lookup(g.registerNumber(index))];
    }
    rw.replaceOp(op, fromElements(rw, loc, out.vectorType, elements));
    return success();
  }

  /// Output coordinates of each slot: the input coordinates of its first register minus the axis.
  SmallVector<SmallVector<Value>> coordinatesOfSlots(OpBuilder &b, Location loc, const ThreadTile &in,
                                                     ArrayRef<SmallVector<int64_t>> groups, unsigned axis) const {
    auto coords = coordinates(b, loc, ctx, in);
    SmallVector<SmallVector<Value>> result;
    for (auto &group : groups) {
      SmallVector<Value> c = coords[group.front()];
      c.erase(c.begin() + axis);
      result.push_back(c);
    }
    return result;
  }
};

/// Inclusive scan through shared memory: each element combines the elements before it.
struct ScanLowering : GpuPattern<ScanOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(ScanOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile t = threadTile(op.getType());
    if (Value scanned = parallelScan(rw, loc, op, t, adaptor.getSource())) {
      rw.replaceOp(op, scanned);
      return success();
    }
    // Layouts that wrap or replicate along the axis: each element combines its predecessors
    // from shared memory, in order.
    Type element = t.type.getElementType();
    unsigned axis = op.getAxis();
    barrier(rw, loc);
    Value view = spillToScratch(rw, loc, ctx, t, adaptor.getSource());
    barrier(rw, loc);
    auto coords = coordinates(rw, loc, ctx, t);
    SmallVector<Value> elements;
    for (int64_t r = 0; r < t.registers; ++r) {
      SmallVector<Value> at(coords[r]);
      at[axis] = i32Const(rw, loc, 0);
      Value first = loadShared(rw, loc, view, linearIndex(rw, loc, at, t.type.getShape()), element);
      Value upper = arith::AddIOp::create(rw, loc, coords[r][axis], i32Const(rw, loc, 1));
      auto loop = scf::ForOp::create(
          rw, loc, i32Const(rw, loc, 1), upper, i32Const(rw, loc, 1), ValueRange{first},
          [&](OpBuilder &b, Location l, Value i, ValueRange acc) {
            SmallVector<Value> c(coords[r]);
            c[axis] = i;
            Value next = loadShared(b, l, view, linearIndex(b, l, c, t.type.getShape()), element);
            scf::YieldOp::create(b, l, buildCombine(b, l, op.getKind(), op.getCombiner(), acc[0], next));
          });
      elements.push_back(loop.getResult(0));
    }
    barrier(rw, loc);
    rw.replaceOp(op, fromElements(rw, loc, t.vectorType, elements));
    return success();
  }

  /// A value that may be absent (no prefix yet), as the scan's combiners have no identity.
  struct Prefix {
    Value value, present; // `present` is an i1 (null: absent for certain)
  };

  /// `prefix` combined on the left of `x` where present.
  Value prepend(OpBuilder &b, Location loc, ScanOp op, const Prefix &prefix, Value x) const {
    if (!prefix.present)
      return x;
    Value combined = buildCombine(b, loc, op.getKind(), op.getCombiner(), prefix.value, x);
    return arith::SelectOp::create(b, loc, prefix.present, combined, x);
  }

  /// `prefix` extended by `x` on the right where `include` (null: always) holds.
  Prefix extend(OpBuilder &b, Location loc, ScanOp op, const Prefix &prefix, Value x, Value include) const {
    Value next = prepend(b, loc, op, prefix, x);
    if (!include)
      return {next, arith::ConstantIntOp::create(b, loc, 1, 1)};
    Value present = prefix.present ? Value(arith::OrIOp::create(b, loc, prefix.present, include)) : include;
    Value value = prefix.present ? Value(arith::SelectOp::create(b, loc, include, next, prefix.value)) : next;
    return {value, present};
  }

  /// Inclusive scan of a blocked tile whose axis neither wraps nor replicates: each thread
  /// scans its own run of the axis, lanes along the axis combine their totals with shuffles
  /// up (Hillis-Steele), and the totals of earlier warps and repetitions meet through shared
  /// memory. Prefixes always combine on the left, so only associativity is assumed; the
  /// order of combination differs from the host's (floating-point results may differ in
  /// rounding). Null when the layout does not allow it.
  Value parallelScan(OpBuilder &b, Location loc, ScanOp op, const ThreadTile &t, Value source) const {
    if (!t.blocked)
      return {};
    const BlockedGeometry &g = t.geometry();
    unsigned axis = op.getAxis(), axisRoot = g.rootDim(axis);
    const DimPlacement &p = g.dims[axisRoot];
    if (p.size < p.blockExtent())
      return {};
    for (const DimPlacement &d : g.dims)
      if (!llvm::isPowerOf2_64(d.threads) || !llvm::isPowerOf2_64(d.sizePerThread) || !llvm::isPowerOf2_64(d.warps))
        return {};
    int64_t run = p.sizePerThread, lanes = p.threads, warps = p.warps, reps = p.repetitions;
    Type element = t.type.getElementType();
    auto combine = [&](Value x, Value y) { return buildCombine(b, loc, op.getKind(), op.getCombiner(), x, y); };

    // Registers that differ only along the axis, in increasing axis index.
    SmallVector<SmallVector<int64_t>> groups;
    llvm::DenseMap<int64_t, int64_t> groupOf;
    for (int64_t r = 0; r < t.registers; ++r) {
      SmallVector<int64_t> index = g.registerIndex(r);
      index[axisRoot] = 0;
      auto [it, inserted] = groupOf.try_emplace(g.registerNumber(index), groups.size());
      if (inserted)
        groups.emplace_back();
      groups[it->second].push_back(r);
    }
    Value position = arith::DivUIOp::create(b, loc, threadBase(b, loc, ctx, g, axisRoot), i32Const(b, loc, run));
    Value laneAlong = arith::RemUIOp::create(b, loc, position, i32Const(b, loc, lanes));
    Value warpAlong = arith::DivUIOp::create(b, loc, position, i32Const(b, loc, lanes));
    int64_t stride = laneStride(g, axisRoot);

    // 1-2. In-thread runs, then across lanes: `local` per register, `inclusive` per run.
    SmallVector<Value> local(t.registers);
    SmallVector<SmallVector<Value>> inclusive(groups.size()); // [group][repetition]
    SmallVector<SmallVector<Prefix>> lanePrefix(groups.size());
    for (auto [gi, group] : llvm::enumerate(groups)) {
      for (int64_t rep = 0; rep < reps; ++rep) {
        Value acc;
        for (int64_t i = 0; i < run; ++i) {
          int64_t r = group[rep * run + i];
          Value x = extract(b, loc, source, r);
          acc = acc ? combine(acc, x) : x;
          local[r] = acc;
        }
        Value total = acc;
        for (int64_t d = 1; d < lanes; d *= 2) {
          Value up = shuffleValue(b, loc, ctx, total, d * stride, gpu::ShuffleMode::UP);
          Value has = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, laneAlong, i32Const(b, loc, d));
          total = arith::SelectOp::create(b, loc, has, combine(up, total), total);
        }
        inclusive[gi].push_back(total);
        Prefix before;
        if (lanes > 1)
          before = {shuffleValue(b, loc, ctx, total, stride, gpu::ShuffleMode::UP),
                    arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, laneAlong, i32Const(b, loc, 1))};
        lanePrefix[gi].push_back(before);
      }
    }

    // 3. Earlier warps and repetitions: the last lane along the axis publishes each run's
    // inclusive total; every thread combines those that precede it, in order.
    SmallVector<SmallVector<Prefix>> blockPrefix(groups.size(), SmallVector<Prefix>(reps));
    if (warps > 1 || reps > 1) {
      int64_t outputs = t.type.getNumElements() / t.type.getDimSize(axis);
      SmallVector<int64_t> outShape(t.type.getShape());
      outShape.erase(outShape.begin() + axis);
      auto coords = coordinates(b, loc, ctx, t);
      barrier(b, loc);
      Value view = scratchView(b, loc, ctx, element, outputs * reps * warps);
      auto slot = [&](int64_t gi, int64_t rep, Value warp) {
        SmallVector<Value> outCoords(coords[groups[gi].front()]);
        outCoords.erase(outCoords.begin() + axis);
        Value linear = linearIndex(b, loc, outCoords, outShape);
        Value block = arith::AddIOp::create(b, loc, i32Const(b, loc, rep * warps), warp);
        return arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, block, i32Const(b, loc, outputs)), linear);
      };
      Value lastLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneAlong, i32Const(b, loc, lanes - 1));
      for (int64_t gi = 0; gi < int64_t(groups.size()); ++gi)
        for (int64_t rep = 0; rep < reps; ++rep)
          guardedEffect(b, loc, lastLane,
                        [&](OpBuilder &sb) { storeShared(sb, loc, view, slot(gi, rep, warpAlong), inclusive[gi][rep]); });
      barrier(b, loc);
      for (int64_t gi = 0; gi < int64_t(groups.size()); ++gi) {
        Prefix acc;
        for (int64_t rep = 0; rep < reps; ++rep) {
          // Within this repetition, only the warps before this thread's.
          Prefix within = acc;
          for (int64_t w = 0; w + 1 < warps; ++w) {
            Value total = loadShared(b, loc, view, slot(gi, rep, i32Const(b, loc, w)), element);
            Value earlier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i32Const(b, loc, w), warpAlong);
            within = extend(b, loc, op, within, total, earlier);
          }
          blockPrefix[gi][rep] = within;
          for (int64_t w = 0; w < warps; ++w) // the whole repetition, for the next ones
            acc = extend(b, loc, op, acc, loadShared(b, loc, view, slot(gi, rep, i32Const(b, loc, w)), element), {});
        }
      }
      barrier(b, loc); // the scratch may be reused by the next op
    }

    SmallVector<Value> elements(t.registers);
    for (auto [gi, group] : llvm::enumerate(groups))
      for (int64_t rep = 0; rep < reps; ++rep)
        for (int64_t i = 0; i < run; ++i) {
          int64_t r = group[rep * run + i];
          elements[r] = prepend(b, loc, op, blockPrefix[gi][rep], prepend(b, loc, op, lanePrefix[gi][rep], local[r]));
        }
    return fromElements(b, loc, t.vectorType, elements);
  }
};

//===----------------------------------------------------------------------===//
// Matrix products (general path: operands staged in shared memory, FMA per element)
//===----------------------------------------------------------------------===//

int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

/// Stages tiles in consecutive 16-byte-aligned scratch regions; returns their views.
SmallVector<Value> stageOperands(OpBuilder &b, Location loc, const KernelContext &ctx, ArrayRef<Value> originals,
                                 ArrayRef<Value> converted) {
  SmallVector<Value> views;
  int64_t offset = 0;
  barrier(b, loc);
  for (auto [original, value] : llvm::zip(originals, converted)) {
    ThreadTile t = threadTile(cast<RankedTensorType>(original.getType()));
    views.push_back(spillToScratch(b, loc, ctx, t, value, offset));
    offset += alignTo16(bytesOf(t.type.getElementType(), t.type.getNumElements()));
  }
  barrier(b, loc);
  return views;
}

int64_t stagedBytes(ValueRange tiles) {
  int64_t bytes = 0;
  for (Value v : tiles) {
    auto t = cast<RankedTensorType>(v.getType());
    bytes += alignTo16(bytesOf(t.getElementType(), t.getNumElements()));
  }
  return bytes;
}

/// acc[r] += sum_k product(k, i_r, j_r) for every accumulator register, k in order.
Value accumulateOverK(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &acc, Value init,
                      int64_t k, function_ref<Value(OpBuilder &, Location, Value kk, Value i, Value j)> product) {
  auto coords = coordinates(b, loc, ctx, acc);
  auto loop = scf::ForOp::create(
      b, loc, i32Const(b, loc, 0), i32Const(b, loc, k), i32Const(b, loc, 1), ValueRange{init},
      [&](OpBuilder &lb, Location l, Value kk, ValueRange sums) {
        SmallVector<Value> next;
        for (int64_t r = 0; r < acc.registers; ++r) {
          Value sum = extract(lb, l, sums[0], r);
          Value term = product(lb, l, kk, coords[r][0], coords[r][1]);
          next.push_back(buildAdd(lb, l, sum, term));
        }
        scf::YieldOp::create(lb, l, fromElements(lb, l, acc.vectorType, next));
      });
  return loop.getResult(0);
}

Value at2d(OpBuilder &b, Location loc, Value view, Value row, Value col, int64_t cols, Type element) {
  Value linear = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, row, i32Const(b, loc, cols)), col);
  return loadShared(b, loc, view, linear, element);
}

/// `count` registers of `vector` from `start` as a vector of their own.
Value registerSlice(OpBuilder &b, Location loc, Value vector, int64_t start, int64_t count) {
  SmallVector<Value> elements;
  for (int64_t i = 0; i < count; ++i)
    elements.push_back(extract(b, loc, vector, start + i));
  return fromElements(b, loc, VectorType::get({count}, elements.front().getType()), elements);
}

/// One mma.sync. Operands travel packed in 32-bit registers, in PTX fragment order (the atom
/// table's value order): bf16/f16 pairs, fp8 and s8 quadruples. MLIR's nvvm.mma.sync has no
/// dense fp8 form, so fp8 atoms call the LLVM intrinsic (PTX ISA 8.4, sm_89+) directly; s8
/// sums wrap in s32 (no .satfinite), as dp4a and CDNA's i8 MFMA do.
Value issueMmaSync(OpBuilder &b, Location loc, const wavetile::atoms::Atom &atom, Value a, Value bv, Value acc) {
  Type element = cast<VectorType>(a.getType()).getElementType();
  int64_t perRegister = 32 / element.getIntOrFloatBitWidth();
  bool s8 = element.isInteger(8), fp8 = perRegister == 4 && !s8;
  auto pack = [&](Value v) {
    SmallVector<Value> registers;
    int64_t n = cast<VectorType>(v.getType()).getNumElements();
    for (int64_t i = 0; i < n; i += perRegister) {
      Value group = registerSlice(b, loc, v, i, perRegister);
      if (element.isBF16() || perRegister == 4) { // NVVM types bf16 pairs and byte quadruples as i32
        SmallVector<Value> bits;
        for (Value e : elementsOf(b, loc, group))
          bits.push_back(toMemory(b, loc, e));
        Value word = fromElements(b, loc, VectorType::get({perRegister}, bits.front().getType()), bits);
        group = extract(b, loc, vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getI32Type()), word), 0);
      }
      registers.push_back(group);
    }
    return registers;
  };
  SmallVector<Value> accs = elementsOf(b, loc, acc);
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(accs.size(), accs.front().getType()));
  Value d;
  if (fp8) {
    auto ptxName = [](Type t) { return isa<Float8E4M3FNType>(t) ? "e4m3" : "e5m2"; };
    Type bElement = cast<VectorType>(bv.getType()).getElementType();
    std::string intrinsic = "llvm.nvvm.mma.m16n8k32.row.col.f32." + std::string(ptxName(element)) + "." +
                            ptxName(bElement) + ".f32";
    SmallVector<Value> operands = pack(a);
    llvm::append_range(operands, pack(bv));
    llvm::append_range(operands, accs);
    d = LLVM::CallIntrinsicOp::create(b, loc, resultType, b.getStringAttr(intrinsic), operands).getResult(0);
  } else {
    auto ptxType = s8 ? NVVM::MMATypes::s8 : element.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto overflow = s8 ? std::optional(NVVM::MMAIntOverflow::wrapped) : std::nullopt;
    d = NVVM::MmaOp::create(b, loc, resultType, pack(a), pack(bv), accs, {atom.m, atom.n, atom.k}, std::nullopt,
                            overflow, std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  }
  SmallVector<Value> out;
  for (int64_t i = 0; i < int64_t(accs.size()); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{i}));
  return fromElements(b, loc, cast<VectorType>(acc.getType()), out);
}

/// The block scales of a scaled dot's operands, laid out for its atom.
struct DotScales {
  const ThreadTile &a;
  Value aVec;
  const ThreadTile &b;
  Value bVec;
};

/// A block-scaled MFMA operand of sub-byte elements (fp6, fp4), packed into 32-bit words
/// with element 0 in the lowest bits (as the instruction reads its registers) and viewed
/// back as the element vector: built element by element, an LLVM vector of i4/i6 goes
/// through the stack. Byte-sized elements are returned as they are.
Value packSubByteOperand(OpBuilder &b, Location loc, Value operand) {
  auto type = cast<VectorType>(operand.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits >= 8)
    return operand;
  int64_t words = type.getNumElements() * bits / 32;
  SmallVector<Value> packed(words, i32Const(b, loc, 0));
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    Value element = arith::ExtUIOp::create(b, loc, b.getI32Type(), toMemory(b, loc, extract(b, loc, operand, i)));
    int64_t bit = i * bits;
    for (int64_t word = bit / 32; word <= (bit + bits - 1) / 32; ++word) {
      int64_t shift = bit - 32 * word; // negative: the element's high bits spill into this word
      Value part = shift >= 0 ? Value(arith::ShLIOp::create(b, loc, element, i32Const(b, loc, shift)))
                              : Value(arith::ShRUIOp::create(b, loc, element, i32Const(b, loc, -shift)));
      packed[word] = arith::OrIOp::create(b, loc, packed[word], part);
    }
  }
  Value wordsVector = fromElements(b, loc, VectorType::get({words}, b.getI32Type()), packed);
  return vector::BitCastOp::create(b, loc, type, wordsVector);
}

/// acc + a * b on matrix cores: per (row block, column block), one atom per K step. With
/// `scales`, each atom also takes this lane's scale byte of A and of B (block-scaled MFMA).
Value mmaDot(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &a, Value aVec,
             const ThreadTile &bt, Value bVec, const ThreadTile &c, Value cVec,
             std::optional<DotScales> scales = std::nullopt) {
  const MmaGeometry &ga = *a.mma, &gb = *bt.mma, &gc = *c.mma;
  const wavetile::atoms::Atom &atom = *gc.atom;
  int64_t va = ga.valuesPerLane(), vb = gb.valuesPerLane(), vc = gc.valuesPerLane();
  SmallVector<Value> result(c.registers);
  for (int64_t ri = 0; ri < gc.reps[0]; ++ri)
    for (int64_t rj = 0; rj < gc.reps[1]; ++rj) {
      int64_t cStart = (ri * gc.reps[1] + rj) * vc;
      Value acc = registerSlice(b, loc, cVec, cStart, vc);
      for (int64_t kk = 0; kk < ga.reps[1]; ++kk) {
        Value av = registerSlice(b, loc, aVec, (ri * ga.reps[1] + kk) * va, va);
        Value bv = registerSlice(b, loc, bVec, (kk * gb.reps[1] + rj) * vb, vb);
        if (scales) {
          // One scale per lane and atom: A's at (row block, K step), B's at (K step, column block).
          Value sa = extract(b, loc, scales->aVec, ri * scales->a.mma->reps[1] + kk);
          Value sb = extract(b, loc, scales->bVec, kk * scales->b.mma->reps[1] + rj);
          acc = amdgpu::ScaledMFMAOp::create(b, loc, acc.getType(), atom.m, atom.n, atom.k,
                                             packSubByteOperand(b, loc, av), packSubByteOperand(b, loc, bv), acc,
                                             sa, sb, 0, 0);
        } else if (ctx.amd)
          acc = amdgpu::MFMAOp::create(b, loc, acc.getType(), b.getI32IntegerAttr(atom.m), b.getI32IntegerAttr(atom.n),
                                       b.getI32IntegerAttr(atom.k), b.getI32IntegerAttr(1), av, bv, acc);
        else
          acc = issueMmaSync(b, loc, atom, av, bv, acc);
      }
      for (int64_t v = 0; v < vc; ++v)
        result[cStart + v] = extract(b, loc, acc, v);
    }
  return fromElements(b, loc, c.vectorType, result);
}

/// Whether `t` is laid out as operand `role` (0 A, 1 B) of `acc`'s MMA atom, or as its block
/// scales, untransposed.
bool isOperandOf(const ThreadTile &t, const ThreadTile &acc, unsigned role, bool scales) {
  return t.mma && t.mma->operand == role && t.mma->scales == scales && !t.mma->transposed &&
         t.mma->atom == acc.mma->atom;
}

/// Whether a dot runs on matrix cores: its operands are in the dot-operand layouts of the
/// accumulator's MMA layout. Other dots stage their operands in the scratch.
bool onMatrixCores(DotOp op) {
  ThreadTile acc = threadTile(op.getType());
  return acc.mma && acc.mma->operand == 2 && isOperandOf(threadTile(op.getA().getType()), acc, 0, false) &&
         isOperandOf(threadTile(op.getB().getType()), acc, 1, false);
}

/// The same for a scaled dot, whose scales must be in the atom's scale layouts too.
bool onMatrixCores(ScaledDotOp op) {
  ThreadTile acc = threadTile(op.getType());
  return acc.mma && acc.mma->operand == 2 && acc.mma->atom->scaleType &&
         isOperandOf(threadTile(op.getA().getType()), acc, 0, false) &&
         isOperandOf(threadTile(op.getB().getType()), acc, 1, false) &&
         isOperandOf(threadTile(op.getAScale().getType()), acc, 0, true) &&
         isOperandOf(threadTile(op.getBScale().getType()), acc, 1, true);
}

struct DotLowering : GpuPattern<DotOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(DotOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile acc = threadTile(op.getType()), lhs = threadTile(op.getA().getType()),
               rhs = threadTile(op.getB().getType());
    if (onMatrixCores(op)) {
      rw.replaceOp(op, mmaDot(rw, loc, ctx, lhs, adaptor.getA(), rhs, adaptor.getB(), acc, adaptor.getAcc()));
      return success();
    }
    // Otherwise the general path: operands staged in shared memory, one FMA per element.
    RankedTensorType a = op.getA().getType(), bType = op.getB().getType();
    int64_t k = a.getDimSize(1), n = bType.getDimSize(1);
    Type accElement = acc.type.getElementType();
    auto views = stageOperands(rw, loc, ctx, {op.getA(), op.getB()}, {adaptor.getA(), adaptor.getB()});
    Value result = accumulateOverK(rw, loc, ctx, acc, adaptor.getAcc(), k,
                                   [&](OpBuilder &b, Location l, Value kk, Value i, Value j) {
                                     Value x = buildWidenForDot(b, l, at2d(b, l, views[0], i, kk, k, a.getElementType()), accElement);
                                     Value y = buildWidenForDot(b, l, at2d(b, l, views[1], kk, j, n, bType.getElementType()), accElement);
                                     return buildMul(b, l, x, y);
                                   });
    barrier(rw, loc);
    rw.replaceOp(op, result);
    return success();
  }
};

struct ScaledDotLowering : GpuPattern<ScaledDotOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(ScaledDotOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    if (onMatrixCores(op)) {
      ThreadTile aScale = threadTile(op.getAScale().getType()), bScale = threadTile(op.getBScale().getType());
      rw.replaceOp(op, mmaDot(rw, loc, ctx, threadTile(op.getA().getType()), adaptor.getA(),
                              threadTile(op.getB().getType()), adaptor.getB(), threadTile(op.getType()),
                              adaptor.getAcc(), DotScales{aScale, adaptor.getAScale(), bScale, adaptor.getBScale()}));
      return success();
    }
    RankedTensorType a = op.getA().getType(), bType = op.getB().getType();
    int64_t k = a.getDimSize(1), n = bType.getDimSize(1), blocks = k / 32;
    ThreadTile acc = threadTile(op.getType());
    Type f32 = rw.getF32Type();
    auto views = stageOperands(rw, loc, ctx, {op.getA(), op.getAScale(), op.getB(), op.getBScale()},
                               {adaptor.getA(), adaptor.getAScale(), adaptor.getB(), adaptor.getBScale()});
    Type scaleType = op.getAScale().getType().getElementType();
    Value result = accumulateOverK(
        rw, loc, ctx, acc, adaptor.getAcc(), k, [&](OpBuilder &b, Location l, Value kk, Value i, Value j) {
          Value block = arith::DivUIOp::create(b, l, kk, i32Const(b, l, 32));
          Value x = buildWidenForDot(b, l, at2d(b, l, views[0], i, kk, k, a.getElementType()), f32);
          Value sx = buildWidenForDot(b, l, at2d(b, l, views[1], i, block, blocks, scaleType), f32);
          Value y = buildWidenForDot(b, l, at2d(b, l, views[2], kk, j, n, bType.getElementType()), f32);
          Value sy = buildWidenForDot(b, l, at2d(b, l, views[3], block, j, n, scaleType), f32);
          return buildMul(b, l, buildMul(b, l, x, y), buildMul(b, l, sx, sy));
        });
    barrier(rw, loc);
    rw.replaceOp(op, result);
    return success();
  }
};

/// The swizzle mode field of a wgmma matrix descriptor for K rows of `rowBytes` (PTX ISA,
/// "Matrix Descriptor Format": 1 = 128-byte, 2 = 64-byte, 3 = 32-byte swizzle). The
/// buffers' shared layout (operandSharedLayout of such rows) is that swizzle.
int64_t wgmmaSwizzleMode(int64_t rowBytes) { return rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : 3; }

/// The descriptor of a K-major swizzled shared tile starting at `view`, less its start
/// address's per-instruction offset: start address / 16 (bits 0-13), leading byte offset
/// (unused by swizzled K-major layouts; 1 by convention, bits 16-29), the byte stride
/// between groups of 8 rows / 16 (bits 32-45), the swizzle mode (bits 62-63). Offsets are
/// added in units of 16 bytes; shared addresses stay below 2^18, so they never carry out of
/// the address field.
Value wgmmaDescriptorBase(OpBuilder &b, Location loc, Value view, Type element, int64_t rowBytes) {
  Value pointer = sharedAddress(b, loc, view, i32Const(b, loc, 0), element);
  Type i64 = b.getI64Type();
  Value address = LLVM::PtrToIntOp::create(b, loc, i64, pointer);
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); };
  Value start = arith::ShRUIOp::create(b, loc, arith::AndIOp::create(b, loc, address, constant(0x3ffff)), constant(4));
  int64_t fields = (int64_t(1) << 16) | ((8 * rowBytes / 16) << 32) | (wgmmaSwizzleMode(rowBytes) << 62);
  return arith::OrIOp::create(b, loc, start, constant(fields));
}

NVVM::WGMMATypes wgmmaType(Type element) {
  if (element.isBF16())
    return NVVM::WGMMATypes::bf16;
  if (element.isF16())
    return NVVM::WGMMATypes::f16;
  if (element.isInteger(8))
    return NVVM::WGMMATypes::s8;
  return isa<Float8E4M3FNType>(element) ? NVVM::WGMMATypes::e4m3 : NVVM::WGMMATypes::e5m2;
}

/// acc + a * bᵀ with wgmma: each warpgroup owns 64-row blocks of the accumulator (its MMA
/// layout) and reads its rows of A and all of B straight from the swizzled buffers, one
/// instruction per (K step, row block, column block). The group is waited for before the
/// op's result is used, so the buffers are free again at the next barrier. fp8 products go
/// to fresh accumulators that are then added to `acc` in f32 (unless acc is zero, as for a
/// block-scaled product's sum): Hopper's fp8 wgmma keeps only about 14 bits of its running
/// sum (measured on the H200: every fp8 configuration of a 4096-deep product failed the
/// tuner's check accumulating in place; DeepSeek-V3 reports the same), so sums carried
/// across the whole K loop would lose accuracy. s8 products sum exactly in s32 (wrapping).
struct SharedDotLowering : GpuPattern<SharedDotOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(SharedDotOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile c = threadTile(op.getType());
    if (!c.mma || !c.mma->atom || c.mma->atom->aSource != wavetile::atoms::OperandSource::SharedMemoryDescriptor)
      return rw.notifyMatchFailure(op, "the accumulator is not in a warpgroup MMA layout");
    const MmaGeometry &g = *c.mma;
    const wavetile::atoms::Atom &atom = *g.atom;
    SharedType aType = op.getA().getType(), bType = op.getB().getType();
    Type aElement = aType.getElementType(), bElement = bType.getElementType();
    int64_t aRowBytes = bytesOf(aElement, aType.getDimSize(1)), bRowBytes = bytesOf(bElement, bType.getDimSize(1));
    int64_t kStepBytes = bytesOf(aElement, atom.k), kSteps = aType.getDimSize(1) / atom.k;
    // This thread's warpgroup owns row blocks warpgroup, warpgroup + warpsM, ...
    Type i64 = rw.getI64Type();
    Value warpgroup = arith::DivUIOp::create(rw, loc, ctx.warp, i32Const(rw, loc, atom.waveSize / ctx.warpSize));
    Value aBase = arith::AddIOp::create(
        rw, loc, wgmmaDescriptorBase(rw, loc, adaptor.getA(), aElement, aRowBytes),
        arith::ExtUIOp::create(rw, loc, i64,
                               arith::MulIOp::create(rw, loc, warpgroup, i32Const(rw, loc, atom.m * aRowBytes / 16))));
    Value bBase = wgmmaDescriptorBase(rw, loc, adaptor.getB(), bElement, bRowBytes);
    auto offset = [&](Value base, int64_t bytes) -> Value {
      return arith::AddIOp::create(rw, loc, base, arith::ConstantIntOp::create(rw, loc, bytes / 16, 64));
    };
    int64_t values = g.valuesPerLane();
    Type accElement = op.getAcc().getType().getElementType();
    auto accType = LLVM::LLVMStructType::getLiteral(rw.getContext(), SmallVector<Type>(values, accElement));
    const bool promote = isa<Float8E4M3FNType, Float8E5M2Type>(aElement);
    const bool fromZero = promote && matchPattern(op.getAcc(), m_AnyZeroFloat());
    SmallVector<Value> accs;
    for (int64_t block = 0; block < g.reps[0] * g.reps[1]; ++block) {
      Value acc = LLVM::UndefOp::create(rw, loc, accType);
      for (int64_t v = 0; !promote && v < values; ++v)
        acc = LLVM::InsertValueOp::create(rw, loc, acc, extract(rw, loc, adaptor.getAcc(), block * values + v), v);
      accs.push_back(acc);
    }
    NVVM::WgmmaFenceAlignedOp::create(rw, loc);
    auto shape = NVVM::MMAShapeAttr::get(rw.getContext(), atom.m, atom.n, atom.k);
    for (int64_t kk = 0; kk < kSteps; ++kk)
      for (int64_t ri = 0; ri < g.reps[0]; ++ri)
        for (int64_t rj = 0; rj < g.reps[1]; ++rj) {
          Value a = offset(aBase, ri * g.warpsM * atom.m * aRowBytes + kk * kStepBytes);
          Value b = offset(bBase, rj * atom.n * bRowBytes + kk * kStepBytes);
          Value &acc = accs[ri * g.reps[1] + rj];
          auto scaleD = promote && kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one;
          acc = NVVM::WgmmaMmaAsyncOp::create(rw, loc, accType, acc, a, b, shape, wgmmaType(aElement),
                                              wgmmaType(bElement),
                                              accElement.isInteger(32) ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32,
                                              scaleD,
                                              NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
                                              NVVM::MMALayout::col, NVVM::MMAIntOverflowAttr());
        }
    NVVM::WgmmaGroupSyncAlignedOp::create(rw, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(rw, loc, 0);
    SmallVector<Value> result;
    for (auto [block, acc] : llvm::enumerate(accs))
      for (int64_t v = 0; v < values; ++v) {
        Value sum = LLVM::ExtractValueOp::create(rw, loc, acc, ArrayRef<int64_t>{v});
        if (promote && !fromZero)
          sum = arith::AddFOp::create(rw, loc, extract(rw, loc, adaptor.getAcc(), int64_t(block) * values + v), sum);
        result.push_back(sum);
      }
    rw.replaceOp(op, fromElements(rw, loc, c.vectorType, result));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Formats and elementwise ops
//===----------------------------------------------------------------------===//

struct FpConvertLowering : GpuPattern<FpConvertOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(FpConvertOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type target = getElementTypeOrSelf(op.getType());
    auto convert = [&](Value v) {
      return buildFpConvert(rw, loc, v, target, op.getRounding(), op.getSaturate());
    };
    auto vectorType = dyn_cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    if (!vectorType) {
      rw.replaceOp(op, convert(adaptor.getSource()));
      return success();
    }
    SmallVector<Value> sources = elementsOf(rw, loc, adaptor.getSource()), elements;
    // Widening fp8 of the target's own formats takes its pair instructions, exactly (every
    // fp8 value is an f16 and an f32; NaN stays NaN): on CDNA v_cvt_pk_f32_fp8/bf8 turn the low
    // or high half of a dword into two f32; sm_90 widens a pair to f16 (cvt.rn.f16x2.e4m3x2),
    // then f16 goes to the target.
    Type sourceElement = getElementTypeOrSelf(op.getSource().getType());
    auto isNativeFp8 = [&](Type type) {
      return ctx.ocpFp8 ? isa<Float8E4M3FNType, Float8E5M2Type>(type) : isa<Float8E4M3FNUZType, Float8E5M2FNUZType>(type);
    };
    const bool nativeFp8 = isNativeFp8(sourceElement);
    auto fromF32 = [&](Value f) -> Value {
      return target.isF32() ? f : Value(arith::TruncFOp::create(rw, loc, target, f));
    };
    if (ctx.amd && nativeFp8 && sources.size() % 2 == 0) {
      const bool e5m2 = isa<Float8E5M2Type, Float8E5M2FNUZType>(sourceElement);
      for (size_t i = 0; i < sources.size(); i += 4) {
        // A dword of up to four codes (a last pair pads its high half with zeros).
        SmallVector<Value> codes(4, zeroOf(rw, loc, rw.getI8Type()));
        for (size_t j = i; j < std::min(i + 4, sources.size()); ++j)
          codes[j - i] = toMemory(rw, loc, sources[j]);
        Value word = extract(rw, loc,
                             vector::BitCastOp::create(rw, loc, VectorType::get({1}, rw.getI32Type()),
                                                       fromElements(rw, loc, VectorType::get({4}, rw.getI8Type()), codes)),
                             0);
        for (size_t half = 0; half < 2 && i + 2 * half < sources.size(); ++half) {
          auto pairType = VectorType::get({2}, rw.getF32Type());
          Value pair = e5m2 ? Value(ROCDL::CvtPkF32Bf8Op::create(rw, loc, pairType, word, half == 1))
                            : Value(ROCDL::CvtPkF32Fp8Op::create(rw, loc, pairType, word, half == 1));
          for (int64_t e = 0; e < 2; ++e)
            elements.push_back(fromF32(extract(rw, loc, pair, e)));
        }
      }
      rw.replaceOp(op, fromElements(rw, loc, vectorType, elements));
      return success();
    }
    if (!ctx.amd && nativeFp8 && sources.size() % 2 == 0) {
      for (size_t i = 0; i < sources.size(); i += 2) {
        Value pair = fromElements(rw, loc, VectorType::get({2}, rw.getI8Type()),
                                  {toMemory(rw, loc, sources[i]), toMemory(rw, loc, sources[i + 1])});
        Value halves = NVVM::ConvertF8x2ToF16x2Op::create(rw, loc, VectorType::get({2}, rw.getF16Type()), pair,
                                                          /*relu=*/false, sourceElement);
        for (int64_t half = 0; half < 2; ++half) {
          Value h = extract(rw, loc, halves, half);
          elements.push_back(target.isF16() ? h : fromF32(arith::ExtFOp::create(rw, loc, rw.getF32Type(), h)));
        }
      }
      rw.replaceOp(op, fromElements(rw, loc, vectorType, elements));
      return success();
    }
    // Saturating f32 pairs narrow to the target's own fp8 formats in one instruction.
    const bool pairwise = op.getSaturate() && op.getRounding() == RoundingMode::rtne && isNativeFp8(target) &&
                          sources.size() % 2 == 0 && sourceElement.isF32();
    if (pairwise && ctx.amd) {
      // v_cvt_pk_fp8_f32/bf8_f32 round to nearest even into the low or high half of a dword.
      // Overflow and infinity would give NaN (or e5m2's infinity: MODE.FP16_OVFL is clear),
      // so finite values are clamped to the largest one first; NaN stays NaN.
      const bool e5m2 = isa<Float8E5M2Type, Float8E5M2FNUZType>(target);
      llvm::APFloat largest = llvm::APFloat::getLargest(cast<FloatType>(target).getFloatSemantics());
      bool inexact;
      largest.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &inexact);
      Value high = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(largest.convertToFloat()));
      Value low = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(-largest.convertToFloat()));
      // Without NaN-propagating minimum and maximum instructions: a median of three
      // (v_med3_f32), NaN put back after.
      auto clamped = [&](Value x) -> Value {
        if (ctx.nativeMinimumMaximum)
          return arith::MinimumFOp::create(rw, loc, arith::MaximumFOp::create(rw, loc, x, low), high);
        Value inRange = arith::MinNumFOp::create(rw, loc, arith::MaxNumFOp::create(rw, loc, x, low), high);
        Value isNaN = arith::CmpFOp::create(rw, loc, arith::CmpFPredicate::UNO, x, x);
        return arith::SelectOp::create(rw, loc, isNaN, x, inRange);
      };
      SmallVector<Value> words;
      for (size_t i = 0; i < sources.size(); i += 4) {
        Value word = zeroOf(rw, loc, rw.getI32Type());
        for (size_t half = 0; half < 2 && i + 2 * half < sources.size(); ++half) {
          Value a = clamped(sources[i + 2 * half]), b = clamped(sources[i + 2 * half + 1]);
          word = e5m2 ? Value(ROCDL::CvtPkBf8F32Op::create(rw, loc, rw.getI32Type(), a, b, word, half == 1))
                      : Value(ROCDL::CvtPkFp8F32Op::create(rw, loc, rw.getI32Type(), a, b, word, half == 1));
        }
        words.push_back(word);
      }
      const int64_t count = int64_t(sources.size()), packed = 4 * int64_t(words.size());
      Value bytes = vector::BitCastOp::create(rw, loc, VectorType::get({packed}, vectorType.getElementType()),
                                              fromElements(rw, loc, VectorType::get({int64_t(words.size())}, rw.getI32Type()), words));
      if (packed != count) // a last lone pair: its dword's high half is not part of the result
        bytes = vector::ShuffleOp::create(rw, loc, bytes, bytes, llvm::to_vector(llvm::seq<int64_t>(0, count)));
      rw.replaceOp(op, bytes);
      return success();
    }
    if (!pairwise) {
      for (Value source : sources)
        elements.push_back(convert(source));
      rw.replaceOp(op, fromElements(rw, loc, vectorType, elements));
      return success();
    }
    // sm_90: cvt.rn.satfinite.e4m3x2/e5m2x2. Each pair is one 16-bit register, element i in
    // the low byte (the instruction's first operand lands in the high byte); the registers
    // are reinterpreted as bytes as a whole, so the pairs are packed into words without
    // per-byte extracts and shifts.
    for (size_t i = 0; i < sources.size(); i += 2)
      elements.push_back(NVVM::ConvertF32x2ToF8x2Op::create(rw, loc, rw.getI16Type(), sources[i + 1], sources[i],
                                                            NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
                                                            /*relu=*/false, target));
    auto pairs = fromElements(rw, loc, VectorType::get({int64_t(elements.size())}, rw.getI16Type()), elements);
    rw.replaceOp(op, vector::BitCastOp::create(rw, loc, vectorType, pairs));
    return success();
  }
};

/// Writes `source` (laid out as `in`) to scratch and builds each register of `out` from the
/// scratch view with `element(coords, view)`, between barriers so every thread sees every
/// element. The fp4 packers rearrange nibbles this way.
Value gatherFromScratch(OpBuilder &b, Location loc, const KernelContext &ctx, const ThreadTile &in, Value source,
                        const ThreadTile &out, function_ref<Value(ArrayRef<Value>, Value)> element) {
  barrier(b, loc);
  Value view = spillToScratch(b, loc, ctx, in, source);
  barrier(b, loc);
  auto coords = coordinates(b, loc, ctx, out);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < out.registers; ++r)
    elements.push_back(element(coords[r], view));
  barrier(b, loc);
  return fromElements(b, loc, out.vectorType, elements);
}

/// Each byte gathers the two nibbles it packs, low first.
struct PackFp4Lowering : GpuPattern<PackFp4Op> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(PackFp4Op op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile in = threadTile(op.getSource().getType()), out = threadTile(op.getType());
    Type i8 = rw.getI8Type();
    rw.replaceOp(op, gatherFromScratch(rw, loc, ctx, in, adaptor.getSource(), out, [&](ArrayRef<Value> coords, Value view) {
      SmallVector<Value> low(coords), high(coords);
      low.back() = arith::MulIOp::create(rw, loc, coords.back(), i32Const(rw, loc, 2));
      high.back() = arith::AddIOp::create(rw, loc, low.back(), i32Const(rw, loc, 1));
      auto nibble = [&](ArrayRef<Value> c) {
        Value raw = memref::LoadOp::create(rw, loc, view, ValueRange{toIndex(rw, loc, linearIndex(rw, loc, c, in.type.getShape()))});
        return arith::ExtUIOp::create(rw, loc, i8, raw).getResult();
      };
      return Value(arith::OrIOp::create(
          rw, loc, nibble(low), arith::ShLIOp::create(rw, loc, nibble(high), arith::ConstantIntOp::create(rw, loc, 4, 8))));
    }));
    return success();
  }
};

/// Each element takes the low or high nibble of its byte.
struct UnpackFp4Lowering : GpuPattern<UnpackFp4Op> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(UnpackFp4Op op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    ThreadTile in = threadTile(op.getSource().getType()), out = threadTile(op.getType());
    rw.replaceOp(op, gatherFromScratch(rw, loc, ctx, in, adaptor.getSource(), out, [&](ArrayRef<Value> coords, Value view) {
      SmallVector<Value> byteCoords(coords);
      byteCoords.back() = arith::DivUIOp::create(rw, loc, coords.back(), i32Const(rw, loc, 2));
      Value byte = loadShared(rw, loc, view, linearIndex(rw, loc, byteCoords, in.type.getShape()), rw.getI8Type());
      Value isHigh = arith::TruncIOp::create(rw, loc, rw.getI1Type(),
                                             arith::RemUIOp::create(rw, loc, coords.back(), i32Const(rw, loc, 2)));
      Value shift = arith::SelectOp::create(rw, loc, isHigh, arith::ConstantIntOp::create(rw, loc, 4, 8),
                                            arith::ConstantIntOp::create(rw, loc, 0, 8));
      Value nibble = arith::TruncIOp::create(rw, loc, rw.getIntegerType(4), arith::ShRUIOp::create(rw, loc, byte, shift));
      return Value(arith::BitcastOp::create(rw, loc, out.type.getElementType(), nibble));
    }));
    return success();
  }
};

/// On NVIDIA four nibbles (a byte pair) at a time: `prmt` picks each nibble's entry from the
/// table's first and second halves (its low three bits index a half's 8 bytes), and a third
/// `prmt` keeps the half its high bit names. Elsewhere (and for a lone byte) byte by byte.
struct LookupNibblesLowering : GpuPattern<LookupNibblesOp> {
  using GpuPattern::GpuPattern;
  LogicalResult matchAndRewrite(LookupNibblesOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    const int64_t count = type.getNumElements();
    ArrayRef<int8_t> table = op.getTable();
    if (ctx.amd || count % 2 != 0) {
      SmallVector<Value> elements;
      for (Value byte : elementsOf(rw, loc, adaptor.getSource()))
        elements.push_back(buildLookupNibbles(rw, loc, byte, table));
      rw.replaceOp(op, fromElements(rw, loc, type, elements));
      return success();
    }
    Type i32 = rw.getI32Type();
    auto word = [&](int first) {
      uint32_t w = 0;
      for (int i = 0; i < 4; ++i)
        w |= uint32_t(uint8_t(table[first + i])) << (8 * i);
      return i32Const(rw, loc, int32_t(w));
    };
    Value quarters[4] = {word(0), word(4), word(8), word(12)};
    // Selectors 32 bits at a time (two byte pairs; prmt reads a selector's low 16 bits), so the
    // masks are computed once a word: the nibbles' low bits index, their high bits pick.
    SmallVector<std::pair<Value, int>> selectors; // a word and its byte pairs
    if (count % 4 == 0) {
      auto words = vector::BitCastOp::create(rw, loc, VectorType::get({count / 4}, i32), adaptor.getSource());
      for (Value w : elementsOf(rw, loc, words))
        selectors.push_back({w, 2});
    } else {
      auto pairs =
          vector::BitCastOp::create(rw, loc, VectorType::get({count / 2}, rw.getI16Type()), adaptor.getSource());
      for (Value pair : elementsOf(rw, loc, pairs))
        selectors.push_back({arith::ExtUIOp::create(rw, loc, i32, pair), 1});
    }
    SmallVector<Value> words;
    for (auto [nibbles, pairsInWord] : selectors) {
      Value index = arith::AndIOp::create(rw, loc, nibbles, i32Const(rw, loc, 0x77777777));
      // Result byte i from byte i of the first half's picks, or (high bit set) of the second's.
      Value half = arith::AndIOp::create(rw, loc, arith::ShRUIOp::create(rw, loc, nibbles, i32Const(rw, loc, 1)),
                                         i32Const(rw, loc, 0x44444444));
      Value pick = arith::OrIOp::create(rw, loc, half, i32Const(rw, loc, 0x32103210));
      for (int p = 0; p < pairsInWord; ++p) {
        Value at = p ? arith::ShRUIOp::create(rw, loc, index, i32Const(rw, loc, 16)) : index;
        Value by = p ? arith::ShRUIOp::create(rw, loc, pick, i32Const(rw, loc, 16)) : pick;
        Value fromLow = NVVM::PermuteOp::create(rw, loc, i32, quarters[0], quarters[1], at, NVVM::PermuteMode::DEFAULT);
        Value fromHigh =
            NVVM::PermuteOp::create(rw, loc, i32, quarters[2], quarters[3], at, NVVM::PermuteMode::DEFAULT);
        words.push_back(NVVM::PermuteOp::create(rw, loc, i32, fromLow, fromHigh, by, NVVM::PermuteMode::DEFAULT));
      }
    }
    Value packed = fromElements(rw, loc, VectorType::get({count / 2}, i32), words);
    rw.replaceOp(op, vector::BitCastOp::create(rw, loc, type, packed));
    return success();
  }
};

/// Elementwise maxima of amax tiles (findMaximaOfBits): integer maxima of the bits.
struct MaximumOfBitsLowering : GpuPattern<arith::MaximumFOp> {
  MaximumOfBitsLowering(const TypeConverter &converter, MLIRContext *context, KernelContext &ctx)
      : GpuPattern(converter, context, ctx, /*benefit=*/2) {} // before ElementwiseLowering
  LogicalResult matchAndRewrite(arith::MaximumFOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    if (!ctx.maximaOfBits.contains(op))
      return failure();
    rw.replaceOp(op, maximumOfBits(rw, op.getLoc(), adaptor.getLhs(), adaptor.getRhs()));
    return success();
  }
};

/// Elementwise arith/math on tiles: the same op on each thread's vector.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), 1, context) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands, ConversionPatternRewriter &rw) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || isa<LookupNibblesOp>(op) || op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return failure();
    Type type = getTypeConverter()->convertType(op->getResult(0).getType());
    auto isMask = [](Type t) {
      auto vector = dyn_cast<VectorType>(t);
      return vector && vector.getElementType().isInteger(1);
    };
    // Masks (i1 vectors) are computed lane by lane: backends pack i1 vectors into integers
    // (NVPTX: a select and a shift per lane), although users take single lanes (the first of
    // each access group) and the rest is dead.
    if (isMask(type) || llvm::any_of(operands, [&](Value v) { return isMask(v.getType()); })) {
      auto vector = cast<VectorType>(type);
      SmallVector<Value> lanes;
      for (int64_t i = 0; i < vector.getNumElements(); ++i) {
        IRMapping mapping;
        for (auto [original, converted] : llvm::zip(op->getOperands(), operands))
          mapping.map(original, isa<VectorType>(converted.getType()) ? extract(rw, op->getLoc(), converted, i)
                                                                     : converted);
        Operation *lane = rw.clone(*op, mapping);
        lane->getResult(0).setType(vector.getElementType());
        lanes.push_back(lane->getResult(0));
      }
      rw.replaceOp(op, fromElements(rw, op->getLoc(), vector, lanes));
      return success();
    }
    IRMapping mapping;
    for (auto [original, converted] : llvm::zip(op->getOperands(), operands))
      mapping.map(original, converted);
    Operation *clone = rw.clone(*op, mapping);
    clone->getResult(0).setType(type);
    rw.replaceOp(op, clone->getResults());
    return success();
  }
};

/// Splat tile constants become per-thread vector constants.
struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type)
      return failure();
    auto dense = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!dense)
      return rw.notifyMatchFailure(op, "only splat tile constants are supported on GPU targets");
    auto vectorType = cast<VectorType>(getTypeConverter()->convertType(type));
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, SplatElementsAttr::get(vectorType, dense.getSplatValue<Attribute>()));
    return success();
  }
};

struct ReturnLowering : OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(func::ReturnOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOpWithNewOp<gpu::ReturnOp>(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct GpuTypeConverter : TypeConverter {
  GpuTypeConverter(MLIRContext *context, bool amd) {
    addConversion([](Type type) { return type; });
    addConversion([](RankedTensorType type) -> Type {
      auto t = maybeThreadTile(type);
      return t ? Type(t->vectorType) : Type();
    });
    addConversion([context](PtrType) -> Type { return LLVM::LLVMPointerType::get(context, kGlobalAddressSpace); });
    addConversion([context, amd](BufferType) -> Type {
      unsigned space = amd ? kBufferResourceAddressSpace : kGlobalAddressSpace;
      return LLVM::LLVMStructType::getLiteral(
          context, {LLVM::LLVMPointerType::get(context, space), IntegerType::get(context, 32)});
    });
    addConversion([context](SharedType type) -> Type {
      auto layout = StridedLayoutAttr::get(context, ShapedType::kDynamic, {1});
      auto space = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
      return MemRefType::get({sharedElements(type)}, memoryType(type.getElementType()), layout, space);
    });
    addCommonTileConversions(*this);
  }
};

/// Scratch bytes an op's lowering uses (0 for most ops). The scratch holds data only while
/// the op runs.
int64_t scratchNeed(Operation *op) {
  if (auto broadcast = dyn_cast<BroadcastOp>(op); broadcast && broadcastFromShared(broadcast))
    return 0;
  if (isa<ConvertLayoutOp, ExpandDimsOp, BroadcastOp, ReshapeOp, TransOp>(op))
    return movementScratch(cast<RankedTensorType>(op->getOperand(0).getType()),
                           cast<RankedTensorType>(op->getResult(0).getType()), movementOf(op));
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return reductionScratch(reduce);
  if (isa<ScanOp, PackFp4Op, UnpackFp4Op, AtomicAddOp>(op)) {
    // The previous values an atomic returns (its first operand is the base pointer).
    Value tile = isa<AtomicAddOp>(op) ? op->getResult(0) : op->getOperand(0);
    auto t = cast<RankedTensorType>(tile.getType());
    return bytesOf(t.getElementType(), t.getNumElements());
  }
  if (auto dot = dyn_cast<DotOp>(op); dot && onMatrixCores(dot))
    return 0;
  if (auto dot = dyn_cast<ScaledDotOp>(op); dot && onMatrixCores(dot))
    return 0;
  if (isa<DotOp, ScaledDotOp>(op))
    return stagedBytes(op->getOperands().drop_back()); // every operand but the accumulator
  return 0;
}

/// Where the scratch and each shared allocation live in the kernel's one workgroup buffer.
/// Program points number ops in pre-order; an allocation is live from its first to its last
/// use, a use inside a loop that the allocation was not created in counting as the whole
/// loop. The scratch starts at byte 0 and each op that uses it holds data there only while it
/// runs, so an allocation starts past the scratch of the uses during or before its live range
/// only: a larger scratch use after it (the epilogue's layout change after a K loop whose
/// operands change layout in a smaller scratch) may overlap its bytes. Such reuse is preceded
/// by an `async_wait pending = 0` and a barrier at the first later scratch use reaching the
/// allocation, so that no copy into or read of the dead allocation is still in flight.
struct SharedPlan {
  int64_t scratchBytes = 0, totalBytes = 0;
  int64_t alignment = kSharedAlignment;         // of the whole buffer
  llvm::DenseMap<Operation *, int64_t> offsets; // shared_alloc -> byte offset
  Operation *reuseFence = nullptr;              // op to precede with wait + barrier
};

SharedPlan planSharedMemory(func::FuncOp kernel) {
  llvm::DenseMap<Operation *, int64_t> point, lastInside;
  SmallVector<std::pair<Operation *, int64_t>> scratchUsers; // with the bytes each needs
  SharedPlan plan;
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    point[op] = int64_t(point.size());
    if (int64_t need = scratchNeed(op)) {
      plan.scratchBytes = std::max(plan.scratchBytes, need);
      scratchUsers.push_back({op, need});
    }
  });
  kernel.walk([&](Operation *op) { // post-order: children are numbered already
    int64_t last = point[op];
    for (Region &region : op->getRegions())
      for (Operation &inner : region.getOps())
        last = std::max(last, lastInside[&inner]);
    lastInside[op] = last;
  });
  // The span of `user`, widened to the outermost loop around it that does not contain `owner`.
  auto span = [&](Operation *user, Operation *owner) {
    Operation *widest = user;
    for (Operation *p = user->getParentOp(); p && p != kernel.getOperation(); p = p->getParentOp())
      if (isa<LoopLikeOpInterface>(p) && !p->isAncestor(owner))
        widest = p;
    return std::pair(point[widest], lastInside[widest]);
  };
  auto alignUp = [](int64_t v) { return (v + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment; };
  // Allocations never share bytes with each other: a later one's first copy could race with
  // the last reads of an earlier one, with no barrier between them.
  struct Placed {
    int64_t offset, bytes;
  };
  SmallVector<Placed> placed;
  int64_t scratchTop = alignUp(plan.scratchBytes);
  plan.totalBytes = scratchTop;
  kernel.walk([&](SharedAllocOp alloc) {
    int64_t first = point[alloc], last = first;
    bool readByWgmma = false;
    for (Value view : sharedViews(alloc))
      for (Operation *user : view.getUsers()) {
        readByWgmma |= isa<SharedDotOp>(user);
        auto [from, to] = span(user, alloc);
        first = std::min(first, from);
        last = std::max(last, to);
      }
    // wgmma applies its swizzle to address bits, so buffers start on a swizzle pattern.
    int64_t alignment = readByWgmma ? kWgmmaSharedAlignment : kSharedAlignment;
    plan.alignment = std::max(plan.alignment, alignment);
    SharedType type = alloc.getType();
    int64_t bytes = alignUp(bytesOf(type.getElementType(), sharedElements(type)));
    // Past the scratch of every use during the live range, and before it: reuse in that
    // direction would need a fence before the allocation.
    int64_t busyScratch = 0;
    for (auto [user, need] : scratchUsers) {
      auto [from, to] = span(user, alloc);
      if (from <= last)
        busyScratch = std::max(busyScratch, need);
    }
    // The lowest offset from `from` on that overlaps no placed allocation.
    auto firstFree = [&](int64_t from) {
      int64_t offset = from;
      for (bool moved = true; moved;) {
        moved = false;
        for (const Placed &p : placed)
          if (offset < p.offset + p.bytes && p.offset < offset + bytes) {
            offset = llvm::alignTo(p.offset + p.bytes, alignment);
            moved = true;
          }
      }
      return offset;
    };
    // The first later scratch use that reaches the allocation's bytes at `offset`.
    auto firstReuse = [&](int64_t offset) {
      Operation *laterUse = nullptr;
      for (auto [user, need] : scratchUsers)
        if (span(user, alloc).first > last && need > offset && (!laterUse || point[user] < point[laterUse]))
          laterUse = user;
      return laterUse;
    };
    int64_t offset = firstFree(busyScratch ? llvm::alignTo(alignUp(busyScratch), alignment) : 0);
    // The fence goes before the op of the allocation's block that holds the first reusing
    // scratch use, so that every path to a later use passes it. Without one (that use is
    // outside the allocation's block) the allocation stays clear of all scratch.
    Operation *fence = nullptr;
    if (Operation *laterUse = firstReuse(offset)) {
      fence = alloc->getBlock()->findAncestorOpInBlock(*laterUse);
      if (!fence)
        offset = firstFree(llvm::alignTo(scratchTop, alignment));
    }
    if (fence && (!plan.reuseFence || point[fence] < point[plan.reuseFence]))
      plan.reuseFence = fence;
    placed.push_back({offset, bytes});
    plan.offsets[alloc] = offset;
    plan.totalBytes = std::max(plan.totalBytes, offset + bytes);
  });
  return plan;
}

LogicalResult checkLayouts(func::FuncOp kernel) {
  WalkResult result = kernel.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (auto tile = dyn_cast<RankedTensorType>(t))
        if (!maybeThreadTile(tile)) {
          op->emitOpError() << "has a tile without a blocked, slice, mma or dot-operand layout that fits it ("
                            << tile << "); run tile-assign-layouts first, or pin a layout";
          return WalkResult::interrupt();
        }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Narrow parts of words taken apart (`trunci(shr(v, shifts))`, each element of `v` a word
/// and its shift a multiple of the narrow width) are the words reinterpreted: one bitcast of
/// the distinct words, in little-endian part order, then a register permutation. A tile that
/// broadcasts each word over its parts (a [.., n, 2] i32 tile of bf16 pairs) reaches here as
/// duplicated extracts; without this LLVM computes each half apart and packs them back.
struct WordPartsAsBitcast : OpRewritePattern<arith::TruncIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncIOp trunc, PatternRewriter &rw) const override {
    auto type = dyn_cast<VectorType>(trunc.getType());
    Operation *shift = trunc.getIn().getDefiningOp();
    if (!type || type.getRank() != 1 || !isa_and_nonnull<arith::ShRUIOp, arith::ShRSIOp>(shift))
      return failure();
    auto words = shift->getOperand(0).getDefiningOp<vector::FromElementsOp>();
    DenseIntElementsAttr amounts;
    if (!words || !matchPattern(shift->getOperand(1), m_Constant(&amounts)))
      return failure();
    const unsigned narrow = type.getElementTypeBitWidth(),
                   wide = cast<VectorType>(words.getType()).getElementTypeBitWidth();
    if (narrow < 8 || wide % narrow != 0) // masks stay lane by lane
      return failure();
    const unsigned parts = wide / narrow;
    SmallVector<Value> distinct;
    llvm::DenseMap<Value, int64_t> wordIndex;
    SmallVector<int64_t> positions;
    for (auto [element, amount] : llvm::zip(words.getElements(), amounts.getValues<APInt>())) {
      uint64_t bits = amount.getZExtValue();
      if (bits % narrow != 0 || bits >= wide)
        return failure();
      auto [it, inserted] = wordIndex.try_emplace(element, int64_t(distinct.size()));
      if (inserted)
        distinct.push_back(element);
      positions.push_back(it->second * parts + int64_t(bits / narrow));
    }
    Location loc = trunc.getLoc();
    auto packed = vector::FromElementsOp::create(
        rw, loc, VectorType::get({int64_t(distinct.size())}, words.getType().getElementType()), distinct);
    Value reinterpreted = vector::BitCastOp::create(
        rw, loc, VectorType::get({int64_t(distinct.size() * parts)}, type.getElementType()), packed);
    bool inOrder = int64_t(positions.size()) == int64_t(distinct.size() * parts) &&
                   llvm::all_of(llvm::enumerate(positions), [](auto p) { return p.value() == int64_t(p.index()); });
    if (inOrder)
      rw.replaceOp(trunc, reinterpreted);
    else
      rw.replaceOpWithNewOp<vector::ShuffleOp>(trunc, reinterpreted, reinterpreted, positions);
    return success();
  }
};

/// bf16 widened to f32 from its 32-bit words (NVIDIA): bf16 is the top half of an f32, so a
/// word's low element is the word shifted up and its high element the word masked, one
/// instruction each. LLVM's NVPTX lowering takes each element apart first (PRMT then a shift
/// for every high half), and rounds a bf16 it widens again one element at a time; from words
/// it packs two a `cvt.rn.bf16x2.f32`.
struct Bf16WidenedFromWords : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp ext, PatternRewriter &rw) const override {
    auto from = dyn_cast<VectorType>(ext.getIn().getType());
    auto to = dyn_cast<VectorType>(ext.getType());
    if (!from || !to || from.getRank() != 1 || !from.getElementType().isBF16() || !to.getElementType().isF32() ||
        from.getNumElements() % 2 != 0)
      return failure();
    const int64_t n = from.getNumElements();
    Location loc = ext.getLoc();
    auto wordType = VectorType::get({n / 2}, rw.getI32Type());
    auto splat = [&](uint32_t v) {
      return arith::ConstantOp::create(rw, loc, DenseElementsAttr::get(wordType, rw.getI32IntegerAttr(int32_t(v))));
    };
    Value words = vector::BitCastOp::create(rw, loc, wordType, ext.getIn());
    Value low = arith::ShLIOp::create(rw, loc, words, splat(16));
    Value high = arith::AndIOp::create(rw, loc, words, splat(0xFFFF0000u));
    rw.replaceOpWithNewOp<arith::BitcastOp>(ext, to, vector::InterleaveOp::create(rw, loc, low, high));
    return success();
  }
};

/// A sum or difference of two narrow floats widened, rounded back to their type, is the narrow
/// operation itself: with at least 2p + 2 bits of significand in the wide type (f32's 24 against
/// bf16's 8 and f16's 11) the double rounding is innocuous (Figueroa, "When is double rounding
/// innocuous?", 1995), and both types share f32's exponent range or overflow alike. NVIDIA adds
/// bf16 and f16 pairs in one instruction (`add.rn.bf16x2`); widened, each pair is unpacks, two
/// f32 adds and a pack (the fused-add RMSNorm's residual at 16384 columns: 379 -> 281 SASS
/// instructions a thread). Kernels marked tile.wide_rounded_sums keep the f32 sum: fewer
/// instructions were not always less time (bench/norms-notes.md, session 45).
struct NarrowRoundedSum : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp trunc, PatternRewriter &rw) const override {
    Operation *sum = trunc.getIn().getDefiningOp();
    if (!isa_and_nonnull<arith::AddFOp, arith::SubFOp>(sum) || !sum->hasOneUse() || trunc.getRoundingmodeAttr())
      return failure();
    Type narrow = getElementTypeOrSelf(trunc.getType()), wide = getElementTypeOrSelf(trunc.getIn().getType());
    if (!isa<BFloat16Type, Float16Type>(narrow) || !wide.isF32())
      return failure();
    SmallVector<Value, 2> operands;
    for (Value operand : sum->getOperands()) {
      auto ext = operand.getDefiningOp<arith::ExtFOp>();
      if (!ext || ext.getIn().getType() != trunc.getType())
        return failure();
      operands.push_back(ext.getIn());
    }
    if (isa<arith::AddFOp>(sum))
      rw.replaceOpWithNewOp<arith::AddFOp>(trunc, operands[0], operands[1]);
    else
      rw.replaceOpWithNewOp<arith::SubFOp>(trunc, operands[0], operands[1]);
    return success();
  }
};

struct ConvertTileToGPU : wavetile::impl::ConvertTileToGPUBase<ConvertTileToGPU> {
  using ConvertTileToGPUBase::ConvertTileToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    bool amd = StringRef(target).starts_with("gfx");
    bool nvidia = StringRef(target).starts_with("sm_");
    if (!amd && !nvidia) {
      module.emitError() << "convert-tile-to-gpu needs target=gfx942|gfx950|sm_90|sm_90a, got '" << target << "'";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> kernels;
    for (auto f : module.getOps<func::FuncOp>())
      if (f->hasAttr(TileDialect::kKernelAttrName))
        kernels.push_back(f);
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(context));
    OpBuilder b(context);
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "wavetile");
    llvm::StringSet<> keptWide; // kernels whose rounded sums stay f32 sums
    for (func::FuncOp kernel : kernels) {
      if (kernel->hasAttr(TileDialect::kWideRoundedSumsAttrName))
        keptWide.insert(kernel.getName());
      if (failed(convertKernel(kernel, gpuModule, amd)))
        return signalPassFailure();
    }
    // Narrowed first: widening bf16 from words takes the extensions apart.
    if (nvidia) {
      RewritePatternSet narrowing(context);
      narrowing.add<NarrowRoundedSum>(context);
      FrozenRewritePatternSet frozen(std::move(narrowing));
      for (auto func : gpuModule.getOps<gpu::GPUFuncOp>())
        if (!keptWide.contains(func.getName()) && failed(applyPatternsGreedily(func, frozen)))
          return signalPassFailure();
    }
    RewritePatternSet peepholes(context);
    peepholes.add<WordPartsAsBitcast>(context);
    if (nvidia)
      peepholes.add<Bf16WidenedFromWords>(context);
    if (failed(applyPatternsGreedily(gpuModule, std::move(peepholes))))
      return signalPassFailure();
  }

  LogicalResult convertKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule, bool amd) {
    MLIRContext *context = kernel.getContext();
    if (failed(checkLayouts(kernel)))
      return failure();
    auto numWarps = kernel->getAttrOfType<IntegerAttr>(TileDialect::kNumWarpsAttrName);
    auto warpSize = kernel->getAttrOfType<IntegerAttr>(TileDialect::kWarpSizeAttrName);
    if (!numWarps || !warpSize)
      return kernel.emitError() << "kernel needs tile.num_warps and tile.warp_size (run tile-assign-layouts)";
    int64_t expectedWarp = amd ? 64 : 32;
    if (warpSize.getInt() != expectedWarp)
      return kernel.emitError() << "kernel laid out for " << warpSize.getInt() << "-thread warps cannot run on "
                                << target << " (" << expectedWarp << "-thread warps)";

    KernelContext ctx;
    ctx.amd = amd;
    ctx.warpgroupDots = bool(kernel.walk([](SharedDotOp) { return WalkResult::interrupt(); }).wasInterrupted());
    if (ctx.warpgroupDots && target != "sm_90a")
      return kernel.emitError() << "tile.shared_dot needs wgmma (target sm_90a), not " << target;
    ctx.warpSize = warpSize.getInt();
    ctx.numWarps = numWarps.getInt();
    int64_t blockSize = ctx.warpSize * ctx.numWarps;

    // The gpu.func: user arguments (already in their GPU types), then the grid size;
    // workgroup buffers for the scratch and for each shared allocation.
    GpuTypeConverter converter(context, amd);
    OpBuilder b(context);
    b.setInsertionPointToEnd(gpuModule.getBody());
    SmallVector<Type> inputs;
    for (auto [i, t] : llvm::enumerate(kernel.getArgumentTypes())) {
      Type converted = converter.convertType(t);
      if (!converted)
        return kernel.emitError() << "GPU kernel argument " << i << " has type " << t
                                  << ", which has no per-thread form; kernels take pointers, buffer views, scalars "
                                     "and laid-out tiles";
      inputs.push_back(converted);
    }
    inputs.append(3, b.getI32Type());
    auto workgroup = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
    SharedPlan plan = planSharedMemory(kernel);
    if (maxSharedBytes > 0 && plan.totalBytes > maxSharedBytes)
      return kernel.emitError() << "kernel needs " << plan.totalBytes << " bytes of shared memory ("
                                << plan.scratchBytes << " of them scratch for layout changes, reductions and dots), "
                                << "but " << target << " kernels may use at most " << int64_t(maxSharedBytes)
                                << "; use smaller tiles or fewer stages";
    // Past the static limit (NVIDIA: 48 KiB) the buffer is dynamic shared memory; the
    // manifest says how much the launch must give.
    bool dynamicShared = maxStaticSharedBytes > 0 && plan.totalBytes > maxStaticSharedBytes;
    if (plan.reuseFence) { // see SharedPlan
      OpBuilder fence(plan.reuseFence);
      AsyncWaitOp::create(fence, plan.reuseFence->getLoc(), ValueRange{}, 0);
      BarrierOp::create(fence, plan.reuseFence->getLoc());
    }
    SmallVector<Type> attributions;
    if (plan.totalBytes && !dynamicShared)
      attributions.push_back(
          MemRefType::get({plan.totalBytes}, b.getI8Type(), MemRefLayoutAttrInterface(), workgroup));
    auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(), b.getFunctionType(inputs, {}),
                                       attributions);
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    if (plan.totalBytes && !dynamicShared) // 128-bit shared accesses rely on this
      func.setWorkgroupAttributionAttr(0, LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(plan.alignment));
    if (dynamicShared)
      func->setAttr(kDynamicSharedBytesAttrName, b.getI64IntegerAttr(plan.totalBytes));
    func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(blockSize), 1, 1}));
    for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
      if (auto name = kernel.getArgAttr(i, "tile.name"))
        func.setArgAttr(i, "tile.name", name);

    // Move the body over (casts bridge the argument types until their users are
    // converted), then compute this thread's ids at the top.
    Block &entry = func.getBody().front();
    Block &oldEntry = kernel.getBody().front();
    Location loc = kernel.getLoc();
    while (!entry.empty()) // the builder's default terminator; the kernel brings its own
      entry.back().erase();
    b.setInsertionPointToStart(&entry);
    for (auto [oldArg, newArg] : llvm::zip(oldEntry.getArguments(), entry.getArguments())) {
      Value bridged = newArg;
      if (oldArg.getType() != newArg.getType())
        bridged = UnrealizedConversionCastOp::create(b, loc, oldArg.getType(), newArg).getResult(0);
      oldArg.replaceAllUsesWith(bridged);
      if (auto divisibility =
              kernel.getArgAttrOfType<IntegerAttr>(oldArg.getArgNumber(), TileDialect::kDivisibilityAttrName))
        ctx.argumentDivisibility[bridged] = powerOfTwoDividing(divisibility.getInt());
    }
    entry.getOperations().splice(entry.end(), oldEntry.getOperations());
    b.setInsertionPointToStart(&entry);
    Value tid = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    ctx.lane = arith::RemUIOp::create(b, loc, tid, i32Const(b, loc, ctx.warpSize));
    ctx.warp = arith::DivUIOp::create(b, loc, tid, i32Const(b, loc, ctx.warpSize));
    unsigned numUser = kernel.getNumArguments();
    for (unsigned i = 0; i < 3; ++i)
      ctx.gridSizes.push_back(entry.getArgument(numUser + i));
    if (plan.totalBytes) {
      // Dynamic shared memory starts at least 16-byte aligned, as the static buffer is.
      Value shared = dynamicShared ? Value(gpu::DynamicSharedMemoryOp::create(
                                         b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                                                 MemRefLayoutAttrInterface(), workgroup)))
                                   : Value(func.getWorkgroupAttributions()[0]);
      auto view = [&](int64_t offset, Type element, int64_t count) -> Value {
        auto type = MemRefType::get({count}, element, MemRefLayoutAttrInterface(), workgroup);
        return memref::ViewOp::create(b, loc, type, shared, indexConst(b, loc, offset), ValueRange{});
      };
      if (plan.scratchBytes)
        ctx.scratch = view(0, b.getI8Type(), plan.scratchBytes);
      for (auto [alloc, offset] : plan.offsets) {
        SharedType type = cast<SharedAllocOp>(alloc).getType();
        ctx.sharedBuffers[alloc] = view(offset, memoryType(type.getElementType()), sharedElements(type));
      }
    }
    kernel.erase();
    analyzeContiguity(func, ctx); // keyed by the original values the patterns see
    if (amd && directToLds)
      ctx.directLdsBytes = target == "gfx950" ? 16 : 4; // CDNA3 moves one dword per lane; CDNA4 up to four
    ctx.ocpFp8 = target != "gfx942";
    ctx.nativeMinimumMaximum = target == "gfx950";
    findMaximaOfBits(func, ctx);
    planDirectCopies(func, ctx);

    ConversionTarget target(*context);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect, NVVM::NVVMDialect,
                           amdgpu::AMDGPUDialect, memref::MemRefDialect, vector::VectorDialect>();
    target.addIllegalOp<func::ReturnOp>();
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
        [&](Operation *op) { return converter.isLegal(op); });
    RewritePatternSet patterns(context);
    patterns.add<ProgramIdLowering, NumProgramsLowering, ArangeLowering, SplatLowering,
                 MovementLowering<ConvertLayoutOp>, MovementLowering<ExpandDimsOp>, MovementLowering<BroadcastOp>,
                 MovementLowering<ReshapeOp>, MovementLowering<TransOp>, LoadLowering, StoreLowering, AtomicAddLowering,
                 MakeBufferLowering, BufferLoadLowering, BufferStoreLowering, SharedAllocLowering, SharedStoreLowering,
                 SharedLoadLowering, SharedSliceLowering, AsyncCopyLowering, AsyncWaitLowering, BarrierLowering, FenceLowering,
                 ReduceLowering, ScanLowering, DotLowering, ScaledDotLowering, SharedDotLowering, FpConvertLowering,
                 PackFp4Lowering, UnpackFp4Lowering, LookupNibblesLowering, MaximumOfBitsLowering>(converter, context,
                                                                                                    ctx);
    patterns.add<ElementwiseLowering, ConstantLowering, ReturnLowering>(converter, context);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    return applyPartialConversion(func, target, std::move(patterns));
  }
};
} // namespace
