//===- TileToHost.cpp - tile kernels as loops over tensors ----------------===//
//
// The host executes the tile semantics directly: a tile op becomes a loop nest that computes
// each element from the elements of its operands. Layouts, barriers and asynchrony have no
// effect on values, so they disappear here. The result is bufferized and lowered to LLVM by
// the host pipeline.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Conversion/Passes.h"

#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "wavetile/Dialect/Tile/Transforms/LoweringUtils.h"
#include "wavetile/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

namespace wavetile {
#define GEN_PASS_DEF_CONVERTTILETOHOST
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

using namespace mlir;
using namespace wavetile;
using namespace wavetile::tile;

namespace {
//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// The type an element has in memory: formats LLVM lacks (f8, f6, f4) are stored as integers.
Type memoryType(Type element) {
  if (auto f = dyn_cast<FloatType>(element))
    if (!isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(f))
      return IntegerType::get(element.getContext(), f.getWidth());
  return element;
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value zeroOf(OpBuilder &b, Location loc, Type type) {
  if (isa<FloatType>(type) && memoryType(type) != type)
    return arith::BitcastOp::create(b, loc, type, arith::ConstantOp::create(b, loc, b.getIntegerAttr(memoryType(type), 0)));
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

/// A tile whose element at `ivs` is `element(ivs, partial)`, computed in row-major order;
/// `partial` is the tile so far, so an element may read elements that precede it.
using ElementFn = function_ref<Value(OpBuilder &, Location, ValueRange ivs, Value partial)>;
Value buildTile(OpBuilder &b, Location loc, RankedTensorType type, ElementFn element) {
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t dim : type.getShape()) {
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(indexConstant(b, loc, dim));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange iters) -> scf::ValueVector {
        Value value = element(nb, l, ivs, iters[0]);
        return {tensor::InsertOp::create(nb, l, value, iters[0], ivs)};
      });
  return nest.results.front();
}

void forEachElement(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t dim : shape) {
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(indexConstant(b, loc, dim));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, body);
}

Value at(OpBuilder &b, Location loc, Value tile, ValueRange ivs) {
  return tensor::ExtractOp::create(b, loc, tile, ivs);
}

Value elementAddress(OpBuilder &b, Location loc, Value base, Type element, Value offset) {
  return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), memoryType(element), base,
                             ValueRange{offset});
}

Value loadElement(OpBuilder &b, Location loc, Value address, Type element) {
  Value raw = LLVM::LoadOp::create(b, loc, memoryType(element), address);
  return raw.getType() == element ? raw : arith::BitcastOp::create(b, loc, element, raw);
}

void storeElement(OpBuilder &b, Location loc, Value value, Value address) {
  Type memory = memoryType(value.getType());
  if (memory != value.getType())
    value = arith::BitcastOp::create(b, loc, memory, value);
  LLVM::StoreOp::create(b, loc, value, address);
}

Value maskAt(OpBuilder &b, Location loc, Value mask, ValueRange ivs) {
  return mask ? at(b, loc, mask, ivs) : Value();
}

RankedTensorType convertedTile(const TypeConverter &converter, Type type) {
  return cast<RankedTensorType>(converter.convertType(type));
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename Op>
struct TilePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  using Adaptor = typename Op::Adaptor;
  RankedTensorType resultTile(Op op) const {
    return convertedTile(*this->getTypeConverter(), op->getResult(0).getType());
  }
};

struct ArangeLowering : TilePattern<ArangeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ArangeOp op, Adaptor, ConversionPatternRewriter &rw) const override {
    int32_t start = op.getStart();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      Value i = arith::IndexCastOp::create(b, l, b.getI32Type(), ivs[0]);
      return arith::AddIOp::create(b, l, i, arith::ConstantIntOp::create(b, l, start, 32)).getResult();
    }));
    return success();
  }
};

struct SplatLowering : TilePattern<SplatOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SplatOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Value scalar = adaptor.getValue();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op),
                               [&](OpBuilder &, Location, ValueRange, Value) { return scalar; }));
    return success();
  }
};

struct BroadcastLowering : TilePattern<BroadcastOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(BroadcastOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    ArrayRef<int64_t> sourceShape = op.getSource().getType().getShape();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      SmallVector<Value> sourceIvs(ivs);
      for (auto [d, dim] : llvm::enumerate(sourceShape))
        if (dim == 1)
          sourceIvs[d] = indexConstant(b, l, 0);
      return at(b, l, adaptor.getSource(), sourceIvs);
    }));
    return success();
  }
};

struct ExpandDimsLowering : TilePattern<ExpandDimsOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ExpandDimsOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    unsigned axis = op.getAxis();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      SmallVector<Value> sourceIvs(ivs);
      sourceIvs.erase(sourceIvs.begin() + axis);
      return at(b, l, adaptor.getSource(), sourceIvs);
    }));
    return success();
  }
};

struct ReshapeLowering : TilePattern<ReshapeOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    ArrayRef<int64_t> sourceShape = op.getSource().getType().getShape();
    RankedTensorType result = resultTile(op);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      // Row-major linear index in the result, then its coordinates in the source.
      Value linear = indexConstant(b, l, 0);
      for (auto [d, iv] : llvm::enumerate(ivs))
        linear = arith::AddIOp::create(
            b, l, arith::MulIOp::create(b, l, linear, indexConstant(b, l, result.getDimSize(d))), iv);
      SmallVector<Value> sourceIvs(sourceShape.size());
      for (int64_t d = sourceShape.size() - 1; d >= 0; --d) {
        Value dim = indexConstant(b, l, sourceShape[d]);
        sourceIvs[d] = arith::RemUIOp::create(b, l, linear, dim);
        linear = arith::DivUIOp::create(b, l, linear, dim);
      }
      return at(b, l, adaptor.getSource(), sourceIvs);
    }));
    return success();
  }
};

struct TransLowering : TilePattern<TransOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(TransOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    ArrayRef<int32_t> order = op.getOrder();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      SmallVector<Value> sourceIvs(ivs.size());
      for (auto [i, d] : llvm::enumerate(order))
        sourceIvs[d] = ivs[i];
      return at(b, l, adaptor.getSource(), sourceIvs);
    }));
    return success();
  }
};

struct ConvertLayoutLowering : TilePattern<ConvertLayoutOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ConvertLayoutOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, adaptor.getSource());
    return success();
  }
};

struct LoadLowering : TilePattern<LoadOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LoadOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    Type element = result.getElementType();
    Value other = adaptor.getOther();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      return guarded(
          b, l, maskAt(b, l, adaptor.getMask(), ivs),
          [&](OpBuilder &tb) {
            Value offset = at(tb, l, adaptor.getOffsets(), ivs);
            return loadElement(tb, l, elementAddress(tb, l, adaptor.getBase(), element, offset), element);
          },
          [&](OpBuilder &eb) {
            if (!other)
              return zeroOf(eb, l, element);
            return isa<RankedTensorType>(other.getType()) ? at(eb, l, other, ivs) : other;
          });
    }));
    return success();
  }
};

struct StoreLowering : TilePattern<StoreOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(StoreOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Type element = op.getValue().getType().getElementType();
    forEachElement(rw, op.getLoc(), op.getValue().getType().getShape(), [&](OpBuilder &b, Location l, ValueRange ivs) {
      guardedEffect(b, l, maskAt(b, l, adaptor.getMask(), ivs), [&](OpBuilder &tb) {
        Value offset = at(tb, l, adaptor.getOffsets(), ivs);
        storeElement(tb, l, at(tb, l, adaptor.getValue(), ivs),
                     elementAddress(tb, l, adaptor.getBase(), element, offset));
      });
    });
    rw.eraseOp(op);
    return success();
  }
};

/// `llvm.func @__tile_atomic_add_<type>(ptr, value) -> previous`, created once per module.
/// llvm.atomicrmw declares no memory effects, and buffer deallocation rejects such ops in the
/// func.func kernels (it leaves llvm.func alone), so the atomic add lives in this helper.
LLVM::LLVMFuncOp atomicAddHelper(OpBuilder &b, Location loc, ModuleOp module, Type element) {
  std::string name = "__tile_atomic_add_";
  llvm::raw_string_ostream(name) << element;
  if (auto helper = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return helper;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto pointer = LLVM::LLVMPointerType::get(b.getContext());
  auto helper = LLVM::LLVMFuncOp::create(b, loc, name, LLVM::LLVMFunctionType::get(element, {pointer, element}),
                                         LLVM::Linkage::Internal);
  Block *entry = helper.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  auto kind = isa<FloatType>(element) ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  Value previous = LLVM::AtomicRMWOp::create(b, loc, kind, entry->getArgument(0), entry->getArgument(1),
                                             LLVM::AtomicOrdering::monotonic);
  LLVM::ReturnOp::create(b, loc, previous);
  return helper;
}

struct AtomicAddLowering : TilePattern<AtomicAddOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AtomicAddOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    Type element = result.getElementType();
    LLVM::LLVMFuncOp helper = atomicAddHelper(rw, op.getLoc(), op->getParentOfType<ModuleOp>(), element);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      return guarded(
          b, l, maskAt(b, l, adaptor.getMask(), ivs),
          [&](OpBuilder &tb) -> Value {
            Value address = elementAddress(tb, l, adaptor.getBase(), element, at(tb, l, adaptor.getOffsets(), ivs));
            return LLVM::CallOp::create(tb, l, helper, ValueRange{address, at(tb, l, adaptor.getValue(), ivs)})
                .getResult();
          },
          [&](OpBuilder &eb) { return zeroOf(eb, l, element); });
    }));
    return success();
  }
};

/// A buffer view is {base pointer, element count}.
struct MakeBufferLowering : TilePattern<MakeBufferOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(MakeBufferOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Type type = getTypeConverter()->convertType(op.getType());
    Value view = LLVM::PoisonOp::create(rw, loc, type);
    view = LLVM::InsertValueOp::create(rw, loc, view, adaptor.getBase(), ArrayRef<int64_t>{0});
    view = LLVM::InsertValueOp::create(rw, loc, view, adaptor.getNumElements(), ArrayRef<int64_t>{1});
    rw.replaceOp(op, view);
    return success();
  }
};

/// In bounds when offset < count as unsigned 32-bit numbers, as for hardware buffer resources.
Value bufferGuard(OpBuilder &b, Location loc, Value view, Value offset, Value mask) {
  Value count = LLVM::ExtractValueOp::create(b, loc, view, ArrayRef<int64_t>{1});
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, offset, count);
  return mask ? Value(arith::AndIOp::create(b, loc, inBounds, mask)) : inBounds;
}

Value bufferAddress(OpBuilder &b, Location loc, Value view, Type element, Value offset) {
  Value base = LLVM::ExtractValueOp::create(b, loc, view, ArrayRef<int64_t>{0});
  Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), offset);
  return elementAddress(b, loc, base, element, wide);
}

struct BufferLoadLowering : TilePattern<BufferLoadOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(BufferLoadOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    Type element = result.getElementType();
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      Value offset = at(b, l, adaptor.getOffsets(), ivs);
      return guarded(
          b, l, bufferGuard(b, l, adaptor.getBuffer(), offset, maskAt(b, l, adaptor.getMask(), ivs)),
          [&](OpBuilder &tb) { return loadElement(tb, l, bufferAddress(tb, l, adaptor.getBuffer(), element, offset), element); },
          [&](OpBuilder &eb) { return zeroOf(eb, l, element); });
    }));
    return success();
  }
};

struct BufferStoreLowering : TilePattern<BufferStoreOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(BufferStoreOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Type element = op.getValue().getType().getElementType();
    forEachElement(rw, op.getLoc(), op.getValue().getType().getShape(), [&](OpBuilder &b, Location l, ValueRange ivs) {
      Value offset = at(b, l, adaptor.getOffsets(), ivs);
      guardedEffect(b, l, bufferGuard(b, l, adaptor.getBuffer(), offset, maskAt(b, l, adaptor.getMask(), ivs)),
                    [&](OpBuilder &tb) {
                      storeElement(tb, l, at(tb, l, adaptor.getValue(), ivs),
                                   bufferAddress(tb, l, adaptor.getBuffer(), element, offset));
                    });
    });
    rw.eraseOp(op);
    return success();
  }
};

struct SharedAllocLowering : TilePattern<SharedAllocOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SharedAllocOp op, Adaptor, ConversionPatternRewriter &rw) const override {
    auto type = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    auto dense = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = memref::AllocOp::create(rw, op.getLoc(), dense);
    rw.replaceOpWithNewOp<memref::CastOp>(op, type, buffer);
    return success();
  }
};

struct SharedStoreLowering : TilePattern<SharedStoreOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SharedStoreOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    forEachElement(rw, op.getLoc(), op.getValue().getType().getShape(), [&](OpBuilder &b, Location l, ValueRange ivs) {
      memref::StoreOp::create(b, l, at(b, l, adaptor.getValue(), ivs), adaptor.getDest(), ivs);
    });
    rw.eraseOp(op);
    return success();
  }
};

struct SharedLoadLowering : TilePattern<SharedLoadOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SharedLoadOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      return memref::LoadOp::create(b, l, adaptor.getSource(), ivs).getResult();
    }));
    return success();
  }
};

struct SharedSliceLowering : TilePattern<SharedSliceOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(SharedSliceOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Location loc = op.getLoc();
    auto resultType = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    // Entry `index` starts index * numElements(entry) past the source's offset. The offset is
    // computed in arith: a subview with a dynamic offset expands to affine.apply, which the host
    // pipeline does not lower.
    auto source = memref::ExtractStridedMetadataOp::create(rw, loc, adaptor.getSource());
    Value index = arith::IndexCastOp::create(rw, loc, rw.getIndexType(), adaptor.getIndex());
    Value offset = arith::AddIOp::create(
        rw, loc, source.getOffset(),
        arith::MulIOp::create(rw, loc, index, indexConstant(rw, loc, resultType.getNumElements())));
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t dim : resultType.getShape())
      sizes.push_back(rw.getIndexAttr(dim));
    for (int64_t stride : resultType.getStridesAndOffset().first)
      strides.push_back(rw.getIndexAttr(stride));
    rw.replaceOpWithNewOp<memref::ReinterpretCastOp>(op, resultType, adaptor.getSource(), OpFoldResult(offset),
                                                     sizes, strides);
    return success();
  }
};

/// The host completes a copy when it is issued; masked-off (and, from a buffer view,
/// out-of-range) elements become 0.
struct AsyncCopyLowering : TilePattern<AsyncCopyOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(AsyncCopyOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    Type element = op.getDest().getType().getElementType();
    bool view = isa<BufferType>(op.getBase().getType());
    forEachElement(rw, op.getLoc(), op.getDest().getType().getShape(), [&](OpBuilder &b, Location l, ValueRange ivs) {
      Value offset = at(b, l, adaptor.getOffsets(), ivs);
      Value mask = maskAt(b, l, adaptor.getMask(), ivs);
      Value value = guarded(
          b, l, view ? bufferGuard(b, l, adaptor.getBase(), offset, mask) : mask,
          [&](OpBuilder &tb) {
            Value address = view ? bufferAddress(tb, l, adaptor.getBase(), element, offset)
                                 : elementAddress(tb, l, adaptor.getBase(), element, offset);
            return loadElement(tb, l, address, element);
          },
          [&](OpBuilder &eb) { return zeroOf(eb, l, element); });
      memref::StoreOp::create(b, l, value, adaptor.getDest(), ivs);
    });
    rw.replaceOpWithNewOp<arith::ConstantIntOp>(op, 1, 1);
    return success();
  }
};

template <typename Op>
struct EraseLowering : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor, ConversionPatternRewriter &rw) const override {
    rw.eraseOp(op);
    return success();
  }
};

struct DotLowering : TilePattern<DotOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(DotOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    Type acc = result.getElementType();
    int64_t k = op.getA().getType().getDimSize(1);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      Value init = at(b, l, adaptor.getAcc(), ivs);
      auto loop = scf::ForOp::create(
          b, l, indexConstant(b, l, 0), indexConstant(b, l, k), indexConstant(b, l, 1), ValueRange{init},
          [&](OpBuilder &lb, Location ll, Value kk, ValueRange sum) {
            Value x = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getA(), {ivs[0], kk}), acc);
            Value y = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getB(), {kk, ivs[1]}), acc);
            scf::YieldOp::create(lb, ll, buildAdd(lb, ll, sum[0], buildMul(lb, ll, x, y)));
          });
      return loop.getResult(0);
    }));
    return success();
  }
};

struct ScaledDotLowering : TilePattern<ScaledDotOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ScaledDotOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    Type f32 = rw.getF32Type();
    int64_t k = op.getA().getType().getDimSize(1);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      Value init = at(b, l, adaptor.getAcc(), ivs);
      auto loop = scf::ForOp::create(
          b, l, indexConstant(b, l, 0), indexConstant(b, l, k), indexConstant(b, l, 1), ValueRange{init},
          [&](OpBuilder &lb, Location ll, Value kk, ValueRange sum) {
            Value block = arith::DivUIOp::create(lb, ll, kk, indexConstant(lb, ll, 32));
            Value x = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getA(), {ivs[0], kk}), f32);
            Value y = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getB(), {kk, ivs[1]}), f32);
            Value sx = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getAScale(), {ivs[0], block}), f32);
            Value sy = buildWidenForDot(lb, ll, at(lb, ll, adaptor.getBScale(), {block, ivs[1]}), f32);
            Value product = buildMul(lb, ll, buildMul(lb, ll, x, y), buildMul(lb, ll, sx, sy));
            scf::YieldOp::create(lb, ll, buildAdd(lb, ll, sum[0], product));
          });
      return loop.getResult(0);
    }));
    return success();
  }
};

/// Folds elements 1..n-1 of the axis into element 0 (no identity element is needed).
struct ReduceLowering : TilePattern<ReduceOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ReduceOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    unsigned axis = op.getAxis();
    int64_t extent = op.getSource().getType().getDimSize(axis);
    Value source = adaptor.getSource();
    auto reduceAt = [&](OpBuilder &b, Location l, ValueRange outerIvs) -> Value {
      auto sourceIvs = [&](Value i) {
        SmallVector<Value> ivs(outerIvs);
        ivs.insert(ivs.begin() + axis, i);
        return ivs;
      };
      Value first = at(b, l, source, sourceIvs(indexConstant(b, l, 0)));
      auto loop = scf::ForOp::create(
          b, l, indexConstant(b, l, 1), indexConstant(b, l, extent), indexConstant(b, l, 1), ValueRange{first},
          [&](OpBuilder &lb, Location ll, Value i, ValueRange accum) {
            Value next = at(lb, ll, source, sourceIvs(i));
            scf::YieldOp::create(lb, ll, buildCombine(lb, ll, op.getKind(), op.getCombiner(), accum[0], next));
          });
      return loop.getResult(0);
    };
    if (op.getSource().getType().getRank() == 1) {
      rw.replaceOp(op, reduceAt(rw, op.getLoc(), {}));
      return success();
    }
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      return reduceAt(b, l, ivs);
    }));
    return success();
  }
};

/// Row-major order visits index i-1 of the axis before index i, so each element combines
/// its predecessor in the partial result with its own source element.
struct ScanLowering : TilePattern<ScanOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(ScanOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    unsigned axis = op.getAxis();
    RankedTensorType result = resultTile(op);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value partial) {
      Value current = at(b, l, adaptor.getSource(), ivs);
      Value isFirst = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, ivs[axis], indexConstant(b, l, 0));
      return guarded(
          b, l, isFirst, [&](OpBuilder &) { return current; },
          [&](OpBuilder &eb) {
            SmallVector<Value> previous(ivs);
            previous[axis] = arith::SubIOp::create(eb, l, ivs[axis], indexConstant(eb, l, 1));
            return buildCombine(eb, l, op.getKind(), op.getCombiner(), at(eb, l, partial, previous), current);
          });
    }));
    return success();
  }
};

struct FpConvertLowering : OpConversionPattern<FpConvertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(FpConvertOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, buildFpConvert(rw, op.getLoc(), adaptor.getSource(), getElementTypeOrSelf(op.getType()),
                                    op.getRounding(), op.getSaturate()));
    return success();
  }
};

Value fp4Bits(OpBuilder &b, Location loc, Value fp4) {
  Value nibble = arith::BitcastOp::create(b, loc, b.getIntegerType(4), fp4);
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), nibble);
}

struct PackFp4Lowering : TilePattern<PackFp4Op> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(PackFp4Op op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      SmallVector<Value> lowIvs(ivs), highIvs(ivs);
      Value twice = arith::MulIOp::create(b, l, ivs.back(), indexConstant(b, l, 2));
      lowIvs.back() = twice;
      highIvs.back() = arith::AddIOp::create(b, l, twice, indexConstant(b, l, 1));
      Value low = fp4Bits(b, l, at(b, l, adaptor.getSource(), lowIvs));
      Value high = fp4Bits(b, l, at(b, l, adaptor.getSource(), highIvs));
      Value shifted = arith::ShLIOp::create(b, l, high, arith::ConstantIntOp::create(b, l, 4, 8));
      return arith::OrIOp::create(b, l, low, shifted).getResult();
    }));
    return success();
  }
};

struct UnpackFp4Lowering : TilePattern<UnpackFp4Op> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(UnpackFp4Op op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    RankedTensorType result = resultTile(op);
    rw.replaceOp(op, buildTile(rw, op.getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      SmallVector<Value> byteIvs(ivs);
      Value two = indexConstant(b, l, 2);
      byteIvs.back() = arith::DivUIOp::create(b, l, ivs.back(), two);
      Value byte = at(b, l, adaptor.getSource(), byteIvs);
      Value isHigh = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, arith::RemUIOp::create(b, l, ivs.back(), two),
                                           indexConstant(b, l, 1));
      Value shift = arith::SelectOp::create(b, l, isHigh, arith::ConstantIntOp::create(b, l, 4, 8),
                                            arith::ConstantIntOp::create(b, l, 0, 8));
      Value nibble = arith::TruncIOp::create(b, l, b.getIntegerType(4), arith::ShRUIOp::create(b, l, byte, shift));
      return arith::BitcastOp::create(b, l, result.getElementType(), nibble).getResult();
    }));
    return success();
  }
};

struct LookupNibblesLowering : TilePattern<LookupNibblesOp> {
  using TilePattern::TilePattern;
  LogicalResult matchAndRewrite(LookupNibblesOp op, Adaptor adaptor, ConversionPatternRewriter &rw) const override {
    rw.replaceOp(op, buildTile(rw, op.getLoc(), resultTile(op), [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
                   return buildLookupNibbles(b, l, at(b, l, adaptor.getSource(), ivs), op.getTable());
                 }));
    return success();
  }
};

/// Any elementwise arith/math op on tiles: the same op on each element.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, context) {}
  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands, ConversionPatternRewriter &rw) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || isa<LookupNibblesOp>(op) || op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return failure();
    RankedTensorType result = convertedTile(*getTypeConverter(), op->getResult(0).getType());
    rw.replaceOp(op, buildTile(rw, op->getLoc(), result, [&](OpBuilder &b, Location l, ValueRange ivs, Value) {
      // Clone with scalar operands, then retype: keeps every inherent attribute as it was.
      IRMapping mapping;
      for (auto [original, converted] : llvm::zip(op->getOperands(), operands))
        mapping.map(original, isa<RankedTensorType>(converted.getType()) ? at(b, l, converted, ivs) : converted);
      Operation *scalarOp = b.clone(*op, mapping);
      scalarOp->getResult(0).setType(result.getElementType());
      return scalarOp->getResult(0);
    }));
    return success();
  }
};

/// Tensor constants lose their layout encoding.
struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor, ConversionPatternRewriter &rw) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    Type type = getTypeConverter()->convertType(op.getType());
    if (!dense || type == op.getType())
      return failure();
    rw.replaceOpWithNewOp<arith::ConstantOp>(op, dense.reshape(cast<ShapedType>(type)));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct HostTypeConverter : TypeConverter {
  explicit HostTypeConverter(MLIRContext *context) {
    addConversion([](Type type) { return type; });
    addConversion([](RankedTensorType type) -> Type { return stripEncoding(type); });
    addConversion([context](PtrType) -> Type { return LLVM::LLVMPointerType::get(context); });
    addConversion([context](BufferType) -> Type {
      return LLVM::LLVMStructType::getLiteral(context, {LLVM::LLVMPointerType::get(context), IntegerType::get(context, 32)});
    });
    addConversion([](SharedType type) -> Type {
      // Row-major strides with a dynamic offset, so slices of a buffer share its type family.
      SmallVector<int64_t> strides(type.getShape().size(), 1);
      for (int64_t d = int64_t(strides.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * type.getShape()[d + 1];
      auto layout = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides);
      return MemRefType::get(type.getShape(), type.getElementType(), layout);
    });
    addCommonTileConversions(*this);
  }
};

/// Program ids and grid sizes become six trailing i32 arguments of the kernel.
void addProgramArguments(func::FuncOp kernel) {
  MLIRContext *context = kernel.getContext();
  unsigned first = kernel.getNumArguments();
  SmallVector<unsigned> positions(6, first);
  SmallVector<Type> types(6, IntegerType::get(context, 32));
  SmallVector<DictionaryAttr> attrs(6, DictionaryAttr::get(context));
  SmallVector<Location> locs(6, kernel.getLoc());
  if (failed(kernel.insertArguments(positions, types, attrs, locs)))
    llvm_unreachable("appending arguments to a function cannot fail");
  kernel.walk([&](Operation *op) {
    if (auto id = dyn_cast<ProgramIdOp>(op)) {
      id.replaceAllUsesWith(kernel.getArgument(first + id.getAxis()));
      id.erase();
    } else if (auto count = dyn_cast<NumProgramsOp>(op)) {
      count.replaceAllUsesWith(kernel.getArgument(first + 3 + count.getAxis()));
      count.erase();
    }
  });
}

/// @k__grid(args..., gx, gy, gz) runs every program of the grid in order z, y, x.
void buildGridDriver(func::FuncOp kernel) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  Location loc = kernel.getLoc();
  Type i32 = b.getI32Type();
  unsigned numUserArgs = kernel.getNumArguments() - 6;
  SmallVector<Type> argTypes(kernel.getArgumentTypes().take_front(numUserArgs));
  argTypes.append(3, i32);
  auto driver = func::FuncOp::create(b, loc, (kernel.getName() + kHostGridSuffix).str(),
                                     b.getFunctionType(argTypes, {}));
  Block *entry = driver.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> gridSizes, lbs, ubs, steps;
  for (unsigned axis = 0; axis < 3; ++axis)
    gridSizes.push_back(entry->getArgument(numUserArgs + axis));
  for (int axis = 2; axis >= 0; --axis) { // z outermost
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), gridSizes[axis]));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, [&](OpBuilder &nb, Location l, ValueRange zyx) {
    SmallVector<Value> args(entry->getArguments().take_front(numUserArgs));
    for (int axis = 0; axis < 3; ++axis)
      args.push_back(arith::IndexCastUIOp::create(nb, l, i32, zyx[2 - axis]));
    args.append(gridSizes);
    func::CallOp::create(nb, l, kernel, args);
  });
  func::ReturnOp::create(b, loc);
}

struct ConvertTileToHost : wavetile::impl::ConvertTileToHostBase<ConvertTileToHost> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr(TileDialect::kKernelAttrName))
        kernels.push_back(f);
    });
    for (func::FuncOp kernel : kernels)
      addProgramArguments(kernel);
    module->removeAttr(TileDialect::kWarpSizeAttrName);

    HostTypeConverter converter(context);
    ConversionTarget target(*context);
    target.addIllegalDialect<TileDialect>();
    target.addLegalDialect<LLVM::LLVMDialect, memref::MemRefDialect, tensor::TensorDialect>();
    target.addLegalOp<ModuleOp>();
    auto typesLegal = [&](Operation *op) { return converter.isLegal(op); };
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>([&](Operation *op) {
      bool elementwiseOnTiles = op->hasTrait<OpTrait::Elementwise>() &&
                                llvm::any_of(op->getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
      return !elementwiseOnTiles && converter.isLegal(op);
    });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp f) {
      return converter.isSignatureLegal(f.getFunctionType()) && converter.isLegal(&f.getBody());
    });
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(typesLegal);

    RewritePatternSet patterns(context);
    // A program is one thread, and a launch runs its programs one after another on the
    // calling thread: barriers and fences order nothing.
    patterns.add<ArangeLowering, SplatLowering, BroadcastLowering, ExpandDimsLowering, ReshapeLowering, TransLowering,
                 ConvertLayoutLowering, LoadLowering, StoreLowering, AtomicAddLowering, MakeBufferLowering,
                 BufferLoadLowering, BufferStoreLowering, SharedAllocLowering, SharedStoreLowering, SharedLoadLowering,
                 SharedSliceLowering, AsyncCopyLowering, EraseLowering<AsyncWaitOp>, EraseLowering<BarrierOp>,
                 EraseLowering<FenceOp>,
                 DotLowering, ScaledDotLowering, ReduceLowering, ScanLowering, FpConvertLowering, PackFp4Lowering,
                 UnpackFp4Lowering, LookupNibblesLowering, ConstantLowering, ElementwiseLowering>(converter, context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    for (func::FuncOp kernel : kernels) {
      // Kernel attributes describe the tile program; the host function no longer is one.
      for (StringRef attr : {TileDialect::kKernelAttrName, TileDialect::kNumWarpsAttrName,
                             TileDialect::kWarpSizeAttrName, TileDialect::kParamsAttrName})
        kernel->removeAttr(attr);
      buildGridDriver(kernel);
    }
  }
};
} // namespace
