//===- Distribution.cpp - layouts resolved against tile shapes -------------===//

#include "wavetile/Dialect/Tile/IR/Distribution.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace wavetile::tile;

/// The digit of `id` for dimension `d` when ids count through the dims fastest-first with
/// `extent(dim)` values each.
template <typename Extent>
static int64_t idAlong(ArrayRef<unsigned> order, unsigned d, int64_t id, Extent extent) {
  for (unsigned dim : order) {
    if (dim == d)
      return id % extent(dim);
    id /= extent(dim);
  }
  return 0;
}

int64_t BlockedGeometry::laneId(unsigned d, int64_t lane) const {
  return idAlong(order, d, lane, [&](unsigned dim) { return dims[dim].threads; });
}

int64_t BlockedGeometry::warpId(unsigned d, int64_t warp) const {
  return idAlong(order, d, warp, [&](unsigned dim) { return dims[dim].warps; });
}

int64_t BlockedGeometry::elementsPerThread() const {
  int64_t n = 1;
  for (auto [d, p] : llvm::enumerate(dims))
    if (!isDropped(d))
      n *= p.perThread();
  return n;
}

llvm::SmallVector<int64_t> BlockedGeometry::registerIndex(int64_t reg) const {
  llvm::SmallVector<int64_t> index(dims.size(), 0);
  for (unsigned d : order) {
    if (isDropped(d))
      continue;
    index[d] = reg % dims[d].perThread();
    reg /= dims[d].perThread();
  }
  return index;
}

int64_t BlockedGeometry::registerNumber(ArrayRef<int64_t> index) const {
  int64_t reg = 0, stride = 1;
  for (unsigned d : order) {
    if (isDropped(d))
      continue;
    reg += index[d] * stride;
    stride *= dims[d].perThread();
  }
  return reg;
}

unsigned BlockedGeometry::rootDim(unsigned tileDimension) const {
  for (unsigned d = 0; d < dims.size(); ++d)
    if (!isDropped(d) && tileDim(d) == tileDimension)
      return d;
  llvm_unreachable("tile dimension out of range");
}

unsigned BlockedGeometry::tileDim(unsigned rootDim) const {
  unsigned below = 0;
  for (unsigned d : droppedDims)
    below += d < rootDim;
  return rootDim - below;
}

std::optional<BlockedGeometry> wavetile::tile::blockedGeometry(Attribute layout, ArrayRef<int64_t> shape) {
  // Peel slices: each re-inserts its dimension (size 1) into the shape seen by the parent.
  SmallVector<int64_t> rootShape(shape);
  SmallVector<unsigned> dropped;
  while (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layout)) {
    // Dims dropped further out are numbered in the child; shift them past the new one.
    for (unsigned &d : dropped)
      if (d >= slice.getDim())
        ++d;
    dropped.push_back(slice.getDim());
    rootShape.insert(rootShape.begin() + slice.getDim(), 1);
    layout = slice.getParent();
  }
  auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layout);
  if (!blocked || blocked.getSizePerThread().size() != rootShape.size())
    return std::nullopt;
  BlockedGeometry g;
  g.blocked = blocked;
  g.droppedDims = dropped;
  g.order.assign(blocked.getOrder().begin(), blocked.getOrder().end());
  g.warpSize = blocked.getWarpSize();
  g.numWarps = blocked.getNumWarps();
  for (auto [d, size] : llvm::enumerate(rootShape)) {
    DimPlacement p{size, blocked.getSizePerThread()[d], blocked.getThreadsPerWarp()[d],
                   blocked.getWarpsPerBlock()[d], 1};
    p.repetitions = std::max<int64_t>(1, size / p.blockExtent());
    if (llvm::is_contained(dropped, unsigned(d)))
      p.sizePerThread = 1; // a dropped dim contributes no registers
    g.dims.push_back(p);
  }
  return g;
}

int64_t wavetile::tile::elementsPerThread(RankedTensorType type) {
  auto g = blockedGeometry(type.getEncoding(), type.getShape());
  assert(g && "elementsPerThread needs a blocked or slice layout");
  return g->elementsPerThread();
}

int64_t wavetile::tile::linearElement(const BlockedGeometry &g, ArrayRef<int64_t> shape, int64_t reg, int64_t lane,
                                      int64_t warp) {
  SmallVector<int64_t> index = g.registerIndex(reg);
  int64_t linear = 0;
  for (unsigned d = 0; d < g.dims.size(); ++d) {
    if (g.isDropped(d))
      continue;
    int64_t c = g.dims[d].coordinate(index[d], g.laneId(d, lane), g.warpId(d, warp));
    linear = linear * shape[g.tileDim(d)] + c;
  }
  return linear;
}

BlockedLayoutAttr wavetile::tile::defaultBlockedLayout(MLIRContext *context, ArrayRef<int64_t> shape, int64_t vector,
                                                       int64_t warpSize, int64_t numWarps, int64_t minVector) {
  size_t rank = shape.size();
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  SmallVector<unsigned> sizePerThread(rank, 1), threads(rank, 1), warps(rank, 1), order;
  for (size_t i = 0; i < rank; ++i)
    order.push_back(unsigned(rank - 1 - i));
  // Fewer elements per thread when the tile cannot give every thread a full vector.
  int64_t fastest = shape[rank - 1];
  int64_t wanted = std::max({int64_t(1), minVector, elements / (warpSize * numWarps)});
  int64_t v = std::max<int64_t>(1, std::min({vector, fastest, wanted}));
  while (fastest % v)
    v /= 2;
  sizePerThread[rank - 1] = unsigned(v);
  // Lanes fill dimensions from the fastest; leftovers replicate along the slowest dim.
  auto distribute = [&](int64_t count, SmallVector<unsigned> &slots, auto covered) {
    for (unsigned d : order) {
      int64_t room = std::max<int64_t>(1, shape[d] / covered(d));
      int64_t take = std::min(count, room);
      while (count % take)
        --take;
      slots[d] = unsigned(take);
      count /= take;
    }
    slots[order.back()] *= unsigned(count);
  };
  distribute(warpSize, threads, [&](unsigned d) { return int64_t(sizePerThread[d]); });
  distribute(numWarps, warps, [&](unsigned d) { return int64_t(sizePerThread[d]) * threads[d]; });
  return BlockedLayoutAttr::get(context, sizePerThread, threads, warps, order);
}

BlockedLayoutAttr wavetile::tile::rowReductionLayout(MLIRContext *context, ArrayRef<int64_t> shape, int64_t run,
                                                     int64_t warpSize, int64_t numWarps) {
  size_t rank = shape.size();
  if (rank < 2 || !llvm::all_of(shape, [](int64_t d) { return llvm::isPowerOf2_64(uint64_t(d)); }))
    return {};
  int64_t k = shape.back(), rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  if (rows < numWarps)
    return {};
  // Lanes along K: runs of `run`, but at least enough that the others fit in a warp's rows.
  int64_t fewestLanes = std::max<int64_t>(1, warpSize * numWarps / rows);
  int64_t lanesK = std::min({warpSize, k, std::max(fewestLanes, k / std::max<int64_t>(1, run))});
  if (lanesK < fewestLanes)
    return {};
  // With runs of k / lanesK the default's lanes cover K exactly, so its other lanes and all
  // its warps fill the rows, which have room for them.
  return defaultBlockedLayout(context, shape, k / lanesK, warpSize, numWarps);
}

BlockedLayoutAttr wavetile::tile::droppedDimLayout(BlockedLayoutAttr layout, ArrayRef<int64_t> shape, unsigned dim) {
  if (shape[dim] != 1 || layout.getSizePerThread()[dim] != 1)
    return {};
  ArrayRef<unsigned> oldOrder = layout.getOrder(), oldThreads = layout.getThreadsPerWarp(),
                     oldWarps = layout.getWarpsPerBlock();
  SmallVector<unsigned> sizePerThread(layout.getSizePerThread()), threads(oldThreads), warps(oldWarps), order;
  if (oldThreads[dim] * oldWarps[dim] > 1) {
    // The next slower dimension takes them, so lane and warp ids keep their digits; it must
    // have no lanes or warps of its own (or extent 1): each thread holds all of it, and its
    // new lanes and warps hold copies.
    const unsigned *at = llvm::find(oldOrder, dim);
    if (at + 1 == oldOrder.end() || (shape[at[1]] != 1 && oldThreads[at[1]] * oldWarps[at[1]] != 1))
      return {};
    sizePerThread[at[1]] = std::max<unsigned>(sizePerThread[at[1]], unsigned(shape[at[1]]));
    threads[at[1]] *= oldThreads[dim];
    warps[at[1]] *= oldWarps[dim];
  }
  for (auto *list : {&sizePerThread, &threads, &warps})
    list->erase(list->begin() + dim);
  for (unsigned d : oldOrder)
    if (d != dim)
      order.push_back(d > dim ? d - 1 : d);
  return BlockedLayoutAttr::get(layout.getContext(), sizePerThread, threads, warps, order);
}

std::pair<int64_t, int64_t> MmaGeometry::coordinate(int64_t reg, int64_t lane, int64_t warp) const {
  auto [row, col] = operandCoordinate(reg, lane, warp);
  return transposed ? std::pair(col, row) : std::pair(row, col);
}

std::pair<int64_t, int64_t> MmaGeometry::operandCoordinate(int64_t reg, int64_t lane, int64_t warp) const {
  int64_t rep = reg / valuesPerLane(), value = reg % valuesPerLane();
  int64_t r0 = rep / reps[1], r1 = rep % reps[1];
  int64_t index = map->elementAt(int(lane), int(value)); // column-major in the atom's operand tile
  int64_t row = index % atomRows, col = index / atomRows;
  int64_t wi = warp % warpsM, wj = warp / warpsM;
  // K (the atom's column for A, row for B): with kPack steps packed, each lane's runs of
  // those steps lie side by side.
  switch (operand) {
  case 0: // A: rows follow warps along M, columns are K steps
    return {(r0 * warpsM + wi) * atomRows + row, tileK(ConstantArith{}, col, r1)};
  case 1: // B: rows are K steps, columns follow warps along N
    return {tileK(ConstantArith{}, row, r0), (r1 * warpsN + wj) * atomCols + col};
  default:
    return {(r0 * warpsM + wi) * atomRows + row, (r1 * warpsN + wj) * atomCols + col};
  }
}

std::optional<MmaGeometry> wavetile::tile::mmaGeometry(Attribute layout, ArrayRef<int64_t> shape) {
  using wavetile::atoms::Operand;
  unsigned operand = 2; // how warps and repetitions tile it: 0 like A, 1 like B, 2 like C
  Operand which = Operand::C;
  bool transposed = false;
  MmaLayoutAttr mma = dyn_cast_or_null<MmaLayoutAttr>(layout);
  if (auto dotOperand = dyn_cast_or_null<DotOperandLayoutAttr>(layout)) {
    static const Operand kOperands[] = {Operand::A, Operand::B, Operand::ScaleA, Operand::ScaleB};
    which = kOperands[dotOperand.getOperandIndex()];
    operand = dotOperand.getOperandIndex() % 2; // A's scales tile like A, B's like B
    transposed = dotOperand.getTransposed();
    mma = dotOperand.getParent();
  }
  if (!mma || shape.size() != 2)
    return std::nullopt;
  StringRef name = mma.getAtom();
  const auto *atom = wavetile::atoms::lookupAtom(std::string_view(name.data(), name.size()));
  const auto *map = atom ? atom->operandMap(which) : nullptr;
  if (!map)
    return std::nullopt; // e.g. wgmma multiplicands come from shared memory
  MmaGeometry g{atom, operand, which == Operand::ScaleA || which == Operand::ScaleB, transposed, map, mma.getWarpsPerBlock()[0], mma.getWarpsPerBlock()[1], {1, 1},
                map->rows, map->cols};
  SmallVector<int64_t, 2> operandShape(shape);
  if (transposed)
    std::swap(operandShape[0], operandShape[1]);
  shape = operandShape;
  // Warps spread along M for A and C, along N for B and C; each axis must divide evenly.
  int64_t rowSpan = g.atomRows * (operand == 1 ? 1 : g.warpsM);
  int64_t colSpan = g.atomCols * (operand == 0 ? 1 : g.warpsN);
  if (shape[0] % rowSpan != 0 || shape[1] % colSpan != 0)
    return std::nullopt;
  g.reps[0] = shape[0] / rowSpan;
  g.reps[1] = shape[1] / colSpan;
  // CDNA A/B fragments of 64 bits (bf16/f16 16x16x16 and 32x32x8, fp8 16x16x32 and
  // 32x32x16 on gfx942), each lane's K values contiguous: pair K steps. Not for block
  // scales, whose blocks are K-contiguous.
  int64_t kSteps = operand == 0 ? g.reps[1] : g.reps[0];
  if (operand != 2 && !g.scales && !atom->scaleType && map->lanes == 64 && kSteps % 2 == 0 &&
      map->valuesPerLane * wavetile::atoms::bitWidth(operand == 0 ? atom->aType : atom->bType) == 64)
    g.kPack = 2;
  return g;
}

SharedLayoutAttr wavetile::tile::operandSharedLayout(MLIRContext *context, ArrayRef<int64_t> shape, Type element) {
  // 32 banks of 4 bytes: a 128-byte line holds 8 groups of 16 bytes.
  constexpr int64_t kPiece = 16, kPiecesPerLine = 8;
  unsigned bits = element.getIntOrFloatBitWidth();
  if (shape.size() < 2 || bits < 8 || bits % 8)
    return {};
  int64_t vec = kPiece / (bits / 8);
  int64_t piecesPerRow = shape.back() / vec;
  if (shape.back() % vec || piecesPerRow < 2)
    return {};
  // Rows sharing a line already differ in bank group; XOR separates the lines.
  int64_t perPhase = std::max<int64_t>(1, kPiecesPerLine / piecesPerRow);
  int64_t maxPhase = std::min<int64_t>(piecesPerRow, kPiecesPerLine / perPhase);
  SmallVector<unsigned> order;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d)
    order.push_back(unsigned(d));
  return SharedLayoutAttr::get(context, unsigned(vec), unsigned(perPhase), unsigned(maxPhase), order, 0);
}

BlockedLayoutAttr wavetile::tile::reshapedBlockedLayout(Attribute layout, ArrayRef<int64_t> sourceShape,
                                                        ArrayRef<int64_t> resultShape) {
  auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layout);
  if (!blocked)
    return {};
  std::optional<BlockedGeometry> g = blockedGeometry(blocked, sourceShape);
  if (!g || !g->droppedDims.empty())
    return {};
  // Each binary digit of a row-major element index, least significant first, is a digit of
  // a register number, a lane id or a warp id. In a blocked layout with the last dimension
  // fastest, a dimension's digits run register, lane, warp, then register (repetitions),
  // and the dimensions follow each other from the last.
  enum class Digit { Register, Lane, Warp };
  SmallVector<Digit> digits;
  auto append = [&](int64_t count, Digit digit) {
    for (; count > 1; count /= 2)
      digits.push_back(digit);
  };
  // Lanes and warps along a dim each thread holds whole hold copies. They are the slowest
  // lane and warp digits (no dim after them spreads over lanes or warps) and go to the
  // result's first dimension, which each thread must hold whole too.
  int64_t copyLanes = 1, copyWarps = 1;
  for (size_t i = 0; i < g->order.size(); ++i) {
    unsigned d = g->order[i];
    const DimPlacement &p = g->dims[d];
    if (d != sourceShape.size() - 1 - i || !llvm::isPowerOf2_64(p.size) || (copyLanes > 1 && p.threads > 1) ||
        (copyWarps > 1 && p.warps > 1))
      return {};
    if (p.size == p.sizePerThread) {
      append(p.sizePerThread, Digit::Register);
      copyLanes *= p.threads;
      copyWarps *= p.warps;
      continue;
    }
    if (p.size < p.blockExtent())
      return {};
    append(p.sizePerThread, Digit::Register);
    append(p.threads, Digit::Lane);
    append(p.warps, Digit::Warp);
    append(p.repetitions, Digit::Register);
  }
  size_t rank = resultShape.size();
  SmallVector<unsigned> sizePerThread(rank, 1), threads(rank, 1), warps(rank, 1), order;
  size_t next = 0;
  for (size_t i = 0; i < rank; ++i) {
    unsigned d = unsigned(rank - 1 - i);
    order.push_back(d);
    if (!llvm::isPowerOf2_64(resultShape[d]))
      return {};
    size_t end = next + llvm::Log2_64(resultShape[d]);
    if (end > digits.size())
      return {};
    // The run must read register*, lane*, warp*, register*.
    auto take = [&](Digit digit, unsigned &extent) {
      for (; next < end && digits[next] == digit; ++next)
        extent *= 2;
    };
    take(Digit::Register, sizePerThread[d]);
    take(Digit::Lane, threads[d]);
    take(Digit::Warp, warps[d]);
    unsigned repetitions = 1;
    take(Digit::Register, repetitions);
    if (next != end)
      return {};
    // Lanes (or warps) of a dimension that has its repetitions must be complete before the
    // next dimension's lanes start, which the digit order already guarantees.
  }
  if (next != digits.size())
    return {};
  if (copyLanes * copyWarps > 1) {
    if (sizePerThread[0] != resultShape[0] || threads[0] * warps[0] != 1)
      return {};
    threads[0] *= unsigned(copyLanes);
    warps[0] *= unsigned(copyWarps);
  }
  return BlockedLayoutAttr::get(blocked.getContext(), sizePerThread, threads, warps, order);
}

int64_t HeldElements::warpSize() const { return blocked ? blocked->warpSize : mma->warpSize(); }

int64_t HeldElements::numWarps() const { return blocked ? blocked->numWarps : mma->numWarps(); }

int64_t HeldElements::elementAt(int64_t reg, int64_t lane, int64_t warp) const {
  if (blocked)
    return linearElement(*blocked, shape, reg, lane, warp);
  auto [row, col] = mma->coordinate(reg, lane, warp);
  return row * shape[1] + col;
}

std::optional<HeldElements> wavetile::tile::heldElements(Attribute layout, ArrayRef<int64_t> shape) {
  HeldElements h{blockedGeometry(layout, shape), mmaGeometry(layout, shape), SmallVector<int64_t>(shape)};
  if (!h.blocked && !h.mma)
    return std::nullopt;
  h.registers = h.blocked ? h.blocked->elementsPerThread() : h.mma->elementsPerThread();
  return h;
}

BlockedLayoutAttr wavetile::tile::equivalentBlockedLayout(Attribute layout, ArrayRef<int64_t> layoutShape,
                                                          ArrayRef<int64_t> shape) {
  std::optional<HeldElements> held = heldElements(layout, layoutShape);
  const size_t rank = shape.size();
  int64_t elements = 1, layoutElements = 1;
  for (int64_t d : shape)
    elements *= d;
  for (int64_t d : layoutShape)
    layoutElements *= d;
  if (!held || elements != layoutElements || !llvm::all_of(shape, llvm::isPowerOf2_64) ||
      !llvm::isPowerOf2_64(held->warpSize()) || !llvm::isPowerOf2_64(held->numWarps()))
    return {};
  auto coordinates = [&](int64_t linear) {
    SmallVector<int64_t> c(rank);
    for (size_t d = rank; d-- > 0; linear /= shape[d])
      c[d] = linear % shape[d];
    return c;
  };
  // Per dimension, the least coordinate a thread holds.
  auto least = [&](int64_t lane, int64_t warp) {
    SmallVector<int64_t> m(rank, std::numeric_limits<int64_t>::max());
    for (int64_t r = 0; r < held->registers; ++r) {
      SmallVector<int64_t> c = coordinates(held->elementAt(r, lane, warp));
      for (size_t d = 0; d < rank; ++d)
        m[d] = std::min(m[d], c[d]);
    }
    return m;
  };
  // Thread 0 holds each dimension's first run of sizePerThread from 0 (repetitions aside).
  SmallVector<unsigned> sizePerThread(rank), threads(rank, 1), warps(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    llvm::SmallDenseSet<int64_t> along;
    for (int64_t r = 0; r < held->registers; ++r)
      along.insert(coordinates(held->elementAt(r, 0, 0))[d]);
    unsigned run = 0;
    while (along.contains(run))
      ++run;
    if (!llvm::isPowerOf2_64(run))
      return {};
    sizePerThread[d] = run;
  }
  // Each lane and warp digit moves one dimension by the next multiple of what its
  // dimension's threads cover so far, or nothing (the thread holds copies: -1).
  auto digits = [&](int64_t count, bool lanes, SmallVector<int> &dims) {
    for (int64_t bit = 1; bit < count; bit *= 2) {
      SmallVector<int64_t> m = lanes ? least(bit, 0) : least(0, bit);
      int dim = -1;
      for (size_t d = 0; d < rank; ++d)
        if (m[d] != 0) {
          if (dim >= 0 || m[d] != int64_t(sizePerThread[d]) * threads[d] * warps[d])
            return false;
          dim = int(d);
        }
      if (dim >= 0)
        (lanes ? threads : warps)[dim] *= 2;
      dims.push_back(dim);
    }
    return true;
  };
  SmallVector<int> laneDims, warpDims;
  if (!digits(held->warpSize(), true, laneDims) || !digits(held->numWarps(), false, warpDims))
    return {};
  const int64_t copyLanes = int64_t(1) << llvm::count(laneDims, -1), copyWarps = int64_t(1)
                                                                                 << llvm::count(warpDims, -1);
  // Copies go to a dimension each thread holds whole; try each (or none without copies).
  SmallVector<int> homes;
  for (size_t d = 0; d < rank; ++d)
    if (sizePerThread[d] == shape[d])
      homes.push_back(int(d));
  if (copyLanes * copyWarps == 1)
    homes = {-1};
  for (int home : homes) {
    SmallVector<unsigned> t(threads), w(warps);
    SmallVector<int> lanesOf(laneDims), warpsOf(warpDims);
    for (int &d : lanesOf)
      if (d < 0)
        d = home;
    for (int &d : warpsOf)
      if (d < 0)
        d = home;
    if (home >= 0) {
      t[home] *= unsigned(copyLanes);
      w[home] *= unsigned(copyWarps);
    }
    // Dimensions in the order of their first lane digit, then of their first warp digit,
    // then the rest from the last.
    auto firstIndex = [](ArrayRef<int> dims, int d) {
      auto it = llvm::find(dims, d);
      return it == dims.end() ? 1000 : int(it - dims.begin());
    };
    SmallVector<unsigned> order;
    for (size_t d = rank; d-- > 0;)
      order.push_back(unsigned(d));
    auto key = [&](unsigned d) {
      bool inRegisters = sizePerThread[d] == shape[d];
      return std::tuple(!inRegisters, firstIndex(lanesOf, int(d)), firstIndex(warpsOf, int(d)));
    };
    llvm::stable_sort(order, [&](unsigned a, unsigned b) { return key(a) < key(b); });
    auto candidate = BlockedLayoutAttr::get(layout.getContext(), sizePerThread, t, w, order);
    std::optional<BlockedGeometry> g = blockedGeometry(candidate, shape);
    if (!g || g->elementsPerThread() != held->registers)
      continue;
    // One register map for every thread, each register of one holding a distinct one of the other.
    SmallVector<int64_t> map(held->registers, -1);
    bool same = true;
    for (int64_t warp = 0; same && warp < held->numWarps(); ++warp)
      for (int64_t lane = 0; same && lane < held->warpSize(); ++lane) {
        llvm::DenseMap<int64_t, int64_t> registerOf;
        for (int64_t r = 0; r < held->registers; ++r)
          registerOf.try_emplace(held->elementAt(r, lane, warp), r);
        llvm::SmallDenseSet<int64_t> used;
        for (int64_t r = 0; same && r < held->registers; ++r) {
          auto it = registerOf.find(linearElement(*g, shape, r, lane, warp));
          same = it != registerOf.end() && (map[r] < 0 || map[r] == it->second) && used.insert(it->second).second;
          if (same)
            map[r] = it->second;
        }
      }
    if (same)
      return candidate;
  }
  return {};
}

SmallVector<Value> wavetile::tile::sharedViews(SharedAllocOp alloc) {
  SmallVector<Value> views{alloc.getResult()};
  for (size_t i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers())
      if (auto slice = dyn_cast<SharedSliceOp>(user))
        views.push_back(slice.getResult());
  return views;
}

void wavetile::tile::setSharedLayout(SharedAllocOp alloc, SharedLayoutAttr layout) {
  SharedType type = alloc.getType();
  SmallVector<Value> views = sharedViews(alloc);
  alloc.getResult().setType(SharedType::get(alloc.getContext(), type.getShape(), type.getElementType(), layout));
  // Views are in creation order, so each slice's source is retyped before the slice.
  for (Value view : ArrayRef<Value>(views).drop_front())
    view.setType(cast<SharedSliceOp>(view.getDefiningOp()).getSource().getType().entryType());
}
