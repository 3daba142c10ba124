//===- DiagnosticsTest.cpp - misuse is reported at the author's line ------===//

#include "wavetile/Compiler.h"
#include "wavetile/dsl/DSL.h"

#include <gtest/gtest.h>

using namespace wavetile;
using namespace wavetile::dsl;

namespace {

/// Builds one kernel with `body`; returns the diagnostics (empty when it succeeded).
std::string diagnosticsOf(const std::function<void(KernelBuilder &)> &body) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("k");
    body(k);
  }
  std::string errors;
  auto module = mb.finish(&errors);
  return module ? std::string() : errors;
}

/// "DiagnosticsTest.cpp:<line>:" for a line of this file.
std::string here(int line) { return "DiagnosticsTest.cpp:" + std::to_string(line) + ":"; }

TEST(DslDiagnostics, MismatchedDTypesPointAtTheExpression) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Pointer x = k.pointer("x", DType::f32), y = k.pointer("y", DType::bf16);
    Value offs = arange(0, 16);
    Value a = load(x, offs), b = load(y, offs);
    line = __LINE__ + 1;
    Value sum = a + b;
    (void)sum;
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("different dtypes f32 and bf16"), std::string::npos) << errors;
}

TEST(DslDiagnostics, SpecializationFactsApplyToArgumentsOnly) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Pointer x = k.pointer("x", DType::f32);
    Value n = k.scalar("n", DType::i32), f = k.scalar("f", DType::f32);
    k.assumeAligned(x, 16);
    k.assumeDivisible(n, 16);
    line = __LINE__ + 1;
    k.assumeDivisible(n * 2, 16);
    k.assumeAligned(x, 12);
    k.assumeDivisible(f, 4);
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("error: assumeDivisible applies to the kernel's own arguments"), std::string::npos) << errors;
  EXPECT_NE(errors.find("assumeAligned needs a power of two, got 12"), std::string::npos) << errors;
  EXPECT_NE(errors.find("assumeDivisible applies to integer arguments"), std::string::npos) << errors;
}

// An implicit dimension has no size argument: reading its size, or deriving a contiguous
// stride from it, is an error at the author's line.
TEST(DslDiagnostics, ImplicitDimensionsHaveNoSize) {
  int sizeLine = 0, strideLine = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Tensor rows = k.tensor("rows", DType::f32, {Dim::implicit(), Dim::fixed(16)});
    sizeLine = __LINE__ + 1;
    Value n = rows.size(0) + 1;
    strideLine = __LINE__ + 1;
    Tensor bad = k.tensor("bad", DType::f32, {Dim::dynamic(), Dim::implicit()});
    (void)n, (void)bad;
  });
  EXPECT_NE(errors.find(here(sizeLine)), std::string::npos) << errors;
  EXPECT_NE(errors.find("dimension 0 of tensor 'rows' is implicit (Dim::implicit): the kernel has no argument for its "
                        "size"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find(here(strideLine)), std::string::npos) << errors;
  EXPECT_NE(errors.find("tensor 'bad' is contiguous, so only its first dimension may be implicit"), std::string::npos)
      << errors;
}

// An implicit dimension takes no argument: a contiguous tensor with one first is a pointer
// alone. Tensor loads and stores index along it unchecked.
TEST(DslDiagnostics, ImplicitDimensionsTakeNoArguments) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("copy_rows");
    Tensor in = k.tensor("in", DType::f32, {Dim::implicit(), Dim::fixed(16)});
    Tensor out = k.tensor("out", DType::f32, {Dim::implicit(), Dim::dynamic(), Dim::fixed(16)}, false);
    store(out, {programId(0), 0, arange(0, 16)}, load(in, {programId(0), arange(0, 16)}));
  }
  std::string errors;
  auto module = mb.finish(&errors);
  ASSERT_TRUE(module) << errors;
  std::vector<std::string> names;
  const std::vector<KernelSignature> kernels = module->kernels();
  for (const KernelParam &param : kernels.at(0).params)
    names.push_back(param.name);
  EXPECT_EQ(names, (std::vector<std::string>{"in", "out", "out_size1", "out_stride1", "out_stride0"}));
}

TEST(DslDiagnostics, BitcastKeepsTheWidth) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Value f = k.scalar("f", DType::f32);
    f.bitcast(DType::i32); // fine
    line = __LINE__ + 1;
    f.bitcast(DType::i16);
    arange(0, 8).to(DType::f8E4M3FN).bitcast(DType::i8);
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("error: bitcast needs dtypes of one width, got f32 and i16"), std::string::npos) << errors;
  EXPECT_NE(errors.find("bitcast of fp8/fp6/fp4 dtypes is not supported"), std::string::npos) << errors;
}

TEST(DslDiagnostics, ShapesThatDoNotBroadcast) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    line = __LINE__ + 1;
    Value bad = arange(0, 16) + arange(0, 8);
    (void)bad;
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("do not broadcast"), std::string::npos) << errors;
}

TEST(DslDiagnostics, DotNeedsAgreeingK) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    Value a = zeros({16, 8}, DType::bf16), b = zeros({4, 16}, DType::bf16), c = zeros({16, 16}, DType::f32);
    line = __LINE__ + 1;
    Value d = dot(a, b, c);
    (void)d;
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("K dimensions must agree"), std::string::npos) << errors;
}

TEST(DslDiagnostics, DotOfWrongRank) {
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    Value d = dot(zeros({16}, DType::bf16), zeros({16, 16}, DType::bf16), zeros({16, 16}, DType::f32));
    (void)d;
  });
  EXPECT_NE(errors.find("must be a 2-D tile"), std::string::npos) << errors;
}

TEST(DslDiagnostics, StoreOfTheWrongDType) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Pointer out = k.pointer("out", DType::bf16);
    line = __LINE__ + 1;
    store(out, arange(0, 8), zeros({8}, DType::f32));
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("cannot store f32 values through a pointer to bf16"), std::string::npos) << errors;
}

TEST(DslDiagnostics, LayoutThatDoesNotCoverTheTile) {
  int line = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    // 3 elements per thread * 64 threads does not divide a 100-element tile, nor does it divide 192.
    Layout layout = Layout::blocked({3}, {64}, {1}, {0});
    line = __LINE__ + 1;
    Value v = withLayout(zeros({100}, DType::f32), layout);
    (void)v;
  });
  EXPECT_NE(errors.find(here(line)), std::string::npos) << errors;
  EXPECT_NE(errors.find("neither divides nor is divided"), std::string::npos) << errors;
}

TEST(DslDiagnostics, LoopBodyMustKeepCarriedTypes) {
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    forRange(0, 4, 1, {zeros({8}, DType::f32)},
             [](Value, const std::vector<Value> &) { return std::vector<Value>{zeros({8}, DType::i32)}; });
  });
  EXPECT_NE(errors.find("changes type"), std::string::npos) << errors;
}

TEST(DslDiagnostics, EveryErrorOfOneKernelIsReported) {
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Value a = arange(0, 4) + arange(0, 5);
    Value b = programId(3);
    (void)a;
    (void)b;
  });
  EXPECT_NE(errors.find("do not broadcast"), std::string::npos) << errors;
  EXPECT_NE(errors.find("program axis must be 0, 1 or 2"), std::string::npos) << errors;
}

TEST(DslDiagnostics, AValueAnErrorLeftInvalidCanStillBeInspected) {
  // Kernel code that looks at a failed value's shape or dtype (to size what follows) gets an
  // empty scalar, and the error is reported, not a crash.
  std::string errors = diagnosticsOf([&](KernelBuilder &) {
    Value bad = arange(0, 4) + arange(0, 5);
    EXPECT_FALSE(bad.valid());
    EXPECT_TRUE(bad.shape().empty());
    EXPECT_FALSE(bad.isTile());
    EXPECT_EQ(bad.dtype(), DType::i1);
    Value next = bad.reshape({2, 2}) * 2;
    EXPECT_FALSE(next.valid());
  });
  EXPECT_NE(errors.find("do not broadcast"), std::string::npos) << errors;
}

TEST(DslDiagnostics, SumOfProductsReportsAtTheCall) {
  int products = 0, axis = 0;
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Value a = load(k.pointer("x", DType::f32), arange(0, 16)), b = load(k.pointer("y", DType::bf16), arange(0, 16));
    products = __LINE__ + 1;
    EXPECT_FALSE(sumOfProducts(a, b, 0).valid());
    axis = __LINE__ + 1;
    EXPECT_FALSE(sumOfProducts(a, a, 1).valid());
  });
  EXPECT_NE(errors.find(here(products)), std::string::npos) << errors;
  EXPECT_NE(errors.find("sumOfProducts operands have different dtypes f32 and bf16"), std::string::npos) << errors;
  EXPECT_NE(errors.find(here(axis)), std::string::npos) << errors;
  EXPECT_NE(errors.find("axis 1 out of range"), std::string::npos) << errors;
}

TEST(DslDiagnostics, ValidKernelHasNoDiagnostics) {
  std::string errors = diagnosticsOf([&](KernelBuilder &k) {
    Pointer x = k.pointer("x", DType::f32);
    Value offs = arange(0, 64);
    store(x, offs, load(x, offs) * 2.0);
  });
  EXPECT_EQ(errors, "");
}

TEST(HostLaunch, RejectsWrongArguments) {
  ModuleBuilder mb;
  {
    auto k = mb.kernel("scale");
    Pointer x = k.pointer("x", DType::f32);
    Value n = k.scalar("n", DType::i32);
    Value offs = arange(0, 64);
    store(x, offs, load(x, offs, offs < n) * 2.0, offs < n);
  }
  std::string error;
  auto module = mb.finish(&error);
  ASSERT_TRUE(module) << error;
  auto exe = HostExecutable::compile(*module, &error);
  ASSERT_TRUE(exe) << error;
  float data[64] = {};
  EXPECT_FALSE(exe->launch("scale", {1, 1, 1}, {KernelArg::ptr(data, "f32")}, &error));
  EXPECT_NE(error.find("takes 2 arguments, got 1"), std::string::npos) << error;
  EXPECT_FALSE(exe->launch("scale", {1, 1, 1}, {KernelArg::ptr(data, "f32"), KernelArg::fromF32(1)}, &error));
  EXPECT_NE(error.find("('n') of 'scale' must be i32, got f32"), std::string::npos) << error;
  EXPECT_FALSE(exe->launch("scale", {1, 1, 1}, {KernelArg::ptr(data, "bf16"), KernelArg::fromI32(64)}, &error));
  EXPECT_NE(error.find("points to f32, got a buffer of bf16"), std::string::npos) << error;
  EXPECT_FALSE(exe->launch("nope", {1, 1, 1}, {}, &error));
  EXPECT_NE(error.find("no kernel named 'nope'"), std::string::npos) << error;
  EXPECT_FALSE(exe->launch("scale", {0, 1, 1}, {KernelArg::ptr(data, "f32"), KernelArg::fromI32(64)}, &error));
  EXPECT_NE(error.find("grid dimension x must be in [1, 2^31), got 0"), std::string::npos) << error;
  EXPECT_FALSE(exe->launch("scale", {1, 65536, 1}, {KernelArg::ptr(data, "f32"), KernelArg::fromI32(64)}, &error));
  EXPECT_NE(error.find("grid dimension y must be in [1, 65535], got 65536"), std::string::npos) << error;
  for (int i = 0; i < 64; ++i)
    data[i] = float(i);
  ASSERT_TRUE(exe->launch("scale", {1, 1, 1}, {KernelArg::ptr(data, "f32"), KernelArg::fromI32(40)}, &error)) << error;
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(data[i], i < 40 ? 2.0f * i : float(i)) << i;
}

} // namespace
