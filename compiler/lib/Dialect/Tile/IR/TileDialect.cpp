//===- TileDialect.cpp - dialect, types and layout attributes -------------===//

#include "wavetile/Dialect/Tile/IR/TileDialect.h"

#include "wavetile/Atoms/AtomTable.h"
#include "wavetile/Layout/LayoutAlgebra.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace wavetile::tile;

#include "wavetile/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "wavetile/Dialect/Tile/IR/TileEnums.cpp.inc"
#include "wavetile/Dialect/Tile/IR/TileAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wavetile/Dialect/Tile/IR/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "wavetile/Dialect/Tile/IR/TileTypes.cpp.inc"

namespace {
/// Prints layouts once at the top of a module (#blocked, #mma, ...) instead of inline in
/// every tile type.
struct TileOpAsmInterface : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    StringRef name = llvm::TypeSwitch<Attribute, StringRef>(attr)
                         .Case<BlockedLayoutAttr>([](auto) { return "blocked"; })
                         .Case<SliceLayoutAttr>([](auto) { return "slice"; })
                         .Case<MmaLayoutAttr>([](auto) { return "mma"; })
                         .Case<DotOperandLayoutAttr>([](auto) { return "dot_operand"; })
                         .Case<LinearLayoutAttr>([](auto) { return "linear"; })
                         .Case<SharedLayoutAttr>([](auto) { return "shared"; })
                         .Default([](Attribute) { return StringRef(); });
    if (name.empty())
      return AliasResult::NoAlias;
    os << name;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void TileDialect::initialize() {
  addInterfaces<TileOpAsmInterface>();
  addOperations<
#define GET_OP_LIST
#include "wavetile/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "wavetile/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wavetile/Dialect/Tile/IR/TileAttrs.cpp.inc"
      >();
}

/// Folded tiles and scalars become arith constants.
Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

int64_t wavetile::tile::numElements(RankedTensorType tensorType) {
  return tensorType.getNumElements();
}

RankedTensorType wavetile::tile::stripEncoding(RankedTensorType tensorType) {
  return RankedTensorType::get(tensorType.getShape(), tensorType.getElementType());
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

static bool isMemoryElementType(Type type) {
  return type.isIntOrFloat();
}

LogicalResult PtrType::verify(function_ref<InFlightDiagnostic()> emitError, Type elementType) {
  if (!isMemoryElementType(elementType))
    return emitError() << "pointer element type must be an integer or float scalar, got "
                       << elementType;
  return success();
}

LogicalResult BufferType::verify(function_ref<InFlightDiagnostic()> emitError, Type elementType) {
  if (!isMemoryElementType(elementType))
    return emitError() << "buffer element type must be an integer or float scalar, got "
                       << elementType;
  return success();
}

LogicalResult SharedType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> shape, Type elementType, Attribute encoding) {
  if (shape.empty())
    return emitError() << "shared buffer must have rank >= 1";
  for (int64_t dim : shape)
    if (dim <= 0)
      return emitError() << "shared buffer dimensions must be static and positive";
  if (!isMemoryElementType(elementType))
    return emitError() << "shared buffer element type must be an integer or float scalar";
  if (encoding) {
    auto layout = dyn_cast<SharedLayoutAttr>(encoding);
    if (!layout)
      return emitError() << "shared buffer encoding must be #tile.shared_layout";
    if (layout.getOrder().size() != shape.size())
      return emitError() << "shared layout order has " << layout.getOrder().size()
                         << " entries but the buffer has rank " << shape.size();
  }
  return success();
}

SharedType SharedType::cloneWith(std::optional<ArrayRef<int64_t>> shape, Type elementType) const {
  return SharedType::get(getContext(), shape ? *shape : getShape(), elementType, getEncoding());
}

SharedType SharedType::entryType() const {
  ArrayRef<int64_t> shape = getShape().drop_front();
  auto layout = dyn_cast_or_null<SharedLayoutAttr>(getEncoding());
  if (!layout)
    return SharedType::get(getContext(), shape, getElementType(), Attribute());
  ArrayRef<unsigned> order = layout.getOrder();
  // The swizzle uses the two fastest dimensions and the padding the fastest one.
  if (getRank() < 3 || order[0] == 0 || order[1] == 0)
    return {};
  SmallVector<unsigned> entryOrder;
  for (unsigned d : order)
    if (d != 0)
      entryOrder.push_back(d - 1);
  auto entryLayout = SharedLayoutAttr::get(getContext(), layout.getVec(), layout.getPerPhase(), layout.getMaxPhase(),
                                           entryOrder, layout.getPadding());
  return SharedType::get(getContext(), shape, getElementType(), entryLayout);
}

// !tile.shared<4x64x64xf16> or !tile.shared<64x64xf16, #tile.shared_layout<...>>
Type SharedType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  Attribute encoding;
  if (parser.parseLess() || parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(encoding))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<SharedType>(parser.getContext(), shape, elementType, encoding);
}

void SharedType::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printDimensionList(getShape());
  printer << "x" << getElementType();
  if (getEncoding())
    printer << ", " << getEncoding();
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Layout attributes
//===----------------------------------------------------------------------===//

static int64_t product(ArrayRef<unsigned> values) {
  int64_t result = 1;
  for (unsigned v : values)
    result *= v;
  return result;
}

static bool isPermutation(ArrayRef<unsigned> order) {
  SmallVector<bool> seen(order.size(), false);
  for (unsigned d : order) {
    if (d >= order.size() || seen[d])
      return false;
    seen[d] = true;
  }
  return true;
}

static bool isPowerOf2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

LogicalResult BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        ArrayRef<unsigned> sizePerThread,
                                        ArrayRef<unsigned> threadsPerWarp,
                                        ArrayRef<unsigned> warpsPerBlock, ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0)
    return emitError() << "blocked layout needs at least one dimension";
  if (threadsPerWarp.size() != rank || warpsPerBlock.size() != rank || order.size() != rank)
    return emitError() << "blocked layout: sizePerThread, threadsPerWarp, warpsPerBlock and "
                          "order must all have the same length";
  if (llvm::is_contained(sizePerThread, 0u) || llvm::is_contained(threadsPerWarp, 0u) ||
      llvm::is_contained(warpsPerBlock, 0u))
    return emitError() << "blocked layout: sizes must be positive";
  if (!isPermutation(order))
    return emitError() << "blocked layout: order must be a permutation of 0.." << rank - 1;
  int64_t warpSize = product(threadsPerWarp);
  if (warpSize != 32 && warpSize != 64)
    return emitError() << "blocked layout: threadsPerWarp multiply to " << warpSize
                       << ", but a warp has 32 (NVIDIA) or 64 (CDNA) threads";
  if (!isPowerOf2(product(warpsPerBlock)))
    return emitError() << "blocked layout: warps per block must be a power of two";
  return success();
}

int64_t BlockedLayoutAttr::getWarpSize() const { return product(getThreadsPerWarp()); }
int64_t BlockedLayoutAttr::getNumWarps() const { return product(getWarpsPerBlock()); }

LogicalResult
BlockedLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                  function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getSizePerThread().size())
    return emitError() << "blocked layout of rank " << getSizePerThread().size()
                       << " does not match a tile of rank " << shape.size();
  for (auto [d, dim] : llvm::enumerate(shape)) {
    int64_t covered = int64_t(getSizePerThread()[d]) * getThreadsPerWarp()[d] * getWarpsPerBlock()[d];
    if (dim % covered != 0 && covered % dim != 0)
      return emitError() << "blocked layout covers " << covered << " elements of dimension " << d
                         << ", which neither divides nor is divided by the tile's " << dim;
  }
  return success();
}

LogicalResult SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, unsigned dim,
                                      DistributedLayoutAttr parent) {
  if (!parent)
    return emitError() << "slice layout needs a distributed parent layout";
  return success();
}

int64_t SliceLayoutAttr::getWarpSize() const { return getParent().getWarpSize(); }
int64_t SliceLayoutAttr::getNumWarps() const { return getParent().getNumWarps(); }

static const wavetile::atoms::Atom &atomOf(MmaLayoutAttr layout);

/// The smallest extent `parent` accepts along dimension `dim`: one atom for the MMA-based
/// layouts (they need multiples of the atom shape), 1 for the others.
static int64_t smallestExtent(DistributedLayoutAttr parent, unsigned dim) {
  if (auto mma = dyn_cast<MmaLayoutAttr>(parent)) {
    const auto &atom = atomOf(mma);
    return dim == 0 ? atom.m : atom.n;
  }
  if (auto operand = dyn_cast<DotOperandLayoutAttr>(parent)) {
    const auto &atom = atomOf(operand.getParent());
    if (operand.getTransposed())
      dim = 1 - dim;
    int64_t blocks = atom.k / 32;
    switch (operand.getOperandIndex()) {
    case 0:
      return dim == 0 ? atom.m : atom.k;
    case 1:
      return dim == 0 ? atom.k : atom.n;
    case 2:
      return dim == 0 ? atom.m : blocks;
    default:
      return dim == 0 ? blocks : atom.n;
    }
  }
  return 1;
}

LogicalResult
SliceLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                function_ref<InFlightDiagnostic()> emitError) const {
  auto parentEncoding = dyn_cast<VerifiableTensorEncoding>(Attribute(getParent()));
  if (!parentEncoding)
    return success();
  // The parent sees the tile with the sliced dimension restored, at an extent the parent
  // accepts (size 1 would reject every slice of an MMA layout).
  SmallVector<int64_t> parentShape(shape);
  if (getDim() > parentShape.size())
    return emitError() << "slice dim " << getDim() << " exceeds the tile rank " << shape.size();
  parentShape.insert(parentShape.begin() + getDim(), smallestExtent(getParent(), getDim()));
  return parentEncoding.verifyEncoding(parentShape, elementType, emitError);
}

LogicalResult MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef atom,
                                    ArrayRef<unsigned> warpsPerBlock) {
  if (!wavetile::atoms::lookupAtom(std::string_view(atom.data(), atom.size())))
    return emitError() << "unknown atom '" << atom << "' (not in the atom table)";
  if (warpsPerBlock.size() != 2)
    return emitError() << "mma layout: warpsPerBlock must have 2 entries";
  if (llvm::is_contained(warpsPerBlock, 0u) || !isPowerOf2(product(warpsPerBlock)))
    return emitError() << "mma layout: warps per block must be a positive power of two";
  return success();
}

static const wavetile::atoms::Atom &atomOf(MmaLayoutAttr layout) {
  StringRef name = layout.getAtom();
  return *wavetile::atoms::lookupAtom(std::string_view(name.data(), name.size()));
}

/// Threads of a warp that issues the atom together: a warpgroup atom (wgmma, 128
/// threads) is issued by four 32-thread warps.
static int64_t warpsPerIssue(const wavetile::atoms::Atom &atom) { return atom.waveSize > 64 ? atom.waveSize / 32 : 1; }

int64_t MmaLayoutAttr::getWarpSize() const {
  const auto &atom = atomOf(*this);
  return atom.waveSize / warpsPerIssue(atom);
}
// For warpgroup atoms warpsPerBlock counts warpgroups.
int64_t MmaLayoutAttr::getNumWarps() const { return product(getWarpsPerBlock()) * warpsPerIssue(atomOf(*this)); }

static LogicalResult verifyMultipleOf(ArrayRef<int64_t> shape, int64_t rows, int64_t cols,
                                      StringRef what, function_ref<InFlightDiagnostic()> emitError) {
  if (shape.size() != 2)
    return emitError() << what << " layouts apply to 2-D tiles, got rank " << shape.size();
  if (shape[0] % rows != 0 || shape[1] % cols != 0)
    return emitError() << what << " layout needs a tile that is a multiple of " << rows << "x"
                       << cols << ", got " << shape[0] << "x" << shape[1];
  return success();
}

LogicalResult MmaLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                            function_ref<InFlightDiagnostic()> emitError) const {
  const auto &atom = atomOf(*this);
  return verifyMultipleOf(shape, atom.m, atom.n, "mma accumulator", emitError);
}

LogicalResult DotOperandLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                           unsigned operandIndex, MmaLayoutAttr parent, bool transposed) {
  if (operandIndex > 3)
    return emitError() << "dot operand index must be 0 (A), 1 (B), 2 (A's scales) or 3 (B's scales), got "
                       << operandIndex;
  return success();
}

int64_t DotOperandLayoutAttr::getWarpSize() const { return getParent().getWarpSize(); }
int64_t DotOperandLayoutAttr::getNumWarps() const { return getParent().getNumWarps(); }

LogicalResult
DotOperandLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                     function_ref<InFlightDiagnostic()> emitError) const {
  const auto &atom = atomOf(getParent());
  unsigned index = getOperandIndex();
  if (index >= 2 && !atom.scaleType)
    return emitError() << "dot operand " << index << " (block scales) needs a block-scaled atom, got '" << atom.name
                       << "'";
  int64_t scaleBlocks = atom.k / 32;
  auto [rows, cols] = index == 0   ? std::pair<int64_t, int64_t>(atom.m, atom.k)
                      : index == 1 ? std::pair<int64_t, int64_t>(atom.k, atom.n)
                      : index == 2 ? std::pair<int64_t, int64_t>(atom.m, scaleBlocks)
                                   : std::pair<int64_t, int64_t>(scaleBlocks, atom.n);
  if (getTransposed())
    std::swap(rows, cols);
  static const char *const names[] = {"dot operand A", "dot operand B", "scales of dot operand A",
                                      "scales of dot operand B"};
  std::string what = std::string(getTransposed() ? "transposed " : "") + names[index];
  return verifyMultipleOf(shape, rows, cols, what.c_str(), emitError);
}

static std::optional<wavetile::layout::Layout> parseLinearMap(StringRef map, std::string *error) {
  auto layout = wavetile::layout::parseLayout(std::string_view(map.data(), map.size()), error);
  if (layout && layout->rank() != 3) {
    *error = "expected 3 top-level modes (values, lanes, warps), got " +
             std::to_string(layout->rank());
    return std::nullopt;
  }
  return layout;
}

LogicalResult LinearLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef map) {
  std::string error;
  auto layout = parseLinearMap(map, &error);
  if (!layout)
    return emitError() << "invalid linear layout \"" << map << "\": " << error;
  int64_t lanes = layout->mode(1).size();
  if (lanes != 32 && lanes != 64)
    return emitError() << "linear layout lane mode has " << lanes
                       << " entries, but a warp has 32 or 64 threads";
  return success();
}

int64_t LinearLayoutAttr::getWarpSize() const {
  std::string error;
  return parseLinearMap(getMap(), &error)->mode(1).size();
}

int64_t LinearLayoutAttr::getNumWarps() const {
  std::string error;
  return parseLinearMap(getMap(), &error)->mode(2).size();
}

LogicalResult
LinearLayoutAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                                 function_ref<InFlightDiagnostic()> emitError) const {
  std::string error;
  auto layout = *parseLinearMap(getMap(), &error);
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  // Every element of the tile must be held by some thread; nothing may fall outside it.
  std::vector<bool> reached(elements, false);
  for (int64_t i = 0, e = layout.size(); i < e; ++i) {
    int64_t index = layout(i);
    if (index < 0 || index >= elements)
      return emitError() << "linear layout maps to element " << index
                         << ", outside a tile of " << elements << " elements";
    reached[index] = true;
  }
  auto missing = llvm::find(reached, false);
  if (missing != reached.end())
    return emitError() << "linear layout does not cover the tile: element "
                       << (missing - reached.begin()) << " is held by no thread";
  return success();
}

LogicalResult SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError, unsigned vec,
                                       unsigned perPhase, unsigned maxPhase,
                                       ArrayRef<unsigned> order, unsigned padding) {
  if (!isPowerOf2(vec) || !isPowerOf2(perPhase) || !isPowerOf2(maxPhase))
    return emitError() << "shared layout: vec, perPhase and maxPhase must be powers of two";
  if (!isPermutation(order))
    return emitError() << "shared layout: order must be a permutation";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel attributes: every layout in a kernel must agree with its warp shape.
//===----------------------------------------------------------------------===//

LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == kNumWarpsAttrName || name == kWarpSizeAttrName || name == kNumStagesAttrName) {
    auto value = dyn_cast<IntegerAttr>(attribute.getValue());
    if (!value || value.getInt() <= 0)
      return op->emitError() << "'" << name << "' must be a positive integer";
    if (name == kWarpSizeAttrName && value.getInt() != 32 && value.getInt() != 64)
      return op->emitError() << "'" << name << "' must be 32 or 64";
    return success();
  }
  if (name == kParamsAttrName) {
    auto params = dyn_cast<DictionaryAttr>(attribute.getValue());
    if (!params || !llvm::all_of(params, [](NamedAttribute p) { return isa<IntegerAttr>(p.getValue()); }))
      return op->emitError() << "'" << name << "' must be a dictionary of integer parameters";
    return success();
  }
  if (name == kWideRoundedSumsAttrName) { // kept by the host's lowering of the kernel
    if (!isa<UnitAttr>(attribute.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (name == kWithin2GiBAttrName) { // on a view: it stands for its pointer's 2 GiB promise
    if (!isa<MakeBufferOp>(op) || !isa<UnitAttr>(attribute.getValue()))
      return op->emitError() << "'" << name << "' is a unit attribute of tile.make_buffer (or of pointer arguments)";
    return success();
  }
  if (name != kKernelAttrName)
    return op->emitError() << "unknown tile dialect attribute '" << name << "'";
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitError() << "'" << name << "' applies to func.func only";
  if (func.getFunctionType().getNumResults() != 0)
    return op->emitError() << "a tile kernel returns no values; write results through pointers";

  auto numWarps = op->getAttrOfType<IntegerAttr>(kNumWarpsAttrName);
  IntegerAttr warpSize = op->getAttrOfType<IntegerAttr>(kWarpSizeAttrName);
  if (!warpSize)
    if (auto module = op->getParentOp())
      warpSize = module->getAttrOfType<IntegerAttr>(kWarpSizeAttrName);
  auto checkType = [&](Type type, Operation *where) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.getEncoding())
      return success();
    auto layout = dyn_cast<DistributedLayoutAttr>(tensor.getEncoding());
    if (!layout)
      return where->emitOpError() << "has a tile whose encoding " << tensor.getEncoding()
                                  << " is not a distributed layout";
    if (numWarps && layout.getNumWarps() != numWarps.getInt())
      return where->emitOpError() << "uses a layout for " << layout.getNumWarps()
                                  << " warps in a kernel of " << numWarps.getInt() << " warps";
    if (warpSize && layout.getWarpSize() != warpSize.getInt())
      return where->emitOpError() << "uses a layout for " << layout.getWarpSize()
                                  << "-thread warps, but the kernel's warps have "
                                  << warpSize.getInt() << " threads";
    return success();
  };
  WalkResult result = func.walk([&](Operation *inner) {
    for (Type type : inner->getResultTypes())
      if (failed(checkType(type, inner)))
        return WalkResult::interrupt();
    // Block arguments too: the kernel's own arguments and values carried by loops.
    for (Region &region : inner->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          if (failed(checkType(type, inner)))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
