//===- TileOps.cpp - verifiers and folders of tile ops --------------------===//

#include "wavetile/Dialect/Tile/IR/TileDialect.h"

#include "wavetile/Atoms/AtomTable.h"
#include "wavetile/Dialect/Tile/IR/Distribution.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace wavetile::tile;

#define GET_OP_CLASSES
#include "wavetile/Dialect/Tile/IR/TileOps.cpp.inc"

namespace {
/// Prints a shape as 4x8 for diagnostics.
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? "x" : "") + std::to_string(dim);
  return text.empty() ? "scalar" : text;
}

LogicalResult verifySameShape(Operation *op, RankedTensorType a, RankedTensorType b,
                              StringRef aName, StringRef bName) {
  if (a.getShape() != b.getShape())
    return op->emitOpError() << aName << " shape " << shapeString(a.getShape()) << " differs from "
                             << bName << " shape " << shapeString(b.getShape());
  return success();
}

/// Offsets, mask and data of a memory access must have one shape.
LogicalResult verifyAccess(Operation *op, Type elementType, Value offsets, Value mask,
                           RankedTensorType data) {
  auto offsetType = cast<RankedTensorType>(offsets.getType());
  if (failed(verifySameShape(op, offsetType, data, "offsets", "data")))
    return failure();
  if (mask && failed(verifySameShape(op, cast<RankedTensorType>(mask.getType()), data, "mask", "data")))
    return failure();
  if (data.getElementType() != elementType)
    return op->emitOpError() << "data element type " << data.getElementType()
                             << " does not match the pointee type " << elementType;
  return success();
}

bool isFloatOfWidthAtMost(Type type, unsigned bits) {
  return isa<FloatType>(type) && type.getIntOrFloatBitWidth() <= bits;
}
} // namespace

LogicalResult ArangeOp::verify() {
  auto type = getResult().getType();
  if (type.getRank() != 1)
    return emitOpError() << "result must be 1-D";
  // I32Attr getters return uint32_t; the bounds are signed.
  int64_t start = int32_t(getStart()), end = int32_t(getEnd());
  int64_t length = end - start;
  if (length <= 0)
    return emitOpError() << "end (" << end << ") must be greater than start (" << start << ")";
  if (type.getDimSize(0) != length)
    return emitOpError() << "result has " << type.getDimSize(0) << " elements, but " << start
                         << " to " << end << " has " << length;
  return success();
}

LogicalResult SplatOp::verify() {
  if (getValue().getType() != getResult().getType().getElementType())
    return emitOpError() << "scalar of type " << getValue().getType()
                         << " cannot fill a tile of " << getResult().getType().getElementType();
  return success();
}

/// A splat of a constant is a constant tile, which lets arith folders see through it.
OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  // A constant cannot carry a layout; laid-out splats stay splats.
  if (!adaptor.getValue() || getResult().getType().getEncoding())
    return {};
  return SplatElementsAttr::get(getResult().getType(), adaptor.getValue());
}

LogicalResult BroadcastOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "element types differ";
  if (source.getRank() != result.getRank())
    return emitOpError() << "source rank " << source.getRank() << " differs from result rank "
                         << result.getRank() << " (use expand_dims first)";
  for (int64_t d = 0; d < source.getRank(); ++d)
    if (source.getDimSize(d) != 1 && source.getDimSize(d) != result.getDimSize(d))
      return emitOpError() << "dimension " << d << " of size " << source.getDimSize(d)
                           << " cannot broadcast to " << result.getDimSize(d);
  return success();
}

LogicalResult ExpandDimsOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  int64_t axis = int32_t(getAxis()); // signed: the getter returns uint32_t
  if (axis < 0 || axis > source.getRank())
    return emitOpError() << "axis " << axis << " out of range for a tile of rank " << source.getRank();
  SmallVector<int64_t> expected(source.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (result.getShape() != ArrayRef<int64_t>(expected) ||
      result.getElementType() != source.getElementType())
    return emitOpError() << "result must have shape " << shapeString(expected) << " and element type "
                         << source.getElementType();
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "element types differ";
  if (source.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape " << source.getNumElements() << " elements into "
                         << result.getNumElements();
  return success();
}

LogicalResult TransOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  ArrayRef<int32_t> order = getOrder();
  if (int64_t(order.size()) != source.getRank())
    return emitOpError() << "order has " << order.size() << " entries for a tile of rank "
                         << source.getRank();
  SmallVector<bool> seen(order.size(), false);
  for (int32_t d : order) {
    if (d < 0 || d >= int32_t(order.size()) || seen[d])
      return emitOpError() << "order must be a permutation";
    seen[d] = true;
  }
  for (auto [i, d] : llvm::enumerate(order))
    if (result.getDimSize(i) != source.getDimSize(d))
      return emitOpError() << "result dimension " << i << " must equal source dimension " << d;
  if (result.getElementType() != source.getElementType())
    return emitOpError() << "element types differ";
  return success();
}

LogicalResult ConvertLayoutOp::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  if (source.getShape() != result.getShape() || source.getElementType() != result.getElementType())
    return emitOpError() << "changes only the layout: shape and element type must match";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSource().getType() == getResult().getType())
    return getSource();
  if (auto inner = getSource().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSource().getType() == getResult().getType())
      return inner.getSource();
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  return {};
}

LogicalResult ConvertLayoutOp::canonicalize(ConvertLayoutOp op, PatternRewriter &rewriter) {
  auto splat = op.getSource().getDefiningOp<SplatOp>();
  if (!splat)
    return failure();
  rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getValue());
  return success();
}

LogicalResult LoadOp::verify() {
  auto result = getResult().getType();
  if (failed(verifyAccess(*this, getBase().getType().getElementType(), getOffsets(), getMask(), result)))
    return failure();
  if (Value other = getOther()) {
    if (!getMask())
      return emitOpError() << "'other' only makes sense with a mask";
    Type otherType = other.getType();
    auto otherTile = dyn_cast<RankedTensorType>(otherType);
    if (otherTile ? otherTile.getShape() != result.getShape() ||
                        otherTile.getElementType() != result.getElementType()
                  : otherType != result.getElementType())
      return emitOpError() << "'other' must be a " << result.getElementType()
                           << " scalar or a tile of the result type";
  }
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyAccess(*this, getBase().getType().getElementType(), getOffsets(), getMask(),
                      getValue().getType());
}

LogicalResult AtomicAddOp::verify() {
  auto value = getValue().getType();
  if (failed(verifyAccess(*this, getBase().getType().getElementType(), getOffsets(), getMask(), value)))
    return failure();
  Type element = value.getElementType();
  if (!element.isF32() && !element.isInteger(32))
    return emitOpError() << "atomic add supports f32 and i32, got " << element;
  if (getResult().getType().getShape() != value.getShape() ||
      getResult().getType().getElementType() != element)
    return emitOpError() << "result must have the value's type";
  return success();
}

LogicalResult MakeBufferOp::verify() {
  if (getBase().getType().getElementType() != getResult().getType().getElementType())
    return emitOpError() << "buffer element type must match the pointer's";
  return success();
}

LogicalResult BufferLoadOp::verify() {
  return verifyAccess(*this, getBuffer().getType().getElementType(), getOffsets(), getMask(),
                      getResult().getType());
}

LogicalResult BufferStoreOp::verify() {
  return verifyAccess(*this, getBuffer().getType().getElementType(), getOffsets(), getMask(),
                      getValue().getType());
}

static LogicalResult verifySharedTile(Operation *op, SharedType shared, RankedTensorType tile) {
  if (shared.getShape() != tile.getShape() || shared.getElementType() != tile.getElementType())
    return op->emitOpError() << "tile " << tile << " does not match shared buffer " << shared;
  return success();
}

LogicalResult SharedStoreOp::verify() {
  return verifySharedTile(*this, getDest().getType(), getValue().getType());
}

LogicalResult SharedLoadOp::verify() {
  return verifySharedTile(*this, getSource().getType(), getResult().getType());
}

LogicalResult SharedSliceOp::verify() {
  SharedType source = getSource().getType(), result = getResult().getType();
  if (source.getRank() < 2)
    return emitOpError() << "slicing needs a shared buffer of rank >= 2";
  SharedType entry = source.entryType();
  if (!entry)
    return emitOpError() << "cannot slice " << source << ": its layout swizzles or pads along dimension 0";
  if (result != entry)
    return emitOpError() << "result must drop dimension 0 of the source: expected " << entry << ", got " << result;
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  SharedType dest = getDest().getType();
  auto offsets = cast<RankedTensorType>(getOffsets().getType());
  if (offsets.getShape() != dest.getShape())
    return emitOpError() << "offsets shape " << shapeString(offsets.getShape())
                         << " does not match the shared buffer " << shapeString(dest.getShape());
  if (Value mask = getMask())
    if (cast<RankedTensorType>(mask.getType()).getShape() != dest.getShape())
      return emitOpError() << "mask shape does not match the shared buffer";
  Type source = isa<BufferType>(getBase().getType()) ? cast<BufferType>(getBase().getType()).getElementType()
                                                     : cast<PtrType>(getBase().getType()).getElementType();
  if (dest.getElementType() != source)
    return emitOpError() << "source and shared buffer element types differ";
  if (isa<BufferType>(getBase().getType()) && !offsets.getElementType().isInteger(32))
    return emitOpError() << "offsets into a buffer view must be i32, got " << offsets.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// dot / scaled_dot
//===----------------------------------------------------------------------===//

static LogicalResult verifyMatmulShapes(Operation *op, RankedTensorType a, RankedTensorType b,
                                        RankedTensorType acc, RankedTensorType result,
                                        int64_t aColsPerK = 1) {
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return op->emitOpError() << "operands must be 2-D tiles";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1) * aColsPerK, n = b.getDimSize(1);
  if (b.getDimSize(0) != k)
    return op->emitOpError() << "a is " << m << "x" << k << " but b has " << b.getDimSize(0)
                             << " rows; the K dimensions must agree";
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return op->emitOpError() << "accumulator must be " << m << "x" << n << ", got "
                             << shapeString(acc.getShape());
  if (result.getShape() != acc.getShape() || result.getElementType() != acc.getElementType())
    return op->emitOpError() << "result must have the accumulator's type";
  return success();
}

/// The builtin type an atom-table element kind names.
static Type typeOfKind(MLIRContext *context, wavetile::atoms::ScalarKind kind) {
  return parseType(wavetile::atoms::scalarKindName(kind), context);
}

static LogicalResult verifyPinnedAtom(Operation *op, std::optional<StringRef> atomName, Type a,
                                      Type b, Type acc, bool scaled) {
  if (!atomName)
    return success();
  const auto *atom = wavetile::atoms::lookupAtom(std::string_view(atomName->data(), atomName->size()));
  if (!atom)
    return op->emitOpError() << "pins unknown atom '" << *atomName << "'";
  if (atom->scaleType.has_value() != scaled)
    return op->emitOpError() << "atom '" << *atomName << "' is "
                             << (scaled ? "an unscaled" : "a scaled")
                             << " instruction and cannot implement this op";
  MLIRContext *context = op->getContext();
  Type atomA = typeOfKind(context, atom->aType), atomB = typeOfKind(context, atom->bType),
       atomC = typeOfKind(context, atom->cType);
  if (atomA != a || atomB != b || atomC != acc)
    return op->emitOpError() << "atom '" << *atomName << "' computes " << atomA << " x " << atomB
                             << " -> " << atomC << ", but the operands are " << a << " x " << b
                             << " -> " << acc;
  return success();
}

LogicalResult DotOp::verify() {
  auto a = getA().getType(), b = getB().getType(), acc = getAcc().getType();
  if (failed(verifyMatmulShapes(*this, a, b, acc, getResult().getType())))
    return failure();
  Type aElem = a.getElementType(), bElem = b.getElementType(), accElem = acc.getElementType();
  bool floatOperands = isFloatOfWidthAtMost(aElem, 32) && isFloatOfWidthAtMost(bElem, 32);
  bool intOperands = aElem.isInteger(8) && bElem.isInteger(8);
  if (!floatOperands && !intOperands)
    return emitOpError() << "operands must both be floats or both be i8, got " << aElem << " and "
                         << bElem;
  if (floatOperands && !accElem.isF32())
    return emitOpError() << "float operands accumulate in f32, got " << accElem;
  if (intOperands && !accElem.isInteger(32))
    return emitOpError() << "i8 operands accumulate in i32, got " << accElem;
  return verifyPinnedAtom(*this, getAtom(), aElem, bElem, accElem, /*scaled=*/false);
}

LogicalResult SharedDotOp::verify() {
  SharedType a = getA().getType(), b = getB().getType();
  RankedTensorType acc = getAcc().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || acc.getRank() != 2)
    return emitOpError() << "operands must be 2-D";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(0);
  if (b.getDimSize(1) != k)
    return emitOpError() << "a is " << m << "x" << k << " and b (N x K) is " << n << "x" << b.getDimSize(1)
                         << "; the K dimensions must agree";
  if (acc.getDimSize(0) != m || acc.getDimSize(1) != n)
    return emitOpError() << "accumulator must be " << m << "x" << n << ", got " << shapeString(acc.getShape());
  if (getResult().getType().getShape() != acc.getShape() ||
      getResult().getType().getElementType() != acc.getElementType())
    return emitOpError() << "result must have the accumulator's type";
  Type aElem = a.getElementType(), bElem = b.getElementType();
  if (!takes(aElem, bElem, k))
    return emitOpError() << "operands must both be bf16, both f16, both i8, or f8E4M3FN/f8E5M2, in K rows of 32, 64 "
                            "or 128 bytes; got "
                         << aElem << " and " << bElem << " with K = " << k;
  if (acc.getElementType() != accumulatorFor(aElem))
    return emitOpError() << (aElem.isInteger(8) ? "accumulates i8 products in i32, got " : "accumulates in f32, got ")
                         << acc.getElementType();
  // The lowering describes the buffers by this swizzle; any other placement would be read wrong.
  for (SharedType operand : {a, b})
    if (operand.getEncoding() != operandSharedLayout(getContext(), operand.getShape(), operand.getElementType()))
      return emitOpError() << "operand " << operand << " must have the swizzled layout "
                           << operandSharedLayout(getContext(), operand.getShape(), operand.getElementType());
  return success();
}

Type SharedDotOp::accumulatorFor(Type element) {
  MLIRContext *context = element.getContext();
  return element.isInteger(8) ? Type(IntegerType::get(context, 32)) : Type(Float32Type::get(context));
}

bool SharedDotOp::takes(Type a, Type b, int64_t k) {
  auto isFp8 = [](Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); };
  bool halves = a == b && (a.isBF16() || a.isF16() || a.isInteger(8));
  int64_t rowBytes = k * a.getIntOrFloatBitWidth() / 8;
  return (halves || (isFp8(a) && isFp8(b))) && (rowBytes == 32 || rowBytes == 64 || rowBytes == 128);
}

static bool isMxElementType(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type, Float6E2M3FNType, Float6E3M2FNType,
             Float4E2M1FNType>(type);
}

LogicalResult ScaledDotOp::verify() {
  auto a = getA().getType(), b = getB().getType(), acc = getAcc().getType();
  auto aScale = getAScale().getType(), bScale = getBScale().getType();
  if (failed(verifyMatmulShapes(*this, a, b, acc, getResult().getType())))
    return failure();
  if (!isMxElementType(a.getElementType()) || !isMxElementType(b.getElementType()))
    return emitOpError() << "operands must be MX formats (f8E4M3FN, f8E5M2, f6E2M3FN, f6E3M2FN, "
                            "f4E2M1FN), got "
                         << a.getElementType() << " and " << b.getElementType();
  if (!acc.getElementType().isF32())
    return emitOpError() << "accumulates in f32";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (k % 32 != 0)
    return emitOpError() << "K (" << k << ") must be a multiple of the 32-element scale block";
  if (!isa<Float8E8M0FNUType>(aScale.getElementType()) || !isa<Float8E8M0FNUType>(bScale.getElementType()))
    return emitOpError() << "scales must be f8E8M0FNU";
  if (aScale.getShape() != ArrayRef<int64_t>{m, k / 32})
    return emitOpError() << "a scale must be " << m << "x" << k / 32 << ", got " << shapeString(aScale.getShape());
  if (bScale.getShape() != ArrayRef<int64_t>{k / 32, n})
    return emitOpError() << "b scale must be " << k / 32 << "x" << n << ", got " << shapeString(bScale.getShape());
  return verifyPinnedAtom(*this, getAtom(), a.getElementType(), b.getElementType(),
                          acc.getElementType(), /*scaled=*/true);
}

//===----------------------------------------------------------------------===//
// reduce / scan
//===----------------------------------------------------------------------===//

static LogicalResult verifyCombiner(Operation *op, CombineKind kind, Region &combiner, Type element) {
  if (kind != CombineKind::custom) {
    if (!combiner.empty())
      return op->emitOpError() << "only a 'custom' combiner takes a region";
    if (!isa<FloatType, IntegerType>(element))
      return op->emitOpError() << "sum/max/min need integer or float elements";
    return success();
  }
  if (combiner.empty())
    return op->emitOpError() << "a 'custom' combiner needs a region";
  Block &body = combiner.front();
  if (body.getNumArguments() != 2 || body.getArgument(0).getType() != element ||
      body.getArgument(1).getType() != element)
    return op->emitOpError() << "the combiner region takes two " << element << " arguments";
  // Not body.getTerminator(): the block may be empty or end in a non-terminator here.
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield || yield.getValue().getType() != element)
    return op->emitOpError() << "the combiner region must yield one " << element;
  return success();
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << "axis " << axis << " out of range for a tile of rank " << rank;
  return success();
}

LogicalResult ReduceOp::verify() {
  auto source = getSource().getType();
  int64_t axis = int32_t(getAxis()); // signed: the getter returns uint32_t
  if (failed(verifyAxis(*this, axis, source.getRank())))
    return failure();
  Type element = source.getElementType();
  if (source.getRank() == 1) {
    if (getResult().getType() != element)
      return emitOpError() << "reducing a 1-D tile gives a " << element << " scalar";
  } else {
    SmallVector<int64_t> expected(source.getShape());
    expected.erase(expected.begin() + axis);
    auto result = dyn_cast<RankedTensorType>(getResult().getType());
    if (!result || result.getShape() != ArrayRef<int64_t>(expected) || result.getElementType() != element)
      return emitOpError() << "result must be a " << shapeString(expected) << " tile of " << element;
  }
  return verifyCombiner(*this, getKind(), getCombiner(), element);
}

LogicalResult ScanOp::verify() {
  auto source = getSource().getType();
  if (failed(verifyAxis(*this, int32_t(getAxis()), source.getRank())))
    return failure();
  auto result = getResult().getType();
  if (result.getShape() != source.getShape() || result.getElementType() != source.getElementType())
    return emitOpError() << "result must have the source's shape and element type";
  return verifyCombiner(*this, getKind(), getCombiner(), source.getElementType());
}

//===----------------------------------------------------------------------===//
// Low-precision formats
//===----------------------------------------------------------------------===//

static bool isWideFloat(Type t) { return t.isF32() || t.isF16() || t.isBF16(); }

static bool isNarrowFloat(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type, Float8E4M3FNUZType, Float8E5M2FNUZType,
             Float6E2M3FNType, Float6E3M2FNType, Float4E2M1FNType, Float8E8M0FNUType>(t);
}

LogicalResult FpConvertOp::verify() {
  Type source = getElementTypeOrSelf(getSource().getType());
  Type result = getElementTypeOrSelf(getResult().getType());
  bool narrowing = isWideFloat(source) && isNarrowFloat(result);
  bool widening = isNarrowFloat(source) && isWideFloat(result);
  if (!narrowing && !widening)
    return emitOpError() << "converts between f32/f16/bf16 and an 8/6/4-bit float format, not "
                         << source << " to " << result;
  if (isa<RankedTensorType>(getSource().getType()) != isa<RankedTensorType>(getResult().getType()))
    return emitOpError() << "source and result must both be tiles or both be scalars";
  if (widening && getSaturate())
    return emitOpError() << "'saturate' applies only to narrowing conversions";
  return success();
}

LogicalResult PackFp4Op::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  SmallVector<int64_t> expected(source.getShape());
  if (expected.empty() || expected.back() % 2 != 0)
    return emitOpError() << "the last dimension must be even to pack pairs";
  expected.back() /= 2;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result must be " << shapeString(expected);
  return success();
}

LogicalResult LookupNibblesOp::verify() {
  if (getTable().size() != 16)
    return emitOpError() << "table must have 16 entries, got " << getTable().size();
  return success();
}

LogicalResult UnpackFp4Op::verify() {
  auto source = getSource().getType(), result = getResult().getType();
  SmallVector<int64_t> expected(source.getShape());
  if (expected.empty())
    return emitOpError() << "source must have rank >= 1";
  expected.back() *= 2;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result must be " << shapeString(expected);
  return success();
}
