//===- UseWarpgroupDots.cpp - dots whose operands stay in shared memory ---===//
//
// sm_90a's wgmma reads A and B from shared memory through matrix descriptors. A dot of two
// shared loads (A [M, K], and B loaded [N, K] and transposed: weights stored K-contiguous)
// becomes a tile.shared_dot of the buffers themselves, and those buffers take the XOR
// swizzle the descriptors describe. Other dots keep mma.sync.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "wavetile/Dialect/Tile/IR/Distribution.h"

#include "llvm/ADT/SetVector.h"

namespace wavetile::tile {
#define GEN_PASS_DEF_TILEUSEWARPGROUPDOTS
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace wavetile::tile

using namespace mlir;
using namespace wavetile::tile;

namespace {

/// A dot of shared loads, `a` [M, K] and `b` [N, K] (transposed into the dot).
struct Candidate {
  DotOp dot;
  SharedLoadOp a, b;
};

/// The loaded tile is read by nothing but `user`, and has no layout pinned by its author.
bool onlyFeeds(Value tile, Operation *user) {
  auto type = cast<RankedTensorType>(tile.getType());
  return !type.getEncoding() && tile.hasOneUse() && *tile.getUsers().begin() == user;
}

std::optional<Candidate> match(DotOp dot) {
  if (dot.getAtom())
    return std::nullopt; // pinned to a register-operand instruction
  auto a = dot.getA().getDefiningOp<SharedLoadOp>();
  auto trans = dot.getB().getDefiningOp<TransOp>();
  if (!a || !trans || !onlyFeeds(a.getResult(), dot) || !onlyFeeds(trans.getResult(), dot) ||
      trans.getOrder() != ArrayRef<int32_t>{1, 0})
    return std::nullopt;
  auto b = trans.getSource().getDefiningOp<SharedLoadOp>();
  if (!b || !onlyFeeds(b.getResult(), trans))
    return std::nullopt;
  return Candidate{dot, a, b};
}

/// Whether wgmma computes this dot with `warpgroups` warpgroups stacked along M: supported
/// types (i8 summed in i32, the others in f32), M a multiple of 64 per warpgroup, N a
/// multiple of an instruction width, and rows of K that one 32-, 64- or 128-byte swizzle
/// atom holds.
bool fits(Candidate c, int64_t warpgroups) {
  SharedType a = c.a.getSource().getType(), b = c.b.getSource().getType();
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(0);
  return SharedDotOp::takes(a.getElementType(), b.getElementType(), k) &&
         c.dot.getAcc().getType().getElementType() == SharedDotOp::accumulatorFor(a.getElementType()) &&
         m % (64 * warpgroups) == 0 && n % 64 == 0;
}

SharedAllocOp allocOf(Value view) {
  while (auto slice = view.getDefiningOp<SharedSliceOp>())
    view = slice.getSource();
  return view.getDefiningOp<SharedAllocOp>();
}

struct TileUseWarpgroupDots : wavetile::tile::impl::TileUseWarpgroupDotsBase<TileUseWarpgroupDots> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      auto numWarps = kernel->getAttrOfType<IntegerAttr>(TileDialect::kNumWarpsAttrName);
      if (!kernel->hasAttr(TileDialect::kKernelAttrName) || !numWarps || numWarps.getInt() % 4)
        continue;
      SmallVector<Candidate> candidates;
      kernel.walk([&](DotOp dot) {
        if (auto c = match(dot); c && fits(*c, numWarps.getInt() / 4))
          candidates.push_back(*c);
      });
      // A buffer changes layout only when every read of it is an operand read of such a dot
      // and it has no layout of its own.
      DenseSet<Operation *> operandReads;
      for (Candidate c : candidates) {
        operandReads.insert(c.a);
        operandReads.insert(c.b);
      }
      auto convertible = [&](SharedAllocOp alloc) {
        if (!alloc || alloc.getType().getEncoding())
          return false;
        for (Value view : sharedViews(alloc))
          for (Operation *user : view.getUsers())
            if (!isa<SharedSliceOp, AsyncCopyOp, SharedStoreOp>(user) && !operandReads.contains(user))
              return false;
        return true;
      };
      // Decided for every dot before any is rewritten.
      SmallVector<Candidate> chosen;
      llvm::SetVector<SharedAllocOp> buffers;
      for (Candidate c : candidates) {
        SharedAllocOp a = allocOf(c.a.getSource()), b = allocOf(c.b.getSource());
        if (!convertible(a) || !convertible(b))
          continue;
        chosen.push_back(c);
        buffers.insert(a);
        buffers.insert(b);
      }
      for (Candidate c : chosen) {
        OpBuilder builder(c.dot);
        auto dot = SharedDotOp::create(builder, c.dot.getLoc(), c.dot.getType(), c.a.getSource(), c.b.getSource(),
                                       c.dot.getAcc());
        Operation *trans = c.dot.getB().getDefiningOp();
        c.dot.replaceAllUsesWith(dot.getResult());
        c.dot.erase();
        trans->erase();
        c.a.erase();
        c.b.erase();
      }
      for (SharedAllocOp alloc : buffers) {
        SharedType type = alloc.getType();
        setSharedLayout(alloc, operandSharedLayout(&getContext(), type.getShape(), type.getElementType()));
      }
    }
  }
};
} // namespace
