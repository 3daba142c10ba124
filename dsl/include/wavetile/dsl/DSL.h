//===- DSL.h - the C++ DSL for tile kernels ---------------------*- C++ -*-===//
//
// Kernel authors write block-level programs against this header:
//
//   wavetile::dsl::ModuleBuilder mb;
//   {
//     auto k = mb.kernel("vector_add");
//     Pointer x = k.pointer("x", DType::f32), out = k.pointer("out", DType::f32);
//     Value n = k.scalar("n", DType::i32);
//     Value offs = programId(0) * 1024 + arange(0, 1024);
//     store(out, offs, load(x, offs, offs < n) * 2.0, offs < n);
//   }
//   std::unique_ptr<wavetile::Module> module = mb.finish(&errors);
//
// Every operation records the caller's file and line, so diagnostics point at the kernel
// source. Misuse (mismatched shapes or dtypes, a scalar where a tile is needed, ...) is
// reported there; building continues so one pass reports every error, and finish() fails.
// Plain C++: no MLIR headers.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_DSL_DSL_H
#define WAVETILE_DSL_DSL_H

#include "wavetile/Compiler.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <variant>
#include <vector>

namespace wavetile::dsl {

enum class DType {
  i1, i8, i16, i32, i64,
  f16, bf16, f32, f64,
  f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f6E2M3FN, f6E3M2FN, f4E2M1FN, f8E8M0FNU,
};
/// The MLIR spelling ("f32", "bf16", "f8E4M3FN", ...).
const char *dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType dtype);
int bitWidth(DType dtype);

using Shape = std::vector<int64_t>;
using SourceLoc = std::source_location;

/// A scalar or a tile inside the kernel being built. Cheap to copy.
class Value {
public:
  Value() = default;
  bool valid() const { return handle != nullptr; }
  bool isTile() const;
  Shape shape() const; // empty for scalars
  DType dtype() const;

  /// Conversion: int<->float, float widths, and narrowing to fp8/fp6/fp4 formats
  /// (round to nearest even; `saturate` clamps out-of-range values to the largest finite).
  Value to(DType dtype, bool saturate = false, SourceLoc loc = SourceLoc::current()) const;
  /// The same bits read as `dtype` (of the same width): f32 <-> i32, bf16/f16 <-> i16, ...
  Value bitcast(DType dtype, SourceLoc loc = SourceLoc::current()) const;
  /// Inserts a size-1 dimension at `axis`.
  Value expand(int axis, SourceLoc loc = SourceLoc::current()) const;
  Value broadcastTo(const Shape &shape, SourceLoc loc = SourceLoc::current()) const;
  Value reshape(const Shape &shape, SourceLoc loc = SourceLoc::current()) const;
  /// Permutes dimensions; the default reverses them (transpose for 2-D).
  Value trans(std::vector<int> order = {}, SourceLoc loc = SourceLoc::current()) const;
  Value sum(int axis, SourceLoc loc = SourceLoc::current()) const;
  Value max(int axis, SourceLoc loc = SourceLoc::current()) const;
  Value min(int axis, SourceLoc loc = SourceLoc::current()) const;
  Value cumsum(int axis, SourceLoc loc = SourceLoc::current()) const;

  void *handle = nullptr; // the underlying IR value
};

/// A global-memory pointer argument with its element type.
class Pointer {
public:
  DType elementType() const { return element; }
  void *handle = nullptr;
  DType element = DType::f32;
};

/// A bounded view: out-of-range loads read 0, out-of-range stores are dropped.
class Buffer {
public:
  void *handle = nullptr;
  DType element = DType::f32;
};

/// A shared-memory (LDS) buffer.
class Shared {
public:
  Shape shape() const;
  DType elementType() const { return element; }
  void *handle = nullptr;
  DType element = DType::f32;
};

/// An operand of an operator: a value or a C++ literal (which takes the other side's dtype),
/// with the location of the expression it appears in.
struct Operand {
  Operand(Value v, SourceLoc loc = SourceLoc::current()) : value(v), loc(loc) {}
  Operand(int v, SourceLoc loc = SourceLoc::current()) : value(int64_t(v)), loc(loc) {}
  Operand(int64_t v, SourceLoc loc = SourceLoc::current()) : value(v), loc(loc) {}
  Operand(double v, SourceLoc loc = SourceLoc::current()) : value(v), loc(loc) {}
  Operand(float v, SourceLoc loc = SourceLoc::current()) : value(double(v)), loc(loc) {}
  std::variant<Value, int64_t, double> value;
  SourceLoc loc;
};

Value operator+(Operand a, Operand b);
Value operator-(Operand a, Operand b);
Value operator*(Operand a, Operand b);
Value operator/(Operand a, Operand b); // integers divide toward zero, as in C++
Value operator%(Operand a, Operand b);
Value operator-(Operand a);
Value operator<(Operand a, Operand b);
Value operator<=(Operand a, Operand b);
Value operator>(Operand a, Operand b);
Value operator>=(Operand a, Operand b);
Value operator==(Operand a, Operand b);
Value operator!=(Operand a, Operand b);
Value operator&(Operand a, Operand b);
Value operator|(Operand a, Operand b);
Value operator^(Operand a, Operand b);
Value operator<<(Operand a, Operand b);
Value operator>>(Operand a, Operand b); // arithmetic shift for signed integers

Value maximum(Operand a, Operand b); // NaN-propagating for floats
Value minimum(Operand a, Operand b);
/// The smaller of two floats ignoring a NaN operand (IEEE 754-2008 minNum: one instruction on
/// GPUs, and a bound that holds for NaN too; which of +0 and -0 is unspecified); integers as
/// minimum.
Value minimumNumber(Operand a, Operand b);
Value where(Operand condition, Operand ifTrue, Operand ifFalse);
/// a * b + c rounded once (floats).
Value fma(Operand a, Operand b, Operand c);
Value exp(Operand x);
Value exp2(Operand x);
Value log(Operand x);
Value sqrt(Operand x);
Value rsqrt(Operand x);
/// 1 / x for floats, rounded as the target's reciprocal instruction does: within 1 ulp on
/// GPUs (NVIDIA rcp.approx.ftz.f32, which flushes subnormal operands and results to zero;
/// CDNA v_rcp_f32: one instruction instead of a division's refinement and slow path); on
/// the host the exact quotient. For values that tolerate it.
Value approximateReciprocal(Operand x);
/// e^x for floats as the GPU's exp2 instruction of x·log2(e), without carrying that
/// product's rounding: |x|·2^-24 relative error more than exp (which is within a few ulp),
/// so for values rounded to 16 bits afterwards. Exact on the host.
Value approximateExp(Operand x);
Value abs(Operand x);
Value tanh(Operand x);
Value erf(Operand x);
Value floor(Operand x);

/// A dimension of a tensor argument: a size fixed at compile time, a runtime size that
/// becomes an i32 kernel argument, or an implicit size that the launch bounds (e.g. one
/// program per row): no argument, so a launch passes fewer parameters; indices along it are
/// not checked, and reading its size is an error.
struct Dim {
  int64_t size = -1; // -1: dynamic, -2: implicit
  static Dim fixed(int64_t size) { return Dim{size}; }
  static Dim dynamic() { return Dim{-1}; }
  static Dim implicit() { return Dim{-2}; }
  bool isDynamic() const { return size == -1; }
  bool isImplicit() const { return size == -2; }
};

/// A tensor argument: a pointer with a shape and strides (in elements). Static sizes are
/// constants in the IR; dynamic sizes and the strides of a strided tensor are i32 arguments
/// named "<tensor>_size<d>" and "<tensor>_stride<d>", passed after the pointer.
class Tensor {
public:
  std::string name;
  Pointer pointer;
  std::vector<Value> sizes;   // one per dimension, i32 scalars; invalid where implicit
  std::vector<Value> strides; // one per dimension, i32 scalars; the last is 1 when contiguous
  size_t rank() const { return sizes.size(); }
  /// The size along `d`; an error for an implicit dimension.
  Value size(int d, SourceLoc loc = SourceLoc::current()) const;
  Value stride(int d) const { return strides.at(d); }
  DType elementType() const { return pointer.element; }
};

/// Element offsets sum(index[d] * stride[d]) of `t`, broadcasting the index tiles together.
Value offsetsOf(const Tensor &t, const std::vector<Operand> &index, SourceLoc loc = SourceLoc::current());
/// index[d] < size[d] for every d but implicit ones: the in-bounds mask of a tile of indices.
Value inBounds(const Tensor &t, const std::vector<Operand> &index, SourceLoc loc = SourceLoc::current());
/// Loads t[index...]; elements outside the tensor are not read and take `other` (default 0).
Value load(const Tensor &t, const std::vector<Operand> &index, std::optional<Operand> other = std::nullopt,
           SourceLoc loc = SourceLoc::current());
/// Stores t[index...] = value for the indices inside the tensor.
void store(const Tensor &t, const std::vector<Operand> &index, Operand value, SourceLoc loc = SourceLoc::current());

/// Grid position and size of this program instance.
Value programId(int axis, SourceLoc loc = SourceLoc::current());
Value numPrograms(int axis, SourceLoc loc = SourceLoc::current());
/// i32 tile [start, end).
Value arange(int32_t start, int32_t end, SourceLoc loc = SourceLoc::current());
/// A tile of `shape` filled with `value`.
Value full(const Shape &shape, Operand value, DType dtype);
Value zeros(const Shape &shape, DType dtype, SourceLoc loc = SourceLoc::current());
/// A scalar constant of `dtype`.
Value constant(double value, DType dtype, SourceLoc loc = SourceLoc::current());

/// Gathers ptr[offsets]; where `mask` is false the element is not read and takes `other` (0 by default).
Value load(Pointer ptr, Operand offsets, std::optional<Operand> mask = std::nullopt,
           std::optional<Operand> other = std::nullopt, SourceLoc loc = SourceLoc::current());
void store(Pointer ptr, Operand offsets, Operand value, std::optional<Operand> mask = std::nullopt,
           SourceLoc loc = SourceLoc::current());
/// Adds `value` into ptr[offsets] atomically; returns the previous values.
Value atomicAdd(Pointer ptr, Operand offsets, Operand value, std::optional<Operand> mask = std::nullopt,
                SourceLoc loc = SourceLoc::current());

Buffer makeBuffer(Pointer ptr, Operand numElements, SourceLoc loc = SourceLoc::current());
Value load(Buffer buffer, Operand offsets, std::optional<Operand> mask = std::nullopt,
           SourceLoc loc = SourceLoc::current());
void store(Buffer buffer, Operand offsets, Operand value, std::optional<Operand> mask = std::nullopt,
           SourceLoc loc = SourceLoc::current());

Shared sharedAlloc(const Shape &shape, DType dtype, SourceLoc loc = SourceLoc::current());
void sharedStore(Shared dest, Operand value, SourceLoc loc = SourceLoc::current());
Value sharedLoad(Shared source, SourceLoc loc = SourceLoc::current());
/// Entry `index` along dimension 0 (for multi-buffering).
Shared sharedSlice(Shared source, Operand index, SourceLoc loc = SourceLoc::current());
/// Starts copying ptr[offsets] into `dest`; returns a token for asyncWait.
Value asyncCopy(Pointer ptr, Operand offsets, Shared dest, std::optional<Operand> mask = std::nullopt,
                SourceLoc loc = SourceLoc::current());
void asyncWait(const std::vector<Value> &tokens, int pending = 0, SourceLoc loc = SourceLoc::current());
void barrier(SourceLoc loc = SourceLoc::current());
/// Device-wide fences on global memory, for programs that hand data to each other: the
/// writer's stores, releaseFence(), barrier(), then an atomic; the receiver's atomic, then
/// acquireFence(), then its loads.
void releaseFence(SourceLoc loc = SourceLoc::current());
void acquireFence(SourceLoc loc = SourceLoc::current());

/// acc + a * b (a: MxK, b: KxN). `atom` optionally pins the matrix instruction.
Value dot(Operand a, Operand b, Operand acc, std::string atom = {}, SourceLoc loc = SourceLoc::current());
/// MX-scaled dot: scales are f8E8M0FNU tiles of M x K/32 and K/32 x N.
Value scaledDot(Operand a, Operand aScale, Operand b, Operand bScale, Operand acc,
                SourceLoc loc = SourceLoc::current());
/// Packs pairs of f4E2M1FN along the last dimension into i8 (low nibble first), and back.
Value packFp4(Operand x, SourceLoc loc = SourceLoc::current());
Value unpackFp4(Operand x, SourceLoc loc = SourceLoc::current());
/// Both nibbles of each byte of an i8 tile looked up in `table`: an i16 tile whose low byte
/// is table[b & 15] and high byte table[b >> 4].
Value lookupNibbles(Operand bytes, const std::array<int8_t, 16> &table, SourceLoc loc = SourceLoc::current());

/// (a * b).sum(axis), where each product may be fused into the running sum (rounded once, as
/// an FMA; the product carries the `contract` fast-math flag): a GPU thread's part of the sum
/// is then a chain of FMAs. An opt-in numerics choice, as C's FP_CONTRACT is.
Value sumOfProducts(Operand a, Operand b, int axis, SourceLoc loc = SourceLoc::current());

using Combiner = std::function<Value(Value, Value)>;
/// Reduction with a custom associative, commutative combiner of two scalars.
Value reduce(Operand x, int axis, const Combiner &combine, SourceLoc loc = SourceLoc::current());
/// Inclusive scan with a custom associative combiner.
Value scan(Operand x, int axis, const Combiner &combine, SourceLoc loc = SourceLoc::current());

/// for (i = lo; i < hi; i += step) with loop-carried values: `body(i, carried)` returns the
/// next carried values (same count, types and shapes); returns the values after the loop.
using LoopBody = std::function<std::vector<Value>(Value, const std::vector<Value> &)>;
std::vector<Value> forRange(Operand lo, Operand hi, Operand step, const std::vector<Value> &carried,
                            const LoopBody &body, SourceLoc loc = SourceLoc::current());
/// while (condition(carried)) carried = body(carried): `condition` returns an i1 scalar,
/// `body` the next carried values (same count, types and shapes); returns the values the
/// loop ends with.
using WhileCondition = std::function<Value(const std::vector<Value> &)>;
using WhileBody = std::function<std::vector<Value>(const std::vector<Value> &)>;
std::vector<Value> whileLoop(const std::vector<Value> &carried, const WhileCondition &condition,
                             const WhileBody &body, SourceLoc loc = SourceLoc::current());
/// Runs `then` when `condition` (an i1 scalar) holds.
void ifThen(Operand condition, const std::function<void()> &then, SourceLoc loc = SourceLoc::current());
/// Both branches return values of the same types; returns the taken branch's values.
std::vector<Value> ifThenElse(Operand condition, const std::function<std::vector<Value>()> &then,
                              const std::function<std::vector<Value>()> &otherwise,
                              SourceLoc loc = SourceLoc::current());

/// While alive, operations built on this thread carry `file:line:col` instead of their C++
/// caller's location, so front ends in other languages (the Python DSL) point IR locations and
/// diagnostics at their own source. Nests; the innermost wins.
class SourceOverride {
public:
  SourceOverride(std::string file, unsigned line, unsigned column);
  ~SourceOverride();
  SourceOverride(const SourceOverride &) = delete;
  SourceOverride &operator=(const SourceOverride &) = delete;

private:
  std::string file;
  unsigned line, column;
  const SourceOverride *outer;
  friend struct SourceOverrideAccess;
};

/// Distributed layouts an expert can pin on a tile with `withLayout`.
struct Layout {
  std::string text; // the attribute, e.g. "#tile.blocked<sizePerThread = [4], ...>"
  static Layout blocked(std::vector<unsigned> sizePerThread, std::vector<unsigned> threadsPerWarp,
                        std::vector<unsigned> warpsPerBlock, std::vector<unsigned> order);
  static Layout mma(const std::string &atom, std::vector<unsigned> warpsPerBlock);
  static Layout dotOperand(unsigned operandIndex, const Layout &mmaParent);
  static Layout linear(const std::string &map);
};
Value withLayout(Operand x, const Layout &layout, SourceLoc loc = SourceLoc::current());

struct KernelOptions {
  int numWarps = 4;
  /// Depth of the shared-memory ring K loops prefetch their dot operands through
  /// (tile-pipeline-loops); 1 leaves loops as written.
  int numStages = 1;
  /// On NVIDIA a bf16 or f16 sum of two values of that type, computed in f32 and rounded
  /// back, becomes one narrow add (the same value, fewer instructions); false keeps it in f32.
  bool narrowRoundedSums = true;
};

/// How far from a pointer argument the kernel reaches. `within2GiB` promises that every
/// element accessed through it lies in the first 2^31 - 1 bytes from it (its tensor is
/// smaller than 2 GiB and is not indexed backwards); CDNA then addresses it through a
/// buffer resource with 32-bit offsets and hardware range checks.
enum class Reach { unbounded, within2GiB };

class ModuleBuilder;

/// Declares a kernel's arguments and is the insertion point for its body while alive.
class KernelBuilder {
public:
  ~KernelBuilder();
  KernelBuilder(const KernelBuilder &) = delete;
  KernelBuilder &operator=(const KernelBuilder &) = delete;
  KernelBuilder(KernelBuilder &&other) noexcept;

  Pointer pointer(const std::string &name, DType element, Reach reach = Reach::unbounded,
                  SourceLoc loc = SourceLoc::current());
  /// A scalar argument (i32, i64, f32 or f64).
  Value scalar(const std::string &name, DType dtype, SourceLoc loc = SourceLoc::current());
  /// A tensor argument with static or dynamic sizes; `contiguous` tensors are row-major with
  /// strides derived from the sizes, otherwise every stride but the last is an argument.
  Tensor tensor(const std::string &name, DType element, const std::vector<Dim> &dims, bool contiguous = true,
                Reach reach = Reach::unbounded, SourceLoc loc = SourceLoc::current());
  /// Specialization facts (what a JIT knows about a launch's arguments), which let GPU
  /// targets drop run-time alignment checks: the pointer's address is a multiple of `bytes`,
  /// or the integer argument is a multiple of `divisor` (both powers of two). A launch that
  /// breaks them is undefined.
  void assumeAligned(Pointer pointer, int64_t bytes, SourceLoc loc = SourceLoc::current());
  void assumeDivisible(Value integerArgument, int64_t divisor, SourceLoc loc = SourceLoc::current());
  /// A compile-time parameter: returns `value` and records name=value on the kernel, so dumps
  /// and caches see the specialization.
  int64_t param(const std::string &name, int64_t value);

private:
  friend class ModuleBuilder;
  explicit KernelBuilder(ModuleBuilder *owner) : owner(owner) {}
  ModuleBuilder *owner;
};

/// Builds a module of kernels. Only one kernel is open at a time, on one thread.
class ModuleBuilder {
public:
  ModuleBuilder();
  ~ModuleBuilder();
  KernelBuilder kernel(const std::string &name, KernelOptions options = {},
                       SourceLoc loc = SourceLoc::current());
  /// The verified module, or null with every diagnostic ("file:line:col: error: ...") in *errors.
  std::unique_ptr<Module> finish(std::string *errors);

  struct State;
  State &state() { return *state_; }

private:
  std::unique_ptr<State> state_;
};

} // namespace wavetile::dsl

#endif
