//===- LayoutAlgebra.cpp - CuTe-style layout algebra ----------------------===//
//
// Most algorithms work on the flattened list of (shape, stride) modes; the
// hierarchy only matters for evaluation and for shaping results.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Layout/LayoutAlgebra.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace wavetile::layout {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Wrapping arithmetic keeps out-of-contract input (overflowing layouts built
// with the unchecked constructor) free of undefined behaviour.
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

// Checked arithmetic for the algebra, which must not return wrong layouts.
bool checkedMul(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
bool checkedAdd(int64_t a, int64_t b, int64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

struct Mode {
  int64_t shape;
  int64_t stride;
};

// The leaves of l paired up. Strides missing from an invalid layout count as
// 0, which keeps every caller in bounds.
std::vector<Mode> flatModes(const Layout &l) {
  std::vector<int64_t> shapes = l.shape().flatten();
  std::vector<int64_t> strides = l.stride().flatten();
  std::vector<Mode> modes;
  modes.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i)
    modes.push_back({shapes[i], i < strides.size() ? strides[i] : 0});
  return modes;
}

// Whether linear coordinates past the size end up in an empty tuple (and so
// contribute nothing) instead of in the last leaf.
bool endsInEmptyTuple(const IntTuple &t) {
  if (t.isLeaf())
    return false;
  return t.elems().empty() || endsInEmptyTuple(t.elems().back());
}

// Drops size-1 modes and merges s0:d0, s1:s0*d0 into s0*s1:d0. With
// keepLast, the last mode is kept even when it has size 1, so that the
// extension beyond the size (which grows the last mode) is preserved too.
std::vector<Mode> coalesceModes(const std::vector<Mode> &modes, bool keepLast) {
  std::vector<Mode> out;
  for (size_t i = 0; i < modes.size(); ++i) {
    const Mode &m = modes[i];
    bool isLast = i + 1 == modes.size();
    if (m.shape == 1 && !(keepLast && isLast))
      continue;
    int64_t span;
    if (!out.empty() && checkedMul(out.back().shape, out.back().stride, span) &&
        m.stride == span) {
      out.back().shape = wrapMul(out.back().shape, m.shape);
      continue;
    }
    out.push_back(m);
  }
  return out;
}

// CuTe's convention for flat results: a leaf layout for one mode, 1:0 for
// none, a flat tuple otherwise.
std::pair<IntTuple, IntTuple> modesToTuples(const std::vector<Mode> &modes) {
  if (modes.empty())
    return {IntTuple(1), IntTuple(0)};
  if (modes.size() == 1)
    return {IntTuple(modes[0].shape), IntTuple(modes[0].stride)};
  std::vector<IntTuple> shapes, strides;
  for (const Mode &m : modes) {
    shapes.emplace_back(m.shape);
    strides.emplace_back(m.stride);
  }
  return {IntTuple::tuple(std::move(shapes)),
          IntTuple::tuple(std::move(strides))};
}

Layout modesToLayout(const std::vector<Mode> &modes) {
  auto [shape, stride] = modesToTuples(modes);
  return Layout(std::move(shape), std::move(stride));
}

bool congruent(const IntTuple &a, const IntTuple &b) {
  if (a.isLeaf() || b.isLeaf())
    return a.isLeaf() && b.isLeaf();
  if (a.rank() != b.rank())
    return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!congruent(a.elems()[i], b.elems()[i]))
      return false;
  return true;
}

bool validate(const IntTuple &shape, const IntTuple &stride,
              std::string *error) {
  auto fail = [&](const std::string &what) {
    setError(error, what + " in " + shape.str() + ":" + stride.str());
    return false;
  };
  if (!congruent(shape, stride)) {
    setError(error, "shape " + shape.str() + " and stride " + stride.str() +
                        " are not congruent");
    return false;
  }
  int64_t size = 1, maxIndex = 0;
  for (const Mode &m : flatModes(Layout(shape, stride))) {
    if (m.shape < 1)
      return fail("non-positive extent " + std::to_string(m.shape));
    if (m.stride < 0)
      return fail("negative stride " + std::to_string(m.stride) +
                  " (negative strides are unsupported)");
    int64_t reach;
    if (!checkedMul(size, m.shape, size))
      return fail("size overflows int64");
    if (!checkedMul(m.shape - 1, m.stride, reach) ||
        !checkedAdd(maxIndex, reach, maxIndex) || maxIndex == kInt64Max)
      return fail("cosize overflows int64");
  }
  return true;
}

// Validates an argument of the algebra, naming the function and argument.
bool checkArg(const Layout &l, const char *fn, const char *arg,
              std::string *error) {
  std::string why;
  if (validate(l.shape(), l.stride(), &why))
    return true;
  setError(error, std::string(fn) + ": invalid " + arg + ": " + why);
  return false;
}

// Builds a checked result: internal arithmetic is checked, but the final
// cosize of a result can still overflow.
std::optional<Layout> finish(IntTuple shape, IntTuple stride, const char *fn,
                             std::string *error) {
  std::string why;
  std::optional<Layout> l =
      Layout::make(std::move(shape), std::move(stride), &why);
  if (!l)
    setError(error, std::string(fn) + ": result is not representable: " + why);
  return l;
}

// Rebuilds a tuple with the structure of `profile` from flat leaf values.
IntTuple unflattenLike(const IntTuple &profile,
                       const std::vector<int64_t> &values, size_t &pos) {
  if (profile.isLeaf())
    return IntTuple(values[pos++]);
  std::vector<IntTuple> elems;
  for (const IntTuple &e : profile.elems())
    elems.push_back(unflattenLike(e, values, pos));
  return IntTuple::tuple(std::move(elems));
}

// Evaluates a linear coordinate, CuTe-style: every mode but the last takes
// its digit, the last mode takes the rest. `stride` may be null or
// mismatched for invalid layouts; such parts count as stride 0.
int64_t evalLinear(const IntTuple &shape, const IntTuple *stride,
                   int64_t coord) {
  if (shape.isLeaf())
    return stride && stride->isLeaf() ? wrapMul(coord, stride->value()) : 0;
  int64_t index = 0;
  size_t n = shape.rank();
  for (size_t i = 0; i < n; ++i) {
    const IntTuple *sub = stride && !stride->isLeaf() && i < stride->rank()
                              ? &stride->elems()[i]
                              : nullptr;
    int64_t digit = coord;
    if (i + 1 < n) {
      // max() guards the division against out-of-contract extents.
      int64_t extent = std::max<int64_t>(shape.elems()[i].product(), 1);
      digit = coord % extent;
      coord /= extent;
    }
    index = wrapAdd(index, evalLinear(shape.elems()[i], sub, digit));
  }
  return index;
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

// a, coalesced, seen as a mixed-radix number system over its linear
// coordinates: mode k is a digit with radix a[k].shape. The last mode is
// unbounded (it absorbs coordinates past a.size()).
struct ComposeState {
  std::vector<Mode> a;
  // Per mode of a, the sum over b's leaves of the largest digit each puts
  // there. Keeping it below the radix guarantees that adding the leaves'
  // coordinates never carries, which is what makes the mode-by-mode result
  // equal to a(b(i)).
  std::vector<int64_t> digitUse;
};

// Composes a with the leaf layout s:d of b, returning the result's modes.
std::optional<std::vector<Mode>> composeLeaf(ComposeState &st, int64_t s,
                                             int64_t d, std::string *why) {
  if (s == 1 || d == 0)
    return std::vector<Mode>{{s, 0}}; // b is constantly 0, and a(0) == 0.
  const std::vector<Mode> &a = st.a;
  const size_t last = a.size() - 1;
  const std::string leaf =
      "b-mode " + std::to_string(s) + ":" + std::to_string(d);
  auto modeStr = [&](size_t k) {
    return std::to_string(a[k].shape) + ":" + std::to_string(a[k].stride);
  };

  // Skip the leading modes that every step of d jumps over entirely; then
  // step i of b lands on digit i*r of mode k.
  size_t k = 0;
  int64_t r = d;
  while (k < last && r > 1 && r % a[k].shape == 0) {
    r /= a[k].shape;
    ++k;
  }
  // extent: how many steps fit in mode k. aligned: whether step `extent`
  // lands exactly on the next mode's first digit, so b may continue there.
  int64_t extent = 0; // Unused while k == last: that mode is unbounded.
  bool aligned = true;
  if (k < last) {
    if (r > a[k].shape) {
      *why = leaf + ": the remaining stride " + std::to_string(r) +
             " is neither a divisor nor a multiple of a's mode " + modeStr(k);
      return std::nullopt;
    }
    extent = ceilDiv(a[k].shape, r);
    aligned = a[k].shape % r == 0;
  }
  int64_t digitStep = r;
  int64_t stride;
  if (!checkedMul(a[k].stride, r, stride)) {
    *why = leaf + ": stride overflows int64";
    return std::nullopt;
  }

  // Take s steps, moving on to the next mode of a whenever one is full.
  std::vector<Mode> out;
  int64_t rem = s;
  while (true) {
    bool unbounded = k == last;
    int64_t take = unbounded ? rem : std::min(rem, extent);
    if (take < rem && !aligned) {
      *why = leaf + ": the remaining stride " + std::to_string(digitStep) +
             " does not divide a's mode " + modeStr(k) +
             ", so its steps cannot continue into the next mode";
      return std::nullopt;
    }
    if (take < rem && rem % take != 0) {
      *why = leaf + ": " + std::to_string(rem) +
             " remaining steps are not a multiple of the " +
             std::to_string(take) + " that fit in a's mode " + modeStr(k);
      return std::nullopt;
    }
    if (!unbounded) {
      int64_t maxDigit = (take - 1) * digitStep; // < a[k].shape: no overflow
      if (maxDigit > a[k].shape - 1 - st.digitUse[k]) {
        *why = leaf + " overlaps another mode of b inside a's mode " +
               modeStr(k) +
               ", so a(b(i)) is not the sum of the per-mode results";
        return std::nullopt;
      }
      st.digitUse[k] += maxDigit;
    }
    out.push_back({take, stride});
    if (take == rem)
      return out;
    rem /= take;
    ++k;
    extent = a[k].shape;
    aligned = true;
    digitStep = 1;
    stride = a[k].stride;
  }
}

// Composes a with every leaf of b, mirroring b's tuple structure.
std::optional<std::pair<IntTuple, IntTuple>> composeTree(ComposeState &st,
                                                         const IntTuple &shape,
                                                         const IntTuple &stride,
                                                         std::string *why) {
  if (shape.isLeaf()) {
    std::optional<std::vector<Mode>> modes =
        composeLeaf(st, shape.value(), stride.value(), why);
    if (!modes)
      return std::nullopt;
    return modesToTuples(*modes);
  }
  std::vector<IntTuple> shapes, strides;
  for (size_t i = 0; i < shape.rank(); ++i) {
    auto sub = composeTree(st, shape.elems()[i], stride.elems()[i], why);
    if (!sub)
      return std::nullopt;
    shapes.push_back(std::move(sub->first));
    strides.push_back(std::move(sub->second));
  }
  return std::make_pair(IntTuple::tuple(std::move(shapes)),
                        IntTuple::tuple(std::move(strides)));
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

class Parser {
public:
  Parser(std::string_view text, std::string *error)
      : text_(text), error_(error) {}

  std::optional<Layout> parse() {
    std::optional<IntTuple> shape = parseTuple(0);
    if (!shape)
      return std::nullopt;
    skipSpace();
    if (!at(':'))
      return fail("':'");
    ++pos_;
    std::optional<IntTuple> stride = parseTuple(0);
    if (!stride)
      return std::nullopt;
    skipSpace();
    if (pos_ != text_.size())
      return fail("end of input");
    std::string why;
    std::optional<Layout> l = Layout::make(*shape, *stride, &why);
    if (!l)
      setError(error_, "parseLayout: " + why);
    return l;
  }

private:
  // Bounds recursion so that hostile input cannot exhaust the stack.
  static constexpr int kMaxDepth = 64;

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool atDigit() const {
    return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
  }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n'))
      ++pos_;
  }

  std::nullopt_t fail(const std::string &expected) {
    std::string found = pos_ < text_.size()
                            ? "'" + std::string(1, text_[pos_]) + "'"
                            : std::string("end of input");
    setError(error_, "parseLayout: expected " + expected + " at position " +
                         std::to_string(pos_) + ", found " + found);
    return std::nullopt;
  }

  std::optional<IntTuple> parseTuple(int depth) {
    skipSpace();
    if (!at('('))
      return parseInt();
    if (depth == kMaxDepth)
      return fail("at most " + std::to_string(kMaxDepth) + " nested tuples");
    ++pos_;
    std::vector<IntTuple> elems;
    skipSpace();
    if (at(')')) {
      ++pos_;
      return IntTuple::tuple({});
    }
    while (true) {
      std::optional<IntTuple> elem = parseTuple(depth + 1);
      if (!elem)
        return std::nullopt;
      elems.push_back(std::move(*elem));
      skipSpace();
      if (at(',')) {
        ++pos_;
        continue;
      }
      if (!at(')'))
        return fail("',' or ')'");
      ++pos_;
      return IntTuple::tuple(std::move(elems));
    }
  }

  std::optional<IntTuple> parseInt() {
    size_t begin = pos_;
    bool negative = at('-');
    if (negative)
      ++pos_;
    if (!atDigit()) {
      pos_ = begin;
      return fail("an integer or '('");
    }
    int64_t value = 0;
    while (atDigit()) {
      if (!checkedMul(value, 10, value) ||
          !checkedAdd(value, text_[pos_] - '0', value)) {
        pos_ = begin;
        return fail("an integer that fits in int64");
      }
      ++pos_;
    }
    return IntTuple(negative ? -value : value);
  }

  std::string_view text_;
  std::string *error_;
  size_t pos_ = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// IntTuple
//===----------------------------------------------------------------------===//

IntTuple::IntTuple(int64_t v) : isLeaf_(true), value_(v) {}

IntTuple::IntTuple(std::initializer_list<IntTuple> elems)
    : isLeaf_(false), elems_(elems) {}

IntTuple IntTuple::tuple(std::vector<IntTuple> elems) {
  IntTuple t(0);
  t.isLeaf_ = false;
  t.elems_ = std::move(elems);
  return t;
}

size_t IntTuple::rank() const { return isLeaf_ ? 1 : elems_.size(); }

int64_t IntTuple::product() const {
  if (isLeaf_)
    return value_;
  int64_t p = 1;
  for (const IntTuple &e : elems_)
    p = wrapMul(p, e.product());
  return p;
}

int IntTuple::depth() const {
  if (isLeaf_)
    return 0;
  int d = 0;
  for (const IntTuple &e : elems_)
    d = std::max(d, e.depth());
  return 1 + d;
}

std::vector<int64_t> IntTuple::flatten() const {
  if (isLeaf_)
    return {value_};
  std::vector<int64_t> leaves;
  for (const IntTuple &e : elems_) {
    std::vector<int64_t> sub = e.flatten();
    leaves.insert(leaves.end(), sub.begin(), sub.end());
  }
  return leaves;
}

std::string IntTuple::str() const {
  if (isLeaf_)
    return std::to_string(value_);
  std::string s = "(";
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (i)
      s += ",";
    s += elems_[i].str();
  }
  return s + ")";
}

bool IntTuple::operator==(const IntTuple &other) const {
  if (isLeaf_ != other.isLeaf_)
    return false;
  return isLeaf_ ? value_ == other.value_ : elems_ == other.elems_;
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape_(std::move(shape)), stride_(std::move(stride)) {}

std::optional<Layout> Layout::make(IntTuple shape, IntTuple stride,
                                   std::string *error) {
  if (!validate(shape, stride, error))
    return std::nullopt;
  return Layout(std::move(shape), std::move(stride));
}

Layout Layout::columnMajor(IntTuple shape) {
  std::vector<int64_t> strides = shape.flatten();
  int64_t step = 1;
  for (int64_t &s : strides)
    s = std::exchange(step, wrapMul(step, s));
  size_t pos = 0;
  IntTuple stride = unflattenLike(shape, strides, pos);
  return Layout(std::move(shape), std::move(stride));
}

Layout Layout::rowMajor(IntTuple shape) {
  std::vector<int64_t> strides = shape.flatten();
  int64_t step = 1;
  for (auto it = strides.rbegin(); it != strides.rend(); ++it)
    *it = std::exchange(step, wrapMul(step, *it));
  size_t pos = 0;
  IntTuple stride = unflattenLike(shape, strides, pos);
  return Layout(std::move(shape), std::move(stride));
}

int64_t Layout::cosize() const {
  int64_t maxIndex = 0;
  for (const Mode &m : flatModes(*this))
    maxIndex = wrapAdd(maxIndex, wrapMul(m.shape - 1, m.stride));
  return wrapAdd(maxIndex, 1);
}

Layout Layout::mode(size_t i) const {
  if (shape_.isLeaf())
    return i == 0 ? *this : Layout(1, 0);
  if (i >= shape_.rank())
    return Layout(1, 0);
  bool hasStride = !stride_.isLeaf() && i < stride_.rank();
  return Layout(shape_.elems()[i],
                hasStride ? stride_.elems()[i] : IntTuple(0));
}

int64_t Layout::operator()(int64_t linearCoord) const {
  return evalLinear(shape_, &stride_, linearCoord);
}

int64_t Layout::operator()(const std::vector<int64_t> &topLevelCoords) const {
  if (shape_.isLeaf())
    return topLevelCoords.empty() ? 0 : (*this)(topLevelCoords[0]);
  int64_t index = 0;
  for (size_t i = 0; i < shape_.rank() && i < topLevelCoords.size(); ++i) {
    const IntTuple *stride =
        !stride_.isLeaf() && i < stride_.rank() ? &stride_.elems()[i] : nullptr;
    index = wrapAdd(index,
                    evalLinear(shape_.elems()[i], stride, topLevelCoords[i]));
  }
  return index;
}

std::string Layout::str() const { return shape_.str() + ":" + stride_.str(); }

bool Layout::operator==(const Layout &other) const {
  return shape_ == other.shape_ && stride_ == other.stride_;
}

//===----------------------------------------------------------------------===//
// Free functions
//===----------------------------------------------------------------------===//

std::optional<Layout> parseLayout(std::string_view text, std::string *error) {
  return Parser(text, error).parse();
}

Layout flatten(const Layout &l) {
  if (l.shape().isLeaf())
    return l;
  std::vector<IntTuple> shapes, strides;
  for (int64_t s : l.shape().flatten())
    shapes.emplace_back(s);
  for (int64_t d : l.stride().flatten())
    strides.emplace_back(d);
  return Layout(IntTuple::tuple(std::move(shapes)),
                IntTuple::tuple(std::move(strides)));
}

Layout coalesce(const Layout &l) {
  return modesToLayout(coalesceModes(flatModes(l), /*keepLast=*/false));
}

Layout concat(const std::vector<Layout> &modes) {
  std::vector<IntTuple> shapes, strides;
  for (const Layout &m : modes) {
    shapes.push_back(m.shape());
    strides.push_back(m.stride());
  }
  return Layout(IntTuple::tuple(std::move(shapes)),
                IntTuple::tuple(std::move(strides)));
}

std::optional<Layout> composition(const Layout &a, const Layout &b,
                                  std::string *error) {
  if (!checkArg(a, "composition", "a", error) ||
      !checkArg(b, "composition", "b", error))
    return std::nullopt;
  std::vector<Mode> modes = flatModes(a);
  // Past a.size(), coordinates that end in an empty tuple contribute 0; an
  // explicit 1:0 last mode gives the unbounded last mode that behaviour.
  if (endsInEmptyTuple(a.shape()))
    modes.push_back({1, 0});
  ComposeState st{coalesceModes(modes, /*keepLast=*/true), {}};
  st.digitUse.assign(st.a.size(), 0);
  std::string why;
  auto result = composeTree(st, b.shape(), b.stride(), &why);
  if (!result) {
    setError(error, "composition(" + a.str() + ", " + b.str() + "): " + why);
    return std::nullopt;
  }
  return finish(std::move(result->first), std::move(result->second),
                "composition", error);
}

std::optional<Layout> complement(const Layout &a, int64_t cosizeHi,
                                 std::string *error) {
  if (!checkArg(a, "complement", "a", error))
    return std::nullopt;
  if (cosizeHi < 1) {
    setError(error, "complement: cosizeHi must be positive, got " +
                        std::to_string(cosizeHi));
    return std::nullopt;
  }
  // Broadcast and size-1 modes occupy no positions of their own.
  std::vector<Mode> modes;
  for (const Mode &m : flatModes(a))
    if (m.shape > 1 && m.stride > 0)
      modes.push_back(m);
  std::stable_sort(
      modes.begin(), modes.end(),
      [](const Mode &x, const Mode &y) { return x.stride < y.stride; });
  // Walk the modes by increasing stride; [0, span) is what the modes so far
  // and their gaps tile. Each gap becomes a mode of the complement.
  std::vector<Mode> gaps;
  int64_t span = 1;
  for (const Mode &m : modes) {
    if (m.stride % span != 0) {
      setError(error, "complement: " + a.str() +
                          " is not injective with nested strides: stride " +
                          std::to_string(m.stride) + " is not a multiple of " +
                          std::to_string(span) +
                          ", the span of its smaller-stride modes");
      return std::nullopt;
    }
    gaps.push_back({m.stride / span, span});
    if (!checkedMul(m.shape, m.stride, span)) {
      setError(error, "complement: span of " + a.str() + " overflows int64");
      return std::nullopt;
    }
  }
  gaps.push_back({ceilDiv(cosizeHi, span), span});
  auto [shape, stride] = modesToTuples(coalesceModes(gaps, false));
  return finish(std::move(shape), std::move(stride), "complement", error);
}

std::optional<Layout> logicalDivide(const Layout &a, const Layout &tiler,
                                    std::string *error) {
  if (!checkArg(a, "logicalDivide", "a", error) ||
      !checkArg(tiler, "logicalDivide", "tiler", error))
    return std::nullopt;
  std::string why;
  std::optional<Layout> rest = complement(tiler, a.size(), &why);
  std::optional<Layout> result;
  if (rest)
    result = composition(a, concat({tiler, *rest}), &why);
  if (!result)
    setError(error, "logicalDivide: " + why);
  return result;
}

std::optional<Layout> logicalProduct(const Layout &a, const Layout &tiler,
                                     std::string *error) {
  if (!checkArg(a, "logicalProduct", "a", error) ||
      !checkArg(tiler, "logicalProduct", "tiler", error))
    return std::nullopt;
  int64_t target;
  if (!checkedMul(a.size(), tiler.cosize(), target)) {
    setError(error,
             "logicalProduct: a.size() * tiler.cosize() overflows int64");
    return std::nullopt;
  }
  std::string why;
  std::optional<Layout> rest = complement(a, target, &why);
  std::optional<Layout> copies;
  if (rest)
    copies = composition(*rest, tiler, &why);
  if (!copies) {
    setError(error, "logicalProduct: " + why);
    return std::nullopt;
  }
  Layout l = concat({a, *copies});
  return finish(l.shape(), l.stride(), "logicalProduct", error);
}

std::optional<Layout> rightInverse(const Layout &a, std::string *error) {
  if (!checkArg(a, "rightInverse", "a", error))
    return std::nullopt;
  std::vector<Mode> modes = coalesceModes(flatModes(a), false);
  // start[k]: the linear coordinate of a where mode k's digit has weight 1.
  std::vector<int64_t> start;
  int64_t weight = 1; // Products of a's extents: bounded by a.size().
  for (const Mode &m : modes) {
    start.push_back(weight);
    weight *= m.shape;
  }
  // Chain the modes with strides 1, s0, s0*s1, ...: together they cover
  // [0, covered) exactly. Each mode is used at most once since `covered`
  // grows strictly.
  std::vector<Mode> out;
  for (int64_t covered = 1;;) {
    auto it = std::find_if(modes.begin(), modes.end(),
                           [&](const Mode &m) { return m.stride == covered; });
    if (it == modes.end())
      break;
    out.push_back({it->shape, start[it - modes.begin()]});
    covered *= it->shape;
  }
  auto [shape, stride] = modesToTuples(coalesceModes(out, false));
  return finish(std::move(shape), std::move(stride), "rightInverse", error);
}

std::optional<Layout> leftInverse(const Layout &a, std::string *error) {
  if (!checkArg(a, "leftInverse", "a", error))
    return std::nullopt;
  struct Digit {
    Mode mode;
    int64_t start; // Weight of this digit in a's linear coordinate.
  };
  std::vector<Digit> digits;
  int64_t weight = 1;
  for (const Mode &m : coalesceModes(flatModes(a), false)) {
    digits.push_back({m, weight});
    weight *= m.shape;
  }
  std::stable_sort(digits.begin(), digits.end(),
                   [](const Digit &x, const Digit &y) {
                     return x.mode.stride < y.mode.stride;
                   });
  auto notInjective = [&] {
    setError(error, "leftInverse: " + a.str() + " is not injective");
    return std::nullopt;
  };
  if (digits.empty())
    return Layout(1, 0);
  if (digits.front().mode.stride == 0)
    return notInjective();

  // l reads an index as a mixed-radix number whose radices are the ratios of
  // consecutive sorted strides. The part of a ratio beyond a's extent is a
  // gap; gap digits are numbered after a's coordinates, like the complement.
  std::vector<Mode> out;
  int64_t gapStride = a.size();
  bool fits = true;
  auto addGap = [&](int64_t g) {
    if (g == 1)
      return;
    out.push_back({g, gapStride});
    fits = fits && checkedMul(gapStride, g, gapStride);
  };
  addGap(digits.front().mode.stride);
  for (size_t j = 0; j + 1 < digits.size(); ++j) {
    const Mode &cur = digits[j].mode;
    int64_t next = digits[j + 1].mode.stride;
    if (next % cur.stride != 0) {
      if (!isInjective(a))
        return notInjective();
      setError(error, "leftInverse: no layout inverts " + a.str() +
                          ": stride " + std::to_string(next) +
                          " is not a multiple of stride " +
                          std::to_string(cur.stride));
      return std::nullopt;
    }
    int64_t ratio = next / cur.stride;
    // Digit `ratio` of this mode would reach the next stride: a collision.
    if (ratio < cur.shape)
      return notInjective();
    if (ratio % cur.shape == 0) {
      out.push_back({cur.shape, digits[j].start});
      addGap(ratio / cur.shape);
    } else {
      // No layout separates the gap here; its indices are not in a's image,
      // so what l returns for them is unspecified.
      out.push_back({ratio, digits[j].start});
    }
  }
  out.push_back({digits.back().mode.shape, digits.back().start});
  if (!fits) {
    setError(error, "leftInverse: result for " + a.str() + " overflows int64");
    return std::nullopt;
  }
  auto [shape, stride] = modesToTuples(coalesceModes(out, false));
  return finish(std::move(shape), std::move(stride), "leftInverse", error);
}

bool isInjective(const Layout &l) {
  if (!validate(l.shape(), l.stride(), nullptr))
    return false;
  std::vector<Mode> modes = coalesceModes(flatModes(l), false);
  std::stable_sort(
      modes.begin(), modes.end(),
      [](const Mode &x, const Mode &y) { return x.stride < y.stride; });
  if (!modes.empty() && modes.front().stride == 0)
    return false; // A broadcast mode of size > 1.
  // separated: every stride exceeds the largest index reachable with the
  // smaller ones, so each index has a single digit expansion.
  // chained: each stride divides the next; then any overlap is a collision
  // (some digit of a mode reaches exactly the next stride).
  bool separated = true, chained = true;
  int64_t reach = 0; // At most cosize() - 1: no overflow.
  for (size_t j = 0; j < modes.size(); ++j) {
    if (modes[j].stride <= reach)
      separated = false;
    if (j > 0 && modes[j].stride % modes[j - 1].stride != 0)
      chained = false;
    reach += (modes[j].shape - 1) * modes[j].stride;
  }
  if (separated)
    return true;
  if (chained || l.size() > l.cosize())
    return false;
  // Irregular overlapping strides such as (3,2):(2,3): enumerate the image.
  std::vector<int64_t> image;
  image.reserve(static_cast<size_t>(l.size()));
  for (int64_t i = 0; i < l.size(); ++i)
    image.push_back(l(i));
  std::sort(image.begin(), image.end());
  return std::adjacent_find(image.begin(), image.end()) == image.end();
}

bool isBijective(const Layout &l) {
  return l.size() == l.cosize() && isInjective(l);
}

} // namespace wavetile::layout
