//===- UseBufferViews.cpp - bounded pointer arguments through buffer views ==//
//
// A pointer argument marked `tile.within_2gib` is only ever accessed below 2 GiB from its
// start, so a buffer view of that extent reads and writes the same elements. On CDNA a view
// is a raw buffer resource: masks and range checks become an out-of-range offset instead of
// branches, and addresses stay 32-bit offsets from one scalar base.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace wavetile::tile {
#define GEN_PASS_DEF_TILEUSEBUFFERVIEWS
#include "wavetile/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace wavetile::tile

using namespace mlir;
using namespace wavetile::tile;

namespace {

/// Elements of `element` that fit below 2^31 - 1 bytes, or 0 when elements are not whole bytes.
int64_t elementsWithin2GiB(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  if (bits % 8)
    return 0;
  return ((int64_t(1) << 31) - 1) / (bits / 8);
}

struct UseBufferViews : wavetile::tile::impl::TileUseBufferViewsBase<UseBufferViews> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (!kernel->hasAttr(TileDialect::kKernelAttrName) || kernel.isExternal())
      return;
    // One view per marked pointer argument that is accessed, made at the entry.
    llvm::DenseMap<Value, Value> views;
    OpBuilder entry = OpBuilder::atBlockBegin(&kernel.getBody().front());
    auto viewOf = [&](Value base, Value offsets) -> Value {
      auto arg = dyn_cast<BlockArgument>(base);
      if (!arg || arg.getOwner() != &kernel.getBody().front() || !kernel.getArgAttr(arg.getArgNumber(), TileDialect::kWithin2GiBAttrName) ||
          !cast<RankedTensorType>(offsets.getType()).getElementType().isInteger(32))
        return {};
      Type element = cast<PtrType>(base.getType()).getElementType();
      int64_t count = elementsWithin2GiB(element);
      if (!count)
        return {};
      Value &view = views[base];
      if (!view) {
        Value extent = arith::ConstantIntOp::create(entry, arg.getLoc(), count, 32);
        view = MakeBufferOp::create(entry, arg.getLoc(), BufferType::get(&getContext(), element), base, extent);
        // The view stands for the promise: every active access through it is in range.
        view.getDefiningOp()->setAttr(TileDialect::kWithin2GiBAttrName, UnitAttr::get(&getContext()));
      }
      return view;
    };
    kernel.walk([&](LoadOp load) {
      Value view = viewOf(load.getBase(), load.getOffsets());
      if (!view)
        return;
      OpBuilder b(load);
      Value result = BufferLoadOp::create(b, load.getLoc(), load.getType(), view, load.getOffsets(), load.getMask());
      if (Value other = load.getOther(); other && load.getMask()) { // masked-off elements read 0 from the view
        if (!isa<RankedTensorType>(other.getType()))
          other = SplatOp::create(b, load.getLoc(), load.getType(), other);
        result = arith::SelectOp::create(b, load.getLoc(), load.getMask(), result, other);
      }
      load.replaceAllUsesWith(result);
      load.erase();
    });
    kernel.walk([&](StoreOp store) {
      Value view = viewOf(store.getBase(), store.getOffsets());
      if (!view)
        return;
      OpBuilder b(store);
      BufferStoreOp::create(b, store.getLoc(), view, store.getOffsets(), store.getValue(), store.getMask());
      store.erase();
    });
  }
};

} // namespace
