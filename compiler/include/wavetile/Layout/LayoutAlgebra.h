//===- LayoutAlgebra.h - CuTe-style layout algebra --------------*- C++ -*-===//
//
// A layout maps a (hierarchical) coordinate space onto integer indices:
// shape:stride, where shape and stride are congruent hierarchical integer
// tuples. This header provides the layout type and the algebra on it
// (coalesce, composition, complement, divide, product, inverses), following
// the semantics of NVIDIA CuTe ("CuTe Layout Algebra").
//
// Conventions shared by every function here:
//  * Coordinates are colexicographic: the first mode varies fastest.
//  * A valid layout has positive extents, non-negative strides, a shape and
//    stride that are congruent, and a size and cosize that fit in int64_t.
//    Layout::make and parseLayout check this; the plain constructor does not.
//  * Linear coordinates at or beyond size() are defined by letting the last
//    mode absorb the overflow (recursively: the last mode of the last mode...),
//    exactly like CuTe's crd2idx. composition() relies on this extension when
//    b's image reaches beyond a.size().
//  * Nothing here throws, asserts or aborts. Functions returning std::optional
//    report failures as std::nullopt plus a message in *error (if non-null),
//    and they also reject invalid layouts built with the unchecked
//    constructor. Other functions are memory-safe on invalid layouts but
//    return unspecified values; arithmetic that would overflow int64_t wraps.
//
// Pure C++17: no LLVM/MLIR dependency, usable with -fno-exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef WAVETILE_LAYOUT_LAYOUTALGEBRA_H
#define WAVETILE_LAYOUT_LAYOUTALGEBRA_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavetile::layout {

/// An integer leaf, or a (possibly empty) tuple of IntTuples.
///
/// The empty tuple "()" is a valid IntTuple with rank 0 and product 1; it is
/// also accepted inside layouts, where it is a mode of size 1 that maps
/// everything to 0.
///
/// Beware of brace initialization: `IntTuple{5}` and `IntTuple{t}` (t an
/// IntTuple) build one-element tuples because the initializer_list
/// constructor wins; use `IntTuple(5)` / plain copies for leaves and copies.
class IntTuple {
public:
  /// A leaf (implicit so that `IntTuple t = 4;` and `{2, {3, 4}}` work).
  IntTuple(int64_t v);
  /// A tuple of the given elements; `elems` may be empty.
  IntTuple(std::initializer_list<IntTuple> elems);
  static IntTuple tuple(std::vector<IntTuple> elems);

  bool isLeaf() const { return isLeaf_; }
  /// The leaf value; 0 for a tuple.
  int64_t value() const { return value_; }
  /// The elements of a tuple; empty for a leaf.
  const std::vector<IntTuple> &elems() const { return elems_; }

  /// 1 for a leaf, the number of top-level elements for a tuple.
  size_t rank() const;
  /// Product of all leaves (1 for the empty tuple).
  int64_t product() const;
  /// 0 for a leaf, 1 + the deepest element for a tuple.
  int depth() const;
  /// All leaves in order.
  std::vector<int64_t> flatten() const;
  /// "5", "(2,(3,4))", "()".
  std::string str() const;

  bool operator==(const IntTuple &other) const;
  bool operator!=(const IntTuple &other) const { return !(*this == other); }

private:
  bool isLeaf_ = true;
  int64_t value_ = 0;
  std::vector<IntTuple> elems_;
};

/// A function from coordinates to indices, written shape:stride.
class Layout {
public:
  /// Unchecked: the caller guarantees a valid layout (see the file comment).
  /// Use make() for input that has not been validated.
  Layout(IntTuple shape, IntTuple stride);
  /// Checked construction; on failure returns nullopt and explains why.
  static std::optional<Layout> make(IntTuple shape, IntTuple stride,
                                    std::string *error = nullptr);
  /// Compact layout where the first leaf is fastest (strides are the
  /// exclusive prefix products of the flattened shape).
  static Layout columnMajor(IntTuple shape);
  /// Compact layout where the last leaf is fastest (strides are the exclusive
  /// suffix products of the flattened shape), like CuTe's LayoutRight.
  static Layout rowMajor(IntTuple shape);

  const IntTuple &shape() const { return shape_; }
  const IntTuple &stride() const { return stride_; }
  size_t rank() const { return shape_.rank(); }
  /// Number of coordinates; at least 1 for a valid layout.
  int64_t size() const { return shape_.product(); }
  /// 1 + the largest index over [0, size()).
  int64_t cosize() const;
  /// The i-th top-level mode (the layout itself for a rank-1 leaf layout);
  /// 1:0 when i >= rank().
  Layout mode(size_t i) const;

  /// Index of a linear (colexicographic) coordinate; coordinates >= size()
  /// use the extension described in the file comment. Requires coord >= 0.
  int64_t operator()(int64_t linearCoord) const;
  /// Index of one coordinate per top-level mode, each linear within its mode.
  /// Missing coordinates count as 0 and extra ones are ignored. Note that
  /// `l({5})` picks the linear overload; spell out std::vector<int64_t>{5}.
  int64_t operator()(const std::vector<int64_t> &topLevelCoords) const;

  /// CuTe notation, e.g. "(4,2):(1,4)" or "8:1".
  std::string str() const;

  /// Structural equality of shape and stride (not functional equality).
  bool operator==(const Layout &other) const;
  bool operator!=(const Layout &other) const { return !(*this == other); }

private:
  IntTuple shape_;
  IntTuple stride_;
};

/// Parses the output of Layout::str(). Whitespace between tokens is allowed.
/// Syntax errors name the 0-based byte position; the parsed layout is then
/// validated like Layout::make.
std::optional<Layout> parseLayout(std::string_view text,
                                  std::string *error = nullptr);

/// Same function on [0, size()), with shape and stride flattened to one
/// level. A leaf layout is returned unchanged.
Layout flatten(const Layout &l);

/// Same function on [0, size()) with the fewest modes: size-1 modes are
/// dropped and neighbours s0:d0, s1:s0*d0 merge into s0*s1:d0. The result is
/// a leaf layout if one mode remains, 1:0 if none remains, flat otherwise.
Layout coalesce(const Layout &l);

/// The layout whose i-th top-level mode is modes[i] (CuTe's make_layout).
/// Always a tuple layout, even for a single mode; "():()" for no modes.
Layout concat(const std::vector<Layout> &modes);

/// r = a o b with r(i) == a(b(i)) for all i in [0, b.size()), where a is
/// evaluated with the extension beyond a.size() if needed. r's shape refines
/// b's: each leaf of b becomes a leaf or a flat tuple.
///
/// Computed mode-by-mode over the leaves of b. A leaf s:d of b is admissible
/// when stepping by d through a's (coalesced) modes stays aligned: d must be
/// a multiple of the leading extents it skips, and the s steps must fill
/// whole modes except the last one they touch (CuTe's divisibility
/// conditions, relaxed only where the result is still exact). Distinct
/// leaves of b must also use disjoint digit ranges of a's modes, otherwise
/// a(b(i)) is not the sum of the per-leaf results. Any violation is an error.
std::optional<Layout> composition(const Layout &a, const Layout &b,
                                  std::string *error = nullptr);

/// The layout r of the positions a does not cover, up to cosizeHi >= 1.
/// Stride-0 and size-1 modes of a are ignored. Sorting a's remaining modes
/// by stride, every stride must be a multiple of the span (shape*stride) of
/// the previous mode, starting from 1; r has one mode per gap plus a final
/// mode ceil(cosizeHi / span):span, coalesced. Then concat{a, r} is a
/// bijection onto [0, K) where K is the smallest multiple of the span of a's
/// largest-stride mode that is >= cosizeHi (if a is injective).
std::optional<Layout> complement(const Layout &a, int64_t cosizeHi,
                                 std::string *error = nullptr);

/// composition(a, concat{tiler, complement(tiler, a.size())}): a rank-2
/// layout whose mode 0 is a restricted to the tile and mode 1 iterates tiles.
std::optional<Layout> logicalDivide(const Layout &a, const Layout &tiler,
                                    std::string *error = nullptr);

/// concat{a, composition(complement(a, a.size() * tiler.cosize()), tiler)}:
/// a rank-2 layout whose mode 0 is a and mode 1 places copies of a.
std::optional<Layout> logicalProduct(const Layout &a, const Layout &tiler,
                                     std::string *error = nullptr);

/// r with a(r(i)) == i for all i in [0, r.size()), built by chaining a's
/// modes whose strides are 1, s0, s0*s1, ... (CuTe's right_inverse). For an
/// injective a, r.size() is the largest n with [0, n) inside a's image.
/// 1:0 when a has no stride-1 mode.
std::optional<Layout> rightInverse(const Layout &a,
                                   std::string *error = nullptr);

/// l with l(a(i)) == i for all i in [0, a.size()); l.size() >= a.cosize().
/// Requires a injective and its strides, sorted, each dividing the next.
/// Indices outside a's image map to coordinates past a.size() where that is
/// possible (as in CuTe's right_inverse(concat{a, complement(a)}), which this
/// matches whenever complement(a) exists); otherwise they are unspecified.
std::optional<Layout> leftInverse(const Layout &a,
                                  std::string *error = nullptr);

/// Whether distinct coordinates in [0, size()) map to distinct indices.
/// Exact; structural checks decide common layouts, irregular overlapping
/// strides fall back to enumerating the image (O(size) time and memory).
/// False for invalid layouts.
bool isInjective(const Layout &l);
/// Whether l maps [0, size()) one-to-one onto [0, size()).
bool isBijective(const Layout &l);

} // namespace wavetile::layout

#endif // WAVETILE_LAYOUT_LAYOUTALGEBRA_H
