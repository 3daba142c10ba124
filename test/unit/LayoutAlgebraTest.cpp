//===- LayoutAlgebraTest.cpp - Tests for the layout algebra ---------------===//
//
// Worked examples whose expected values were derived by hand from the CuTe
// definitions, plus property tests that check every operation pointwise
// against a brute-force reference evaluator on seeded random layouts.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Layout/LayoutAlgebra.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace wavetile::layout;

namespace {

using Rng = std::mt19937;

//===----------------------------------------------------------------------===//
// Reference model, written directly from the definition and independent of
// the library's evaluation: every mode but the last takes its colex digit,
// the last mode takes the rest (which also defines coordinates >= size).
//===----------------------------------------------------------------------===//

int64_t refEval(const IntTuple &shape, const IntTuple &stride, int64_t x) {
  if (shape.isLeaf())
    return x * stride.value();
  int64_t result = 0;
  size_t n = shape.rank();
  for (size_t i = 0; i < n; ++i) {
    bool last = i + 1 == n;
    int64_t extent = shape.elems()[i].product();
    result +=
        refEval(shape.elems()[i], stride.elems()[i], last ? x : x % extent);
    if (!last)
      x /= extent;
  }
  return result;
}

int64_t refEval(const Layout &l, int64_t x) {
  return refEval(l.shape(), l.stride(), x);
}

std::vector<int64_t> refImage(const Layout &l) {
  std::vector<int64_t> image;
  for (int64_t i = 0; i < l.size(); ++i)
    image.push_back(refEval(l, i));
  return image;
}

bool refInjective(const Layout &l) {
  std::vector<int64_t> image = refImage(l);
  return std::set<int64_t>(image.begin(), image.end()).size() == image.size();
}

bool refBijective(const Layout &l) {
  std::vector<int64_t> image = refImage(l);
  std::sort(image.begin(), image.end());
  for (size_t i = 0; i < image.size(); ++i)
    if (image[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

// Whether r's shape refines b's: same tuple structure, except that a leaf of
// b may become a flat tuple of the same size.
bool refines(const IntTuple &r, const IntTuple &b) {
  if (b.isLeaf())
    return r.depth() <= 1 && r.product() == b.value();
  if (r.isLeaf() || r.rank() != b.rank())
    return false;
  for (size_t i = 0; i < b.rank(); ++i)
    if (!refines(r.elems()[i], b.elems()[i]))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Random layouts
//===----------------------------------------------------------------------===//

int64_t uniform(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// A tuple with the structure of `profile` and the given leaves.
IntTuple withLeaves(const IntTuple &profile, const std::vector<int64_t> &v,
                    size_t &pos) {
  if (profile.isLeaf())
    return IntTuple(v[pos++]);
  std::vector<IntTuple> elems;
  for (const IntTuple &e : profile.elems())
    elems.push_back(withLeaves(e, v, pos));
  return IntTuple::tuple(elems);
}

IntTuple withLeaves(const IntTuple &profile, const std::vector<int64_t> &v) {
  size_t pos = 0;
  return withLeaves(profile, v, pos);
}

// A leaf, or 1-3 modes that are each a leaf or a tuple of 1-3 leaves.
IntTuple randomShape(Rng &rng, int64_t maxSize) {
  static const int64_t kExtents[] = {1, 2, 2, 3, 4, 4, 5, 6, 8};
  auto leaf = [&] { return IntTuple(kExtents[uniform(rng, 0, 8)]); };
  while (true) {
    IntTuple shape = leaf();
    if (uniform(rng, 0, 4) != 0) {
      std::vector<IntTuple> modes;
      for (int64_t i = 0, n = uniform(rng, 1, 3); i < n; ++i) {
        if (uniform(rng, 0, 2) != 0) {
          modes.push_back(leaf());
          continue;
        }
        std::vector<IntTuple> sub;
        for (int64_t j = 0, m = uniform(rng, 1, 3); j < m; ++j)
          sub.push_back(leaf());
        modes.push_back(IntTuple::tuple(sub));
      }
      shape = IntTuple::tuple(modes);
    }
    if (shape.product() <= maxSize)
      return shape;
  }
}

// Strides of three kinds: a permuted compact layout (optionally with gaps
// and a base stride), the same with some broadcast modes, or arbitrary.
IntTuple randomStride(const IntTuple &shape, Rng &rng) {
  std::vector<int64_t> extents = shape.flatten();
  std::vector<int64_t> strides(extents.size());
  int64_t kind = uniform(rng, 0, 2);
  if (kind == 2) {
    for (int64_t &d : strides)
      d = uniform(rng, 0, 12);
  } else {
    std::vector<size_t> order(extents.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    int64_t weight = uniform(rng, 1, 2);
    for (size_t k : order) {
      strides[k] = (kind == 1 && uniform(rng, 0, 3) == 0) ? 0 : weight;
      weight *= extents[k] * (uniform(rng, 0, 3) == 0 ? 2 : 1);
    }
  }
  return withLeaves(shape, strides);
}

Layout randomLayout(Rng &rng, int64_t maxSize = 300) {
  IntTuple shape = randomShape(rng, maxSize);
  IntTuple stride = randomStride(shape, rng);
  return Layout(shape, stride);
}

// A finer mixed-radix system for the coordinates of the given extents: each
// extent is split into random factors; weights are colex positions.
struct Digit {
  int64_t radix, weight;
};

std::vector<Digit> refine(const std::vector<int64_t> &extents, Rng &rng) {
  std::vector<Digit> digits;
  int64_t weight = 1;
  for (int64_t e : extents) {
    while (e > 1) {
      std::vector<int64_t> divisors;
      for (int64_t f = 2; f <= e; ++f)
        if (e % f == 0)
          divisors.push_back(f);
      int64_t f = divisors[uniform(rng, 0, divisors.size() - 1)];
      digits.push_back({f, weight});
      weight *= f;
      e /= f;
    }
  }
  return digits;
}

struct Leaf {
  int64_t shape, stride;
};

// Runs of 1-3 consecutive digits as leaves (shape: product of the run,
// stride: weight of its first digit, times `scale`), each kept with
// probability keepPercent.
std::vector<Leaf> pickRuns(const std::vector<Digit> &digits, Rng &rng,
                           int keepPercent, int64_t scale = 1) {
  std::vector<Leaf> leaves;
  for (size_t i = 0; i < digits.size();) {
    size_t end = std::min(digits.size(), i + uniform(rng, 1, 3));
    int64_t shape = 1;
    for (size_t j = i; j < end; ++j)
      shape *= digits[j].radix;
    if (uniform(rng, 0, 99) < keepPercent)
      leaves.push_back({shape, digits[i].weight * scale});
    i = end;
  }
  return leaves;
}

// The leaves in random order, in a random hierarchy of depth <= 2.
Layout assemble(std::vector<Leaf> leaves, Rng &rng) {
  std::shuffle(leaves.begin(), leaves.end(), rng);
  if (leaves.empty())
    leaves.push_back({1, 0});
  if (leaves.size() == 1 && uniform(rng, 0, 1))
    return Layout(leaves[0].shape, leaves[0].stride);
  std::vector<IntTuple> shapes, strides;
  for (size_t i = 0; i < leaves.size();) {
    size_t end = std::min(leaves.size(), i + uniform(rng, 1, 2));
    if (end == i + 1 && uniform(rng, 0, 2) != 0) {
      shapes.emplace_back(leaves[i].shape);
      strides.emplace_back(leaves[i].stride);
    } else {
      std::vector<IntTuple> subShape, subStride;
      for (size_t j = i; j < end; ++j) {
        subShape.emplace_back(leaves[j].shape);
        subStride.emplace_back(leaves[j].stride);
      }
      shapes.push_back(IntTuple::tuple(subShape));
      strides.push_back(IntTuple::tuple(subStride));
    }
    i = end;
  }
  return Layout(IntTuple::tuple(shapes), IntTuple::tuple(strides));
}

// An injective layout whose sorted strides each divide the next: a random
// subset of the digits of a random extent (up to 360), permuted and scaled.
Layout randomAlignedInjective(Rng &rng) {
  static const int64_t kFactors[] = {2, 3, 4, 5, 6};
  std::vector<int64_t> extents;
  for (int64_t i = 0, n = uniform(rng, 1, 3); i < n; ++i)
    extents.push_back(kFactors[uniform(rng, 0, 4)]);
  std::vector<Leaf> leaves =
      pickRuns(refine(extents, rng), rng, 60, uniform(rng, 1, 3));
  if (uniform(rng, 0, 3) == 0)
    leaves.push_back({1, uniform(rng, 0, 7)}); // size-1 modes are harmless
  return assemble(leaves, rng);
}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

// Expects x and y to agree on [0, n) (by the reference evaluator).
void expectSameFunction(const Layout &x, const Layout &y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(refEval(x, i), refEval(y, i))
        << x.str() << " vs " << y.str() << " at " << i;
}

// Expects `f(&error)` to fail with a message containing `needle`.
template <typename F> void expectError(F f, const std::string &needle) {
  std::string error;
  std::optional<Layout> result = f(&error);
  EXPECT_FALSE(result.has_value()) << "unexpectedly got " << result->str();
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find(needle), std::string::npos)
      << "message \"" << error << "\" lacks \"" << needle << "\"";
}

std::string strOf(const std::optional<Layout> &l, const std::string &error) {
  return l ? l->str() : "error: " + error;
}

constexpr int kIterations = 1500;

//===----------------------------------------------------------------------===//
// IntTuple and Layout basics
//===----------------------------------------------------------------------===//

TEST(IntTuple, LeafAndTuple) {
  IntTuple leaf = 5;
  EXPECT_TRUE(leaf.isLeaf());
  EXPECT_EQ(leaf.value(), 5);
  EXPECT_EQ(leaf.rank(), 1u);
  EXPECT_EQ(leaf.depth(), 0);
  EXPECT_EQ(leaf.product(), 5);
  EXPECT_EQ(leaf.str(), "5");
  EXPECT_TRUE(leaf.elems().empty());

  IntTuple t{2, {3, 4}};
  EXPECT_FALSE(t.isLeaf());
  EXPECT_EQ(t.rank(), 2u);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(t.product(), 24);
  EXPECT_EQ(t.flatten(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.str(), "(2,(3,4))");
  EXPECT_EQ(t.elems()[1], (IntTuple{3, 4}));
  EXPECT_EQ(t, IntTuple::tuple({2, IntTuple::tuple({3, 4})}));
  EXPECT_NE(t, (IntTuple{2, 3, 4}));
  // Brace initialization always builds a tuple, even for one element.
  EXPECT_NE(IntTuple{5}, IntTuple(5));
  EXPECT_EQ((IntTuple{5}).str(), "(5)");

  IntTuple empty = IntTuple::tuple({});
  EXPECT_EQ(empty.rank(), 0u);
  EXPECT_EQ(empty.product(), 1);
  EXPECT_EQ(empty.depth(), 1);
  EXPECT_EQ(empty.str(), "()");
  EXPECT_TRUE(empty.flatten().empty());
  EXPECT_EQ(empty, IntTuple{});
}

TEST(Layout, BasicsAndEvaluation) {
  Layout l({{2, 2}, 3}, {{24, 2}, 8});
  EXPECT_EQ(l.str(), "((2,2),3):((24,2),8)");
  EXPECT_EQ(l.rank(), 2u);
  EXPECT_EQ(l.size(), 12);
  EXPECT_EQ(l.cosize(), 1 + 24 + 2 + 16);
  EXPECT_EQ(l.mode(0).str(), "(2,2):(24,2)");
  EXPECT_EQ(l.mode(1).str(), "3:8");
  EXPECT_EQ(l.mode(2).str(), "1:0"); // out of range
  // 5 = digits (1,0) in mode 0 and 1 in mode 1.
  EXPECT_EQ(l(5), 24 + 8);
  EXPECT_EQ(l(std::vector<int64_t>{1, 1}), 24 + 8);
  EXPECT_EQ(l(std::vector<int64_t>{3, 2}), 24 + 2 + 16);
  // Past the size the last mode keeps counting: 13 = (1,0),3.
  EXPECT_EQ(l(13), 24 + 24);

  // An empty tuple is a size-1 mode; as the last mode it maps the overflow
  // of linear coordinates past the size to 0.
  Layout withEmpty({4, {}}, {1, {}});
  EXPECT_EQ(withEmpty.size(), 4);
  EXPECT_EQ(withEmpty(3), 3);
  EXPECT_EQ(withEmpty(5), 1);

  Layout leaf(8, 3);
  EXPECT_EQ(leaf.rank(), 1u);
  EXPECT_EQ(leaf.mode(0), leaf);
  EXPECT_EQ(leaf(5), 15);
  EXPECT_EQ(leaf(std::vector<int64_t>{5}), 15);
  EXPECT_EQ(leaf.cosize(), 22);

  EXPECT_EQ(Layout::columnMajor({2, {3, 4}}).str(), "(2,(3,4)):(1,(2,6))");
  EXPECT_EQ(Layout::rowMajor({2, {3, 4}}).str(), "(2,(3,4)):(12,(4,1))");
  EXPECT_EQ(Layout::columnMajor(6).str(), "6:1");
  EXPECT_TRUE(isBijective(Layout::rowMajor({2, {3, 4}})));

  EXPECT_EQ(concat({Layout(4, 1), Layout({2, 2}, {4, 8})}).str(),
            "(4,(2,2)):(1,(4,8))");
  EXPECT_EQ(concat({Layout(4, 1)}).str(), "(4):(1)");
  EXPECT_EQ(concat({}).str(), "():()");
  EXPECT_EQ(concat({}).size(), 1);
  EXPECT_EQ(concat({})(0), 0);
}

TEST(Layout, MakeRejectsInvalidInput) {
  auto make = [](IntTuple s, IntTuple d) {
    return [=](std::string *e) { return Layout::make(s, d, e); };
  };
  expectError(make({2, 3}, {1, 2, 3}), "not congruent");
  expectError(make({2, 3}, 1), "not congruent");
  expectError(make({2, {3, 4}}, {1, 2, 3}), "not congruent");
  expectError(make({4, 0}, {1, 4}), "non-positive extent 0");
  expectError(make(-3, 1), "non-positive extent -3");
  expectError(make({4, 2}, {1, -4}), "negative stride -4");
  expectError(make({int64_t(1) << 40, int64_t(1) << 40}, {1, 1}),
              "size overflows");
  expectError(make(4, int64_t(1) << 62), "cosize overflows");
  ASSERT_TRUE(Layout::make({4, {}}, {1, {}}));
  ASSERT_TRUE(Layout::make(int64_t(1) << 62, 1));
}

TEST(LayoutProperty, EvaluationMatchesReference) {
  Rng rng(1);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout l = randomLayout(rng);
    ASSERT_TRUE(Layout::make(l.shape(), l.stride())) << l.str();
    int64_t maxIndex = 0;
    for (int64_t i = 0; i < l.size() + 20; ++i) {
      ASSERT_EQ(l(i), refEval(l, i)) << l.str() << " at " << i;
      if (i < l.size())
        maxIndex = std::max(maxIndex, l(i));
    }
    EXPECT_EQ(l.cosize(), maxIndex + 1) << l.str();
    // One linear coordinate per top-level mode.
    if (l.shape().isLeaf())
      continue;
    for (int64_t i = 0; i < l.size(); ++i) {
      std::vector<int64_t> coords;
      int64_t x = i;
      for (size_t m = 0; m < l.rank(); ++m) {
        int64_t extent = l.shape().elems()[m].product();
        coords.push_back(m + 1 == l.rank() ? x : x % extent);
        x /= extent;
      }
      ASSERT_EQ(l(coords), refEval(l, i)) << l.str() << " at " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Printing and parsing
//===----------------------------------------------------------------------===//

TEST(Parse, ExamplesAndErrors) {
  std::string error;
  std::optional<Layout> l = parseLayout(" ( 4 ,(2, 3)) :\t(1,(4,8)) ", &error);
  ASSERT_TRUE(l) << error;
  EXPECT_EQ(l->str(), "(4,(2,3)):(1,(4,8))");
  EXPECT_EQ(parseLayout("8:1")->str(), "8:1");
  EXPECT_EQ(parseLayout("():()")->size(), 1);

  auto parse = [](std::string text) {
    return [=](std::string *e) { return parseLayout(text, e); };
  };
  expectError(parse("(4,2):(1"),
              "expected ',' or ')' at position 8, found end of input");
  expectError(parse("4:"), "expected an integer or '(' at position 2");
  expectError(parse("(4,a):(1,2)"), "at position 3, found 'a'");
  expectError(parse("(4,2)(1,4)"), "expected ':' at position 5");
  expectError(parse("(4,2):(1,4)x"), "expected end of input at position 11");
  expectError(parse(""), "at position 0, found end of input");
  expectError(parse("99999999999999999999:1"),
              "integer that fits in int64 at position 0");
  expectError(parse(std::string(100, '(')), "nested tuples");
  expectError(parse("(4,2):(1,2,3)"), "not congruent");
  expectError(parse("(4,0):(1,4)"), "non-positive extent");
  expectError(parse("(4,2):(1,-4)"), "negative stride");
}

TEST(ParseProperty, RoundTrip) {
  Rng rng(2);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout l = randomLayout(rng);
    if (iter % 10 == 0) // large values
      l = Layout({3, {int64_t(1) << 20, 1}},
                 {int64_t(1) << 40, {uniform(rng, 0, 1 << 20), 7}});
    std::string error;
    std::optional<Layout> parsed = parseLayout(l.str(), &error);
    ASSERT_TRUE(parsed) << l.str() << ": " << error;
    EXPECT_EQ(*parsed, l) << l.str();
  }
}

//===----------------------------------------------------------------------===//
// flatten and coalesce
//===----------------------------------------------------------------------===//

TEST(Coalesce, Examples) {
  EXPECT_EQ(coalesce(Layout({2, {1, 6}}, {1, {6, 2}})).str(), "12:1");
  EXPECT_EQ(coalesce(Layout({2, 1, 4}, {1, 0, 2})).str(), "8:1");
  EXPECT_EQ(coalesce(Layout({2, 2}, {1, 1})).str(), "(2,2):(1,1)");
  EXPECT_EQ(coalesce(Layout({4, {2, 3}}, {0, {0, 0}})).str(), "24:0");
  EXPECT_EQ(coalesce(Layout({1, 1}, {3, 5})).str(), "1:0");
  EXPECT_EQ(coalesce(Layout({4, 3, 2}, {3, 1, 12})).str(), "(4,3,2):(3,1,12)");
  EXPECT_EQ(coalesce(Layout({4, 3, 2}, {1, 4, 12})).str(), "24:1");
  EXPECT_EQ(coalesce(Layout({4, 3, 2}, {1, 4, 24})).str(), "(12,2):(1,24)");
  EXPECT_EQ(flatten(Layout({{2, 2}, 3}, {{24, 2}, 8})).str(),
            "(2,2,3):(24,2,8)");
  EXPECT_EQ(flatten(Layout(8, 1)).str(), "8:1");
}

TEST(CoalesceProperty, SameFunctionFewestModes) {
  Rng rng(3);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout l = randomLayout(rng);
    Layout f = flatten(l);
    EXPECT_LE(f.shape().depth(), 1);
    EXPECT_EQ(f.size(), l.size());
    expectSameFunction(f, l, l.size());

    Layout c = coalesce(l);
    EXPECT_LE(c.shape().depth(), 1) << l.str();
    EXPECT_EQ(c.size(), l.size()) << l.str();
    expectSameFunction(c, l, l.size());
    // Minimality: no size-1 modes (unless all of it is 1:0), no neighbours
    // that merge, and a single mode is a leaf.
    std::vector<int64_t> s = c.shape().flatten(), d = c.stride().flatten();
    if (s.size() == 1 && s[0] == 1)
      EXPECT_EQ(c.str(), "1:0");
    else
      for (int64_t e : s)
        EXPECT_GT(e, 1) << c.str();
    for (size_t k = 0; k + 1 < s.size(); ++k)
      EXPECT_NE(d[k + 1], s[k] * d[k]) << c.str();
    EXPECT_EQ(c.shape().isLeaf(), s.size() == 1) << c.str();
  }
}

//===----------------------------------------------------------------------===//
// composition
//===----------------------------------------------------------------------===//

// Checks r against its definition: r(i) == a(b(i)) on b's domain, with a
// evaluated past its size where b reaches beyond it.
void expectComposition(const Layout &a, const Layout &b, const Layout &r) {
  ASSERT_EQ(r.size(), b.size()) << a.str() << " o " << b.str();
  EXPECT_TRUE(refines(r.shape(), b.shape()))
      << r.str() << " does not refine " << b.str();
  for (int64_t i = 0; i < b.size(); ++i)
    ASSERT_EQ(refEval(r, i), refEval(a, refEval(b, i)))
        << a.str() << " o " << b.str() << " = " << r.str() << " at " << i;
}

TEST(Composition, Examples) {
  struct Case {
    Layout a, b;
    const char *expected;
  } cases[] = {
      // The CuTe documentation's examples, derived by hand.
      {Layout({6, 2}, {8, 2}), Layout({4, 3}, {3, 1}), "((2,2),3):((24,2),8)"},
      {Layout(20, 2), Layout({5, 4}, {4, 1}), "(5,4):(8,2)"},
      {Layout({10, 2}, {16, 4}), Layout({5, 4}, {1, 5}),
       "(5,(2,2)):(16,(80,4))"},
      // Broadcast and size-1 modes of b.
      {Layout({4, 4}, {4, 1}), Layout({2, 3}, {0, 1}), "(2,3):(0,4)"},
      {Layout({4, 4}, {4, 1}), Layout({1, 4}, {7, 4}), "(1,4):(0,1)"},
      // b reaches past a.size(): a's last mode keeps counting ...
      {Layout(4, 1), Layout(8, 1), "8:1"},
      {Layout({4, 3}, {1, 10}), Layout(24, 1), "(4,6):(1,10)"},
      // ... including a trailing size-1 mode (CuTe would first drop it).
      {Layout({4, 1}, {1, 0}), Layout(8, 1), "(4,2):(1,0)"},
      // Only part of a mode is used, so its extent need not be divisible.
      {Layout({6, 2}, {1, 7}), Layout(2, 4), "2:4"},
      {Layout({6, 2}, {1, 7}), Layout(3, 2), "3:2"},
      // Past its size, a ends in an empty tuple, which absorbs the rest as 0.
      {Layout({4, {}}, {1, {}}), Layout(8, 1), "(4,2):(1,0)"},
      // Composing with the identity.
      {Layout({{2, 3}, 4}, {{5, 1}, 30}), Layout(24, 1), "(2,3,4):(5,1,30)"},
  };
  for (const Case &c : cases) {
    std::string error;
    std::optional<Layout> r = composition(c.a, c.b, &error);
    EXPECT_EQ(strOf(r, error), c.expected) << c.a.str() << " o " << c.b.str();
    if (r)
      expectComposition(c.a, c.b, *r);
  }
}

TEST(Composition, Errors) {
  auto compose = [](Layout a, Layout b) {
    return [=](std::string *e) { return composition(a, b, e); };
  };
  // a(0), a(2), a(4), a(6) = 0, 2, 4, 7: not affine.
  expectError(compose(Layout({6, 2}, {1, 7}), Layout(4, 2)),
              "4 remaining steps are not a multiple of the 3");
  // a(0), a(4), a(8) = 0, 4, 9: stride 4 does not divide 6.
  expectError(compose(Layout({6, 2}, {1, 7}), Layout(3, 4)),
              "does not divide a's mode 6:1");
  expectError(compose(Layout({4, 3}, {1, 10}), Layout(2, 5)),
              "neither a divisor nor a multiple of a's mode 4:1");
  // a(b(3)) = a(2) = 10, but the per-mode sum would be a(1) + a(1) = 2.
  expectError(compose(Layout({2, 2}, {1, 10}), Layout({2, 2}, {1, 1})),
              "overlaps another mode of b");
  expectError(compose(Layout({2, 3}, {1}), Layout(4, 1)), "invalid a");
  expectError(compose(Layout(4, 1), Layout(0, 1)), "invalid b");
  // The result (2,8):(1,2^61) has cosize 2 + 7 * 2^61, which does not fit.
  expectError(compose(Layout({2, 2}, {1, int64_t(1) << 61}), Layout(16, 1)),
              "not representable");
}

TEST(CompositionProperty, AdmissibleCasesSucceedAndAreExact) {
  Rng rng(4);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    // b picks whole runs of a refinement of a's coordinate digits, so every
    // divisibility condition holds; broadcast and size-1 modes are free.
    std::vector<Leaf> leaves =
        pickRuns(refine(a.shape().flatten(), rng), rng, 70);
    for (int64_t i = 0, n = uniform(rng, 0, 2); i < n; ++i)
      leaves.push_back(uniform(rng, 0, 1) ? Leaf{uniform(rng, 2, 4), 0}
                                          : Leaf{1, uniform(rng, 0, 9)});
    Layout b = assemble(leaves, rng);
    std::string error;
    std::optional<Layout> r = composition(a, b, &error);
    ASSERT_TRUE(r) << a.str() << " o " << b.str() << ": " << error;
    expectComposition(a, b, *r);
  }
}

TEST(CompositionProperty, ArbitraryCasesAreExactOrRejected) {
  Rng rng(5);
  int succeeded = 0, failed = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    Layout b = randomLayout(rng, 64);
    std::string error;
    std::optional<Layout> r = composition(a, b, &error);
    if (r) {
      ++succeeded;
      expectComposition(a, b, *r);
    } else {
      ++failed;
      EXPECT_FALSE(error.empty());
    }
  }
  // Both outcomes must be exercised for this test to mean anything.
  EXPECT_GT(succeeded, kIterations / 5);
  EXPECT_GT(failed, kIterations / 20);
}

//===----------------------------------------------------------------------===//
// complement
//===----------------------------------------------------------------------===//

TEST(Complement, Examples) {
  struct Case {
    Layout a;
    int64_t cosizeHi;
    const char *expected;
  } cases[] = {
      {Layout({2, 2}, {1, 6}), 24, "(3,2):(2,12)"},
      {Layout(4, 2), 16, "(2,2):(1,8)"},
      {Layout({2, 2}, {4, 1}), 24, "(2,3):(2,8)"},
      {Layout(4, 1), 24, "6:4"},
      {Layout(4, 1), 4, "1:0"},
      {Layout(4, 1), 6, "2:4"}, // rounds up to whole copies
      {Layout(4, 2), 4, "2:1"}, // cosizeHi below the span still fills gaps
      {Layout({4, 2}, {0, 1}), 8, "4:2"}, // broadcast modes are ignored
      {Layout(1, 0), 5, "5:1"},
      {Layout({3, {2, 1}}, {4, {1, 9}}), 24, "(2,2):(2,12)"},
  };
  for (const Case &c : cases) {
    std::string error;
    std::optional<Layout> r = complement(c.a, c.cosizeHi, &error);
    EXPECT_EQ(strOf(r, error), c.expected)
        << "complement(" << c.a.str() << ", " << c.cosizeHi << ")";
  }
  auto comp = [](Layout a, int64_t m) {
    return [=](std::string *e) { return complement(a, m, e); };
  };
  expectError(comp(Layout({2, 2}, {1, 1}), 8),
              "stride 1 is not a multiple of 2");
  expectError(comp(Layout({3, 2}, {2, 3}), 8), // injective, but interleaved
              "stride 3 is not a multiple of 6");
  expectError(comp(Layout(4, 1), 0), "cosizeHi must be positive");
  expectError(comp(Layout({2}, {1, 2}), 4), "invalid a");
}

// The layout of a's modes without broadcast ones, which complement ignores.
Layout withoutBroadcast(const Layout &a) {
  std::vector<IntTuple> s, d;
  std::vector<int64_t> shapes = a.shape().flatten(),
                       strides = a.stride().flatten();
  for (size_t i = 0; i < shapes.size(); ++i)
    if (!(shapes[i] > 1 && strides[i] == 0)) {
      s.emplace_back(shapes[i]);
      d.emplace_back(strides[i]);
    }
  return Layout(IntTuple::tuple(s), IntTuple::tuple(d));
}

// The documented precondition of complement: ignoring broadcast and size-1
// modes and sorting by stride, each stride is a multiple of the previous
// mode's shape * stride.
bool hasNestedStrides(const Layout &a) {
  std::vector<std::pair<int64_t, int64_t>> modes; // (stride, shape)
  std::vector<int64_t> s = a.shape().flatten(), d = a.stride().flatten();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] > 1 && d[i] > 0)
      modes.push_back({d[i], s[i]});
  std::sort(modes.begin(), modes.end());
  for (size_t i = 1; i < modes.size(); ++i)
    if (modes[i].first % (modes[i - 1].first * modes[i - 1].second) != 0)
      return false;
  return true;
}

// Checks r = complement(a, m): r is sorted and coalesced, and concat{a', r}
// (a' = a without broadcast modes) is a bijection onto [0, K) where K is the
// smallest multiple of E >= m, E being the largest shape*stride of a's
// non-trivial modes (1 if there are none).
void expectComplement(const Layout &a, int64_t m, const Layout &r) {
  std::string ctx =
      "complement(" + a.str() + ", " + std::to_string(m) + ") = " + r.str();
  EXPECT_EQ(coalesce(r), r) << ctx;
  std::vector<int64_t> d = r.stride().flatten();
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end())) << ctx;

  Layout filtered = withoutBroadcast(a);
  Layout both = concat({filtered, r});
  EXPECT_TRUE(refBijective(both)) << ctx;
  int64_t extent = 1;
  std::vector<int64_t> as = a.shape().flatten(), ad = a.stride().flatten();
  for (size_t i = 0; i < as.size(); ++i)
    if (as[i] > 1)
      extent = std::max(extent, as[i] * ad[i]);
  EXPECT_EQ(both.size(), (m + extent - 1) / extent * extent) << ctx;
}

TEST(ComplementProperty, AlignedLayoutsSucceed) {
  Rng rng(6);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomAlignedInjective(rng);
    ASSERT_TRUE(refInjective(a)) << a.str();
    int64_t m = uniform(rng, 0, 1) ? a.cosize() * uniform(rng, 1, 4)
                                   : uniform(rng, 1, 2 * a.cosize() + 5);
    std::string error;
    std::optional<Layout> r = complement(a, m, &error);
    ASSERT_TRUE(r) << "complement(" << a.str() << ", " << m << "): " << error;
    expectComplement(a, m, *r);
  }
}

TEST(ComplementProperty, ArbitraryLayoutsAreExactOrRejected) {
  Rng rng(7);
  int succeeded = 0, failed = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    int64_t m = uniform(rng, 1, 2 * a.cosize() + 5);
    std::string error;
    std::optional<Layout> r = complement(a, m, &error);
    if (r) {
      ++succeeded;
      expectComplement(a, m, *r);
    } else {
      ++failed;
      EXPECT_FALSE(error.empty());
    }
    EXPECT_EQ(r.has_value(), hasNestedStrides(a)) << a.str();
  }
  EXPECT_GT(succeeded, kIterations / 5);
  EXPECT_GT(failed, kIterations / 20);
}

//===----------------------------------------------------------------------===//
// logicalDivide and logicalProduct
//===----------------------------------------------------------------------===//

TEST(LogicalDivide, Examples) {
  struct Case {
    Layout a, tiler;
    const char *expected;
  } cases[] = {
      {Layout(16, 1), Layout(4, 2), "(4,(2,2)):(2,(1,8))"},
      {Layout::rowMajor({4, 4}), Layout(4, 2), "((2,2),(2,2)):((8,1),(4,2))"},
      {Layout({4, 2, 3}, {2, 1, 8}), Layout(4, 2),
       "((2,2),(2,3)):((4,1),(2,8))"},
      // A tiler that does not divide a: the last tile runs past a.size().
      {Layout(6, 1), Layout(4, 1), "(4,2):(1,4)"},
  };
  for (const Case &c : cases) {
    std::string error;
    std::optional<Layout> r = logicalDivide(c.a, c.tiler, &error);
    EXPECT_EQ(strOf(r, error), c.expected)
        << c.a.str() << " / " << c.tiler.str();
  }
  auto divide = [](Layout a, Layout t) {
    return [=](std::string *e) { return logicalDivide(a, t, e); };
  };
  expectError(divide(Layout(16, 1), Layout({2, 2}, {1, 1})),
              "logicalDivide: complement");
  // complement(2:1, 6) = 3:2, and steps of 2 do not divide a's mode 3.
  expectError(divide(Layout({3, 2}, {1, 10}), Layout(2, 1)),
              "logicalDivide: composition");
  expectError(divide(Layout(16, 1), Layout(4, -1)), "invalid tiler");
}

// Checks r = logicalDivide(a, tiler) against its definition.
void expectDivide(const Layout &a, const Layout &tiler, const Layout &r) {
  std::optional<Layout> rest = complement(tiler, a.size());
  ASSERT_TRUE(rest);
  Layout b = concat({tiler, *rest});
  ASSERT_EQ(r.rank(), 2u);
  EXPECT_EQ(r.mode(0).size(), tiler.size());
  expectComposition(a, b, r);
}

TEST(LogicalDivideProperty, DividingTilersPermuteA) {
  Rng rng(8);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    // A tiler made of a's own coordinate digits divides a exactly.
    Layout tiler =
        assemble(pickRuns(refine(a.shape().flatten(), rng), rng, 60), rng);
    std::string error;
    std::optional<Layout> r = logicalDivide(a, tiler, &error);
    ASSERT_TRUE(r) << a.str() << " / " << tiler.str() << ": " << error;
    expectDivide(a, tiler, *r);
    // Dividing only regroups a's elements.
    std::vector<int64_t> ra = refImage(a), rr = refImage(*r);
    std::sort(ra.begin(), ra.end());
    std::sort(rr.begin(), rr.end());
    EXPECT_EQ(rr, ra) << a.str() << " / " << tiler.str();
  }
}

TEST(LogicalDivideProperty, ArbitraryTilersAreExactOrRejected) {
  Rng rng(9);
  int succeeded = 0, failed = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    Layout tiler = randomLayout(rng, 24);
    std::string error;
    std::optional<Layout> r = logicalDivide(a, tiler, &error);
    if (r) {
      ++succeeded;
      expectDivide(a, tiler, *r);
    } else {
      ++failed;
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(succeeded, kIterations / 10);
  EXPECT_GT(failed, kIterations / 20);
}

TEST(LogicalProduct, Examples) {
  struct Case {
    Layout a, tiler;
    const char *expected;
  } cases[] = {
      {Layout({2, 2}, {4, 1}), Layout(6, 1), "((2,2),(2,3)):((4,1),(2,8))"},
      {Layout({2, 2}, {4, 1}), Layout({4, 2}, {2, 1}),
       "((2,2),(4,2)):((4,1),(8,2))"},
      {Layout(4, 1), Layout(3, 1), "(4,3):(1,4)"},
      {Layout(4, 1), Layout(3, 0), "(4,3):(1,0)"},
  };
  for (const Case &c : cases) {
    std::string error;
    std::optional<Layout> r = logicalProduct(c.a, c.tiler, &error);
    EXPECT_EQ(strOf(r, error), c.expected)
        << c.a.str() << " * " << c.tiler.str();
  }
  auto product = [](Layout a, Layout t) {
    return [=](std::string *e) { return logicalProduct(a, t, e); };
  };
  expectError(product(Layout({2, 2}, {1, 1}), Layout(2, 1)),
              "logicalProduct: complement");
  expectError(product(Layout(int64_t(1) << 40, 1), Layout(int64_t(1) << 30, 1)),
              "overflows int64");
}

// Checks r = logicalProduct(a, tiler): mode 0 is a, mode 1 is
// complement(a, a.size() * tiler.cosize()) o tiler; with a and tiler
// injective, the copies of a do not overlap.
void expectProduct(const Layout &a, const Layout &tiler, const Layout &r) {
  std::string ctx = a.str() + " * " + tiler.str() + " = " + r.str();
  ASSERT_EQ(r.rank(), 2u) << ctx;
  EXPECT_EQ(r.mode(0), a) << ctx;
  ASSERT_EQ(r.size(), a.size() * tiler.size()) << ctx;
  std::optional<Layout> rest = complement(a, a.size() * tiler.cosize());
  ASSERT_TRUE(rest) << ctx;
  for (int64_t j = 0; j < tiler.size(); ++j)
    for (int64_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(refEval(r, i + a.size() * j),
                refEval(a, i) + refEval(*rest, refEval(tiler, j)))
          << ctx << " at " << i << "," << j;
  if (refInjective(a) && refInjective(tiler)) {
    EXPECT_TRUE(refInjective(r)) << ctx;
  }
}

TEST(LogicalProductProperty, MatchesDefinition) {
  Rng rng(10);
  int succeeded = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout tiler = randomLayout(rng, 24);
    // A compact a has a single-mode complement, so the product must exist.
    Layout compact = Layout::columnMajor(randomShape(rng, 64));
    std::string error;
    std::optional<Layout> r = logicalProduct(compact, tiler, &error);
    ASSERT_TRUE(r) << compact.str() << " * " << tiler.str() << ": " << error;
    expectProduct(compact, tiler, *r);

    Layout a = randomAlignedInjective(rng);
    r = logicalProduct(a, tiler, &error);
    if (r) {
      ++succeeded;
      expectProduct(a, tiler, *r);
    } else {
      EXPECT_FALSE(error.empty());
    }
  }
  EXPECT_GT(succeeded, kIterations / 5);
}

//===----------------------------------------------------------------------===//
// Inverses and injectivity
//===----------------------------------------------------------------------===//

TEST(Inverse, Examples) {
  auto right = [](Layout a) {
    std::string error;
    return strOf(rightInverse(a, &error), error);
  };
  auto left = [](Layout a) {
    std::string error;
    return strOf(leftInverse(a, &error), error);
  };
  EXPECT_EQ(right(Layout({4, 2}, {2, 1})), "(2,4):(4,1)");
  EXPECT_EQ(right(Layout({3, 2}, {2, 1})), "(2,3):(3,1)");
  EXPECT_EQ(right(Layout({2, 2}, {1, 3})), "2:1"); // 2 is not in the image
  EXPECT_EQ(right(Layout(4, 2)), "1:0");
  EXPECT_EQ(right(Layout::rowMajor({2, {3, 4}})), "(4,3,2):(6,2,1)");
  EXPECT_EQ(right(Layout({4, 2}, {1, 0})), "4:1");

  EXPECT_EQ(left(Layout(4, 2)), "(2,4):(4,1)");
  EXPECT_EQ(left(Layout({2, 2}, {1, 6})), "(2,3,2):(1,4,2)");
  EXPECT_EQ(left(Layout({4, 2}, {2, 1})), "(2,4):(4,1)");
  EXPECT_EQ(left(Layout({2, 2}, {1, 5})), "(5,2):(1,2)"); // no complement
  EXPECT_EQ(left(Layout({4, 1}, {1, 7})), "4:1");
  EXPECT_EQ(left(Layout(1, 0)), "1:0");

  auto leftFn = [](Layout a) {
    return [=](std::string *e) { return leftInverse(a, e); };
  };
  expectError(leftFn(Layout({2, 2}, {1, 1})), "is not injective");
  expectError(leftFn(Layout({4, 2}, {1, 0})), "is not injective");
  expectError(leftFn(Layout({4, 2}, {1, 2})), "is not injective");
  expectError(leftFn(Layout({3, 2}, {2, 3})),
              "stride 3 is not a multiple of stride 2");
  expectError([](std::string *e) { return rightInverse(Layout(0, 1), e); },
              "invalid a");
}

TEST(InverseProperty, RightInverse) {
  Rng rng(11);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    std::string error;
    std::optional<Layout> r = rightInverse(a, &error);
    ASSERT_TRUE(r) << a.str() << ": " << error;
    std::string ctx = a.str() + " -> " + r->str();
    for (int64_t i = 0; i < r->size(); ++i) {
      int64_t coord = refEval(*r, i);
      ASSERT_LT(coord, a.size()) << ctx;
      ASSERT_EQ(refEval(a, coord), i) << ctx << " at " << i;
    }
    std::vector<int64_t> image = refImage(a);
    std::set<int64_t> inImage(image.begin(), image.end());
    // For injective a the size is maximal: the next index is not reachable.
    if (refInjective(a)) {
      EXPECT_EQ(inImage.count(r->size()), 0u) << ctx;
    }
    if (refBijective(a)) {
      EXPECT_EQ(r->size(), a.size()) << ctx;
      for (int64_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(refEval(*r, refEval(a, i)), i) << ctx;
    }
  }
}

void expectLeftInverse(const Layout &a, const Layout &l) {
  std::string ctx = a.str() + " -> " + l.str();
  EXPECT_GE(l.size(), a.cosize()) << ctx;
  for (int64_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(refEval(l, refEval(a, i)), i) << ctx << " at " << i;
}

TEST(InverseProperty, LeftInverseOfAlignedLayouts) {
  Rng rng(12);
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomAlignedInjective(rng);
    std::string error;
    std::optional<Layout> l = leftInverse(a, &error);
    ASSERT_TRUE(l) << a.str() << ": " << error;
    expectLeftInverse(a, *l);
    // Where CuTe's construction applies, the result is the same function.
    if (std::optional<Layout> rest = complement(a, a.cosize())) {
      std::optional<Layout> cute = rightInverse(concat({a, *rest}));
      ASSERT_TRUE(cute);
      EXPECT_EQ(l->size(), cute->size()) << a.str();
      expectSameFunction(*l, *cute, l->size());
    }
  }
}

TEST(InverseProperty, LeftInverseOfArbitraryLayouts) {
  Rng rng(13);
  int succeeded = 0, failed = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout a = randomLayout(rng);
    std::string error;
    std::optional<Layout> l = leftInverse(a, &error);
    if (l) {
      ++succeeded;
      EXPECT_TRUE(refInjective(a)) << a.str();
      expectLeftInverse(a, *l);
    } else {
      ++failed;
      EXPECT_FALSE(error.empty());
      if (!refInjective(a)) {
        EXPECT_NE(error.find("is not injective"), std::string::npos) << error;
      }
    }
  }
  EXPECT_GT(succeeded, kIterations / 5);
  EXPECT_GT(failed, kIterations / 20);
}

TEST(Injectivity, Examples) {
  // Irregular strides (neither nested nor dividing) are enumerated.
  EXPECT_TRUE(isInjective(Layout({3, 2}, {2, 3})));
  EXPECT_TRUE(isInjective(Layout({3, 3}, {2, 3})));
  EXPECT_FALSE(isInjective(Layout({4, 4}, {3, 2}))); // (2,0) and (0,3) -> 6
  EXPECT_FALSE(isInjective(Layout({5, 5}, {2, 3}))); // cosize 21 < size 25
  EXPECT_FALSE(isInjective(Layout({2, 2}, {1, 1})));
  EXPECT_FALSE(isInjective(Layout({4, 2}, {1, 2})));
  EXPECT_FALSE(isInjective(Layout({4, 2}, {1, 0})));
  EXPECT_TRUE(isInjective(Layout({4, 1}, {1, 0})));
  EXPECT_TRUE(isInjective(Layout(4, 2)));
  EXPECT_FALSE(isBijective(Layout(4, 2)));
  EXPECT_TRUE(isBijective(Layout({4, 2}, {2, 1})));
  EXPECT_FALSE(isInjective(Layout({2, 3}, {1}))); // invalid
  EXPECT_FALSE(isBijective(Layout(0, 1)));
}

TEST(InjectivityProperty, MatchesEnumeration) {
  Rng rng(14);
  int injective = 0, bijective = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    Layout l = randomLayout(rng);
    EXPECT_EQ(isInjective(l), refInjective(l)) << l.str();
    EXPECT_EQ(isBijective(l), refBijective(l)) << l.str();
    injective += refInjective(l);
    bijective += refBijective(l);
  }
  EXPECT_GT(injective, kIterations / 5);
  EXPECT_GT(bijective, kIterations / 10);
}

//===----------------------------------------------------------------------===//
// Out-of-contract layouts from the unchecked constructor
//===----------------------------------------------------------------------===//

TEST(InvalidLayouts, AreSafeAndRejected) {
  const Layout bad[] = {
      Layout({2, 3}, {1}),       Layout({2, {3, 4}}, {1, 2}),
      Layout(IntTuple{4, 2}, 1), Layout(0, 1),
      Layout({0, 4}, {1, 1}),    Layout({-2, 3}, {1, 2}),
      Layout({4, 2}, {1, -4}),   Layout({int64_t(1) << 62, 8}, {1, 1}),
      Layout(1, {2, 3}),
  };
  for (const Layout &l : bad) {
    // Evaluation and the total functions must not crash; values are moot.
    for (int64_t i = -3; i < 10; ++i)
      (void)l(i);
    (void)l(std::vector<int64_t>{1, 2, 3});
    (void)l.cosize();
    (void)l.mode(1);
    (void)coalesce(l);
    (void)flatten(l);
    EXPECT_FALSE(Layout::make(l.shape(), l.stride())) << l.str();
    EXPECT_FALSE(isInjective(l)) << l.str();
    std::string error;
    EXPECT_FALSE(composition(l, Layout(4, 1), &error)) << l.str();
    EXPECT_NE(error.find("invalid a"), std::string::npos) << error;
    EXPECT_FALSE(composition(Layout(4, 1), l, &error)) << l.str();
    EXPECT_NE(error.find("invalid b"), std::string::npos) << error;
    EXPECT_FALSE(complement(l, 8, &error));
    EXPECT_FALSE(logicalDivide(l, Layout(2, 1), &error));
    EXPECT_FALSE(logicalProduct(Layout(2, 1), l, &error));
    EXPECT_FALSE(rightInverse(l, &error));
    EXPECT_FALSE(leftInverse(l, &error));
    EXPECT_FALSE(error.empty());
  }
}

} // namespace
