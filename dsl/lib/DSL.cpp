//===- DSL.cpp - building tile IR from the C++ DSL ------------------------===//

#include "wavetile/dsl/DSL.h"

#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "wavetile/Pipeline/ModuleImpl.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace wavetile;
using namespace wavetile::dsl;
using mlir::OpBuilder;

//===----------------------------------------------------------------------===//
// Builder state
//===----------------------------------------------------------------------===//

struct ModuleBuilder::State {
  std::unique_ptr<Module::Impl> module = std::make_unique<Module::Impl>();
  mlir::MLIRContext *context = module->context.get();
  OpBuilder builder{context};
  std::unique_ptr<DiagnosticCapture> diagnostics = std::make_unique<DiagnosticCapture>(context);
  mlir::func::FuncOp kernel;
  bool failed = false;
};

namespace wavetile::dsl {
struct SourceOverrideAccess {
  static thread_local const SourceOverride *current;
  static const std::string &file(const SourceOverride &o) { return o.file; }
  static unsigned line(const SourceOverride &o) { return o.line; }
  static unsigned column(const SourceOverride &o) { return o.column; }
};
thread_local const SourceOverride *SourceOverrideAccess::current = nullptr;
} // namespace wavetile::dsl

SourceOverride::SourceOverride(std::string file, unsigned line, unsigned column)
    : file(std::move(file)), line(line), column(column), outer(SourceOverrideAccess::current) {
  SourceOverrideAccess::current = this;
}
SourceOverride::~SourceOverride() { SourceOverrideAccess::current = outer; }

namespace {
thread_local ModuleBuilder::State *current = nullptr;

ModuleBuilder::State &state() {
  if (!current) {
    // Using the DSL outside a kernel is a programming error with no location to report to.
    fprintf(stderr, "wavetile::dsl: an operation was used outside an open kernel\n");
    abort();
  }
  return *current;
}

OpBuilder &b() { return state().builder; }

mlir::Location locOf(const SourceLoc &loc) {
  if (const SourceOverride *o = SourceOverrideAccess::current)
    return mlir::FileLineColLoc::get(state().context, SourceOverrideAccess::file(*o), SourceOverrideAccess::line(*o),
                                     SourceOverrideAccess::column(*o));
  return mlir::FileLineColLoc::get(state().context, loc.file_name(), loc.line(), loc.column());
}

/// Reports a misuse at the author's source line; the value being built becomes invalid.
Value fail(const SourceLoc &loc, const std::string &message) {
  mlir::emitError(locOf(loc)) << message;
  state().failed = true;
  return Value();
}

mlir::Value unwrap(Value v) { return mlir::Value::getFromOpaquePointer(v.handle); }
Value wrap(mlir::Value v) {
  Value result;
  result.handle = v.getAsOpaquePointer();
  return result;
}

mlir::Type typeOf(DType dtype) {
  mlir::MLIRContext *ctx = state().context;
  return mlir::parseType(dtypeName(dtype), ctx);
}

std::optional<DType> dtypeOf(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::getElementTypeOrSelf(type).print(os);
  return parseDType(text);
}

mlir::Type withShape(mlir::Type element, const Shape &shape) {
  if (shape.empty())
    return element;
  return mlir::RankedTensorType::get(shape, element);
}

std::string shapeText(const Shape &shape) {
  if (shape.empty())
    return "scalar";
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

mlir::Value scalarConstant(double value, DType dtype, mlir::Location loc) {
  mlir::Type type = typeOf(dtype);
  if (isFloat(dtype))
    return mlir::arith::ConstantOp::create(b(), loc, b().getFloatAttr(type, value));
  return mlir::arith::ConstantOp::create(b(), loc, b().getIntegerAttr(type, int64_t(value)));
}

/// A literal takes `hint`'s dtype; alone, ints are i32 and floats f32.
Value resolve(const Operand &operand, std::optional<DType> hint) {
  if (auto *v = std::get_if<Value>(&operand.value))
    return *v;
  mlir::Location loc = locOf(operand.loc);
  if (auto *i = std::get_if<int64_t>(&operand.value))
    return wrap(scalarConstant(double(*i), hint.value_or(DType::i32), loc));
  double d = std::get<double>(operand.value);
  DType dtype = hint && isFloat(*hint) ? *hint : DType::f32;
  if (hint && !isFloat(*hint))
    return fail(operand.loc, "a floating-point literal cannot take the integer dtype " +
                                 std::string(dtypeName(*hint)));
  return wrap(scalarConstant(d, dtype, loc));
}

std::optional<DType> dtypeHint(const Operand &operand) {
  if (auto *v = std::get_if<Value>(&operand.value))
    if (v->valid())
      return v->dtype();
  return std::nullopt;
}

mlir::Value splat(mlir::Value scalar, const Shape &shape, mlir::Location loc) {
  return wavetile::tile::SplatOp::create(b(), loc, mlir::RankedTensorType::get(shape, scalar.getType()), scalar);
}

/// Numpy-style broadcasting of a tile to `shape`: leading size-1 dimensions are added, then
/// size-1 dimensions repeat. Scalars are splatted.
Value broadcastValue(Value v, const Shape &shape, const SourceLoc &loc) {
  if (!v.valid())
    return v;
  Shape from = v.shape();
  if (from == shape)
    return v;
  mlir::Location l = locOf(loc);
  if (from.empty())
    return wrap(splat(unwrap(v), shape, l));
  if (from.size() > shape.size())
    return fail(loc, "cannot broadcast a tile of shape " + shapeText(from) + " to " + shapeText(shape));
  mlir::Value value = unwrap(v);
  mlir::Type element = mlir::getElementTypeOrSelf(value.getType());
  while (from.size() < shape.size()) {
    from.insert(from.begin(), 1);
    value = wavetile::tile::ExpandDimsOp::create(b(), l, mlir::RankedTensorType::get(from, element), value, 0);
  }
  for (size_t d = 0; d < shape.size(); ++d)
    if (from[d] != shape[d] && from[d] != 1)
      return fail(loc, "cannot broadcast a tile of shape " + shapeText(v.shape()) + " to " + shapeText(shape));
  if (from != shape)
    value = wavetile::tile::BroadcastOp::create(b(), l, mlir::RankedTensorType::get(shape, element), value);
  return wrap(value);
}

std::optional<Shape> broadcastShape(const Shape &a, const Shape &b) {
  Shape result(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t da = i < result.size() - a.size() ? 1 : a[i - (result.size() - a.size())];
    int64_t db = i < result.size() - b.size() ? 1 : b[i - (result.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = std::max(da, db);
  }
  return result;
}

/// Resolves literals, checks dtypes agree, broadcasts shapes. Returns false after reporting.
bool unify(std::vector<Operand> operands, std::vector<Value> &values, const SourceLoc &loc,
           std::optional<DType> literalHint = std::nullopt) {
  std::optional<DType> hint = literalHint;
  for (const Operand &o : operands)
    if (!hint)
      hint = dtypeHint(o);
  values.clear();
  for (const Operand &o : operands)
    values.push_back(resolve(o, hint));
  for (const Value &v : values)
    if (!v.valid())
      return false;
  Shape shape;
  for (const Value &v : values) {
    auto merged = broadcastShape(shape, v.shape());
    if (!merged) {
      std::string shapes;
      for (const Value &w : values)
        shapes += (shapes.empty() ? "" : " and ") + shapeText(w.shape());
      fail(loc, "operand shapes " + shapes + " do not broadcast");
      return false;
    }
    shape = *merged;
  }
  for (Value &v : values)
    v = broadcastValue(v, shape, loc);
  return llvm::all_of(values, [](const Value &v) { return v.valid(); });
}

bool checkSameDType(const std::vector<Value> &values, const SourceLoc &loc, const char *what) {
  for (const Value &v : values)
    if (v.dtype() != values.front().dtype()) {
      fail(loc, std::string(what) + " operands have different dtypes " + dtypeName(values.front().dtype()) +
                    " and " + dtypeName(v.dtype()) + "; convert one with .to()");
      return false;
    }
  return true;
}

template <typename FloatOp, typename IntOp>
Value arithmetic(Operand a, Operand b_, const char *what) {
  std::vector<Value> v;
  if (!unify({a, b_}, v, a.loc) || !checkSameDType(v, a.loc, what))
    return Value();
  mlir::Location l = locOf(a.loc);
  if (isFloat(v[0].dtype())) {
    if constexpr (std::is_void_v<FloatOp>)
      return fail(a.loc, std::string(what) + " needs integer operands, got " + dtypeName(v[0].dtype()));
    else
      return wrap(FloatOp::create(b(), l, unwrap(v[0]), unwrap(v[1])));
  }
  if constexpr (std::is_void_v<IntOp>)
    return fail(a.loc, std::string(what) + " needs floating-point operands, got " + dtypeName(v[0].dtype()));
  else
    return wrap(IntOp::create(b(), l, unwrap(v[0]), unwrap(v[1])));
}

Value compare(Operand a, Operand b_, mlir::arith::CmpFPredicate fp, mlir::arith::CmpIPredicate ip) {
  std::vector<Value> v;
  if (!unify({a, b_}, v, a.loc) || !checkSameDType(v, a.loc, "comparison"))
    return Value();
  mlir::Location l = locOf(a.loc);
  if (isFloat(v[0].dtype()))
    return wrap(mlir::arith::CmpFOp::create(b(), l, fp, unwrap(v[0]), unwrap(v[1])));
  return wrap(mlir::arith::CmpIOp::create(b(), l, ip, unwrap(v[0]), unwrap(v[1])));
}

template <typename MathOp>
Value unaryFloat(Operand x, const char *what) {
  Value v = resolve(x, std::nullopt);
  if (!v.valid())
    return v;
  if (!isFloat(v.dtype()))
    return fail(x.loc, std::string(what) + " needs a floating-point operand, got " + dtypeName(v.dtype()));
  return wrap(MathOp::create(b(), locOf(x.loc), unwrap(v)));
}

bool requireTile(const Value &v, const SourceLoc &loc, const char *what) {
  if (v.valid() && !v.isTile()) {
    fail(loc, std::string(what) + " needs a tile, got a scalar");
    return false;
  }
  return v.valid();
}

mlir::Value maskValue(const std::optional<Operand> &mask, const Shape &shape, const SourceLoc &loc, bool &ok) {
  if (!mask)
    return {};
  Value m = broadcastValue(resolve(*mask, DType::i1), shape, loc);
  if (!m.valid() || m.dtype() != DType::i1) {
    if (m.valid())
      fail(loc, std::string("a mask must be i1, got ") + dtypeName(m.dtype()));
    ok = false;
    return {};
  }
  return unwrap(m);
}

/// Offsets must be an integer tile; a scalar offset becomes a 1-element tile.
Value offsetTile(const Operand &offsets, const SourceLoc &loc) {
  Value o = resolve(offsets, std::nullopt);
  if (!o.valid())
    return o;
  if (o.dtype() != DType::i32 && o.dtype() != DType::i64)
    return fail(loc, std::string("offsets must be i32 or i64, got ") + dtypeName(o.dtype()));
  if (!o.isTile())
    return fail(loc, "offsets must be a tile; use arange or full to build one");
  return o;
}
} // namespace

//===----------------------------------------------------------------------===//
// DType
//===----------------------------------------------------------------------===//

static const std::pair<DType, const char *> kDTypeNames[] = {
    {DType::i1, "i1"},           {DType::i8, "i8"},           {DType::i16, "i16"},
    {DType::i32, "i32"},         {DType::i64, "i64"},         {DType::f16, "f16"},
    {DType::bf16, "bf16"},       {DType::f32, "f32"},         {DType::f64, "f64"},
    {DType::f8E4M3FN, "f8E4M3FN"}, {DType::f8E5M2, "f8E5M2"}, {DType::f8E4M3FNUZ, "f8E4M3FNUZ"},
    {DType::f8E5M2FNUZ, "f8E5M2FNUZ"}, {DType::f6E2M3FN, "f6E2M3FN"}, {DType::f6E3M2FN, "f6E3M2FN"},
    {DType::f4E2M1FN, "f4E2M1FN"}, {DType::f8E8M0FNU, "f8E8M0FNU"},
};

const char *wavetile::dsl::dtypeName(DType dtype) {
  for (auto [d, name] : kDTypeNames)
    if (d == dtype)
      return name;
  return "?";
}

std::optional<DType> wavetile::dsl::parseDType(std::string_view name) {
  for (auto [d, n] : kDTypeNames)
    if (name == n)
      return d;
  return std::nullopt;
}

bool wavetile::dsl::isFloat(DType dtype) {
  return dtype != DType::i1 && dtype != DType::i8 && dtype != DType::i16 && dtype != DType::i32 &&
         dtype != DType::i64;
}

int wavetile::dsl::bitWidth(DType dtype) {
  switch (dtype) {
  case DType::i1:
    return 1;
  case DType::f4E2M1FN:
    return 4;
  case DType::f6E2M3FN:
  case DType::f6E3M2FN:
    return 6;
  case DType::i8:
  case DType::f8E4M3FN:
  case DType::f8E5M2:
  case DType::f8E4M3FNUZ:
  case DType::f8E5M2FNUZ:
  case DType::f8E8M0FNU:
    return 8;
  case DType::i16:
  case DType::f16:
  case DType::bf16:
    return 16;
  case DType::i32:
  case DType::f32:
    return 32;
  case DType::i64:
  case DType::f64:
    return 64;
  }
  return 0;
}

static bool isNarrowFloat(DType dtype) { return isFloat(dtype) && bitWidth(dtype) <= 8; }

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

// A value an earlier error left invalid answers as an empty scalar: the error is reported
// once, by ModuleBuilder::finish, instead of a crash in the code that inspects it.
bool Value::isTile() const { return valid() && mlir::isa<mlir::RankedTensorType>(unwrap(*this).getType()); }

Shape Value::shape() const {
  if (!valid())
    return {};
  if (auto t = mlir::dyn_cast<mlir::RankedTensorType>(unwrap(*this).getType()))
    return Shape(t.getShape());
  return {};
}

DType Value::dtype() const { return valid() ? dtypeOf(unwrap(*this).getType()).value_or(DType::i1) : DType::i1; }

Value Value::to(DType target, bool saturate, SourceLoc loc) const {
  if (!valid())
    return *this;
  DType source = dtype();
  if (source == target)
    return *this;
  mlir::Location l = locOf(loc);
  mlir::Value v = unwrap(*this);
  mlir::Type type = withShape(typeOf(target), shape());
  if (isNarrowFloat(source) || isNarrowFloat(target)) {
    if (isNarrowFloat(source) && isNarrowFloat(target))
      return to(DType::f32, false, loc).to(target, saturate, loc);
    DType wide = isNarrowFloat(source) ? target : source;
    if (!isFloat(wide))
      return to(DType::f32, false, loc).to(target, saturate, loc);
    if (wide == DType::f64)
      return to(DType::f32, false, loc).to(target, saturate, loc);
    auto op = wavetile::tile::FpConvertOp::create(b(), l, type, v);
    if (saturate)
      op.setSaturate(true);
    return wrap(op);
  }
  if (isFloat(source) && isFloat(target)) {
    if ((source == DType::bf16 && target == DType::f16) || (source == DType::f16 && target == DType::bf16))
      return to(DType::f32, false, loc).to(target, false, loc);
    if (bitWidth(source) < bitWidth(target))
      return wrap(mlir::arith::ExtFOp::create(b(), l, type, v));
    return wrap(mlir::arith::TruncFOp::create(b(), l, type, v));
  }
  if (isFloat(source))
    return wrap(mlir::arith::FPToSIOp::create(b(), l, type, v));
  if (isFloat(target)) {
    if (source == DType::i1)
      return wrap(mlir::arith::UIToFPOp::create(b(), l, type, v));
    return wrap(mlir::arith::SIToFPOp::create(b(), l, type, v));
  }
  if (bitWidth(source) < bitWidth(target)) {
    if (source == DType::i1)
      return wrap(mlir::arith::ExtUIOp::create(b(), l, type, v));
    return wrap(mlir::arith::ExtSIOp::create(b(), l, type, v));
  }
  return wrap(mlir::arith::TruncIOp::create(b(), l, type, v));
}

Value Value::bitcast(DType target, SourceLoc loc) const {
  if (!valid())
    return *this;
  if (bitWidth(dtype()) != bitWidth(target))
    return fail(loc, std::string("bitcast needs dtypes of one width, got ") + dtypeName(dtype()) + " and " +
                         dtypeName(target));
  if (dtype() == target)
    return *this;
  if (isNarrowFloat(dtype()) || isNarrowFloat(target))
    return fail(loc, "bitcast of fp8/fp6/fp4 dtypes is not supported; convert with to()");
  mlir::Type type = withShape(typeOf(target), shape());
  return wrap(mlir::arith::BitcastOp::create(b(), locOf(loc), type, unwrap(*this)));
}

Value Value::expand(int axis, SourceLoc loc) const {
  if (!valid())
    return *this;
  Shape s = shape();
  if (axis < 0)
    axis += int(s.size()) + 1;
  if (axis < 0 || axis > int(s.size()))
    return fail(loc, "expand axis " + std::to_string(axis) + " out of range for shape " + shapeText(s));
  mlir::Value v = unwrap(*this);
  if (s.empty())
    return wrap(splat(v, {1}, locOf(loc)));
  s.insert(s.begin() + axis, 1);
  auto type = mlir::RankedTensorType::get(s, mlir::getElementTypeOrSelf(v.getType()));
  return wrap(wavetile::tile::ExpandDimsOp::create(b(), locOf(loc), type, v, axis));
}

Value Value::broadcastTo(const Shape &shape, SourceLoc loc) const { return broadcastValue(*this, shape, loc); }

Value Value::reshape(const Shape &shape, SourceLoc loc) const {
  if (!requireTile(*this, loc, "reshape"))
    return Value();
  int64_t from = 1, to = 1;
  for (int64_t d : this->shape())
    from *= d;
  for (int64_t d : shape)
    to *= d;
  if (from != to)
    return fail(loc, "cannot reshape " + shapeText(this->shape()) + " (" + std::to_string(from) + " elements) to " +
                         shapeText(shape) + " (" + std::to_string(to) + " elements)");
  mlir::Value v = unwrap(*this);
  auto type = mlir::RankedTensorType::get(shape, mlir::getElementTypeOrSelf(v.getType()));
  return wrap(wavetile::tile::ReshapeOp::create(b(), locOf(loc), type, v));
}

Value Value::trans(std::vector<int> order, SourceLoc loc) const {
  if (!requireTile(*this, loc, "trans"))
    return Value();
  Shape s = shape();
  if (order.empty())
    for (int d = int(s.size()) - 1; d >= 0; --d)
      order.push_back(d);
  if (order.size() != s.size())
    return fail(loc, "trans order has " + std::to_string(order.size()) + " entries for a tile of rank " +
                         std::to_string(s.size()));
  Shape result;
  std::vector<bool> seen(s.size(), false);
  for (int d : order) {
    if (d < 0 || d >= int(s.size()) || seen[d])
      return fail(loc, "trans order must be a permutation of 0.." + std::to_string(s.size() - 1));
    seen[d] = true;
    result.push_back(s[d]);
  }
  mlir::Value v = unwrap(*this);
  auto type = mlir::RankedTensorType::get(result, mlir::getElementTypeOrSelf(v.getType()));
  return wrap(wavetile::tile::TransOp::create(b(), locOf(loc), type, v, std::vector<int32_t>(order.begin(), order.end())));
}

static Value combineAlong(const Value &x, int axis, wavetile::tile::CombineKind kind, bool isScan,
                          const Combiner *custom, const SourceLoc &loc) {
  const char *what = isScan ? "scan" : "reduce";
  if (!requireTile(x, loc, what))
    return Value();
  Shape s = x.shape();
  if (axis < 0)
    axis += int(s.size());
  if (axis < 0 || axis >= int(s.size()))
    return fail(loc, std::string(what) + " axis " + std::to_string(axis) + " out of range for shape " + shapeText(s));
  if (x.dtype() == DType::i1 || isNarrowFloat(x.dtype()))
    return fail(loc, std::string(what) + " needs i8..i64 or f16..f64 elements, got " + dtypeName(x.dtype()));
  mlir::Location l = locOf(loc);
  mlir::Value v = unwrap(x);
  mlir::Type element = mlir::getElementTypeOrSelf(v.getType());
  Shape resultShape = s;
  if (!isScan)
    resultShape.erase(resultShape.begin() + axis);
  mlir::Type resultType = withShape(element, resultShape);
  auto kindAttr = wavetile::tile::CombineKindAttr::get(state().context, kind);
  mlir::Operation *op;
  if (isScan)
    op = wavetile::tile::ScanOp::create(b(), l, resultType, v, b().getI32IntegerAttr(axis), kindAttr);
  else
    op = wavetile::tile::ReduceOp::create(b(), l, resultType, v, b().getI32IntegerAttr(axis), kindAttr);
  if (custom) {
    OpBuilder::InsertionGuard guard(b()); // createBlock moves the insertion point into the region
    mlir::Block *body = b().createBlock(&op->getRegion(0), {}, {element, element}, {l, l});
    b().setInsertionPointToStart(body);
    Value combined = (*custom)(wrap(body->getArgument(0)), wrap(body->getArgument(1)));
    mlir::Value yielded = body->getArgument(0);
    if (combined.valid() && (combined.isTile() || combined.dtype() != x.dtype()))
      fail(loc, std::string("a ") + what + " combiner must return one " + dtypeName(x.dtype()) + " scalar");
    else if (combined.valid())
      yielded = unwrap(combined);
    wavetile::tile::YieldOp::create(b(), l, yielded);
  }
  return wrap(op->getResult(0));
}

Value Value::sum(int axis, SourceLoc loc) const {
  return combineAlong(*this, axis, wavetile::tile::CombineKind::sum, false, nullptr, loc);
}
Value Value::max(int axis, SourceLoc loc) const {
  return combineAlong(*this, axis, wavetile::tile::CombineKind::max, false, nullptr, loc);
}
Value Value::min(int axis, SourceLoc loc) const {
  return combineAlong(*this, axis, wavetile::tile::CombineKind::min, false, nullptr, loc);
}
Value Value::cumsum(int axis, SourceLoc loc) const {
  return combineAlong(*this, axis, wavetile::tile::CombineKind::sum, true, nullptr, loc);
}

Value wavetile::dsl::reduce(Operand x, int axis, const Combiner &combine, SourceLoc loc) {
  return combineAlong(resolve(x, std::nullopt), axis, wavetile::tile::CombineKind::custom, false, &combine, loc);
}
Value wavetile::dsl::scan(Operand x, int axis, const Combiner &combine, SourceLoc loc) {
  return combineAlong(resolve(x, std::nullopt), axis, wavetile::tile::CombineKind::custom, true, &combine, loc);
}

Shape Shared::shape() const {
  auto type = mlir::cast<wavetile::tile::SharedType>(mlir::Value::getFromOpaquePointer(handle).getType());
  return Shape(type.getShape());
}

//===----------------------------------------------------------------------===//
// Operators and math
//===----------------------------------------------------------------------===//

namespace ma = mlir::arith;

Value wavetile::dsl::operator+(Operand a, Operand b) { return arithmetic<ma::AddFOp, ma::AddIOp>(a, b, "+"); }
Value wavetile::dsl::operator-(Operand a, Operand b) { return arithmetic<ma::SubFOp, ma::SubIOp>(a, b, "-"); }
Value wavetile::dsl::operator*(Operand a, Operand b) { return arithmetic<ma::MulFOp, ma::MulIOp>(a, b, "*"); }
Value wavetile::dsl::operator/(Operand a, Operand b) { return arithmetic<ma::DivFOp, ma::DivSIOp>(a, b, "/"); }
Value wavetile::dsl::operator%(Operand a, Operand b) { return arithmetic<ma::RemFOp, ma::RemSIOp>(a, b, "%"); }
Value wavetile::dsl::operator&(Operand a, Operand b) { return arithmetic<void, ma::AndIOp>(a, b, "&"); }
Value wavetile::dsl::operator|(Operand a, Operand b) { return arithmetic<void, ma::OrIOp>(a, b, "|"); }
Value wavetile::dsl::operator^(Operand a, Operand b) { return arithmetic<void, ma::XOrIOp>(a, b, "^"); }
Value wavetile::dsl::operator<<(Operand a, Operand b) { return arithmetic<void, ma::ShLIOp>(a, b, "<<"); }
Value wavetile::dsl::operator>>(Operand a, Operand b) { return arithmetic<void, ma::ShRSIOp>(a, b, ">>"); }
Value wavetile::dsl::maximum(Operand a, Operand b) { return arithmetic<ma::MaximumFOp, ma::MaxSIOp>(a, b, "maximum"); }
Value wavetile::dsl::minimum(Operand a, Operand b) { return arithmetic<ma::MinimumFOp, ma::MinSIOp>(a, b, "minimum"); }
Value wavetile::dsl::minimumNumber(Operand a, Operand b) {
  return arithmetic<ma::MinNumFOp, ma::MinSIOp>(a, b, "minimumNumber");
}

Value wavetile::dsl::operator-(Operand a) {
  Value v = resolve(a, std::nullopt);
  if (!v.valid())
    return v;
  if (isFloat(v.dtype()))
    return wrap(ma::NegFOp::create(b(), locOf(a.loc), unwrap(v)));
  return Operand(0, a.loc) - Operand(v, a.loc);
}

Value wavetile::dsl::operator<(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::OLT, ma::CmpIPredicate::slt); }
Value wavetile::dsl::operator<=(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::OLE, ma::CmpIPredicate::sle); }
Value wavetile::dsl::operator>(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::OGT, ma::CmpIPredicate::sgt); }
Value wavetile::dsl::operator>=(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::OGE, ma::CmpIPredicate::sge); }
Value wavetile::dsl::operator==(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::OEQ, ma::CmpIPredicate::eq); }
Value wavetile::dsl::operator!=(Operand a, Operand b) { return compare(a, b, ma::CmpFPredicate::UNE, ma::CmpIPredicate::ne); }

Value wavetile::dsl::sumOfProducts(Operand a, Operand b_, int axis, SourceLoc loc) {
  Value product = arithmetic<ma::MulFOp, ma::MulIOp>(a, b_, "sumOfProducts");
  if (!product.valid())
    return Value();
  if (auto multiply = unwrap(product).getDefiningOp<ma::MulFOp>())
    multiply.setFastmath(ma::FastMathFlags::contract);
  return product.sum(axis, loc);
}

Value wavetile::dsl::where(Operand condition, Operand ifTrue, Operand ifFalse) {
  std::optional<DType> hint = dtypeHint(ifTrue);
  if (!hint)
    hint = dtypeHint(ifFalse);
  std::vector<Value> v;
  Value c = resolve(condition, DType::i1);
  if (!c.valid())
    return c;
  if (c.dtype() != DType::i1)
    return fail(condition.loc, std::string("where() needs an i1 condition, got ") + dtypeName(c.dtype()));
  // Literals take the other choice's dtype (or default to i32/f32), never the condition's.
  std::vector<Value> choices;
  if (!unify({ifTrue, ifFalse}, choices, condition.loc, hint))
    return Value();
  if (!unify({Operand(c, condition.loc), Operand(choices[0], condition.loc), Operand(choices[1], condition.loc)}, v,
             condition.loc))
    return Value();
  if (!checkSameDType({v[1], v[2]}, condition.loc, "where()"))
    return Value();
  return wrap(ma::SelectOp::create(b(), locOf(condition.loc), unwrap(v[0]), unwrap(v[1]), unwrap(v[2])));
}

Value wavetile::dsl::fma(Operand x, Operand y, Operand z) {
  std::vector<Value> v;
  if (!unify({x, y, z}, v, x.loc) || !checkSameDType(v, x.loc, "fma()"))
    return Value();
  if (!isFloat(v[0].dtype()))
    return fail(x.loc, std::string("fma() needs floats, got ") + dtypeName(v[0].dtype()));
  return wrap(mlir::math::FmaOp::create(b(), locOf(x.loc), unwrap(v[0]), unwrap(v[1]), unwrap(v[2])));
}

Value wavetile::dsl::exp(Operand x) { return unaryFloat<mlir::math::ExpOp>(x, "exp"); }
Value wavetile::dsl::exp2(Operand x) { return unaryFloat<mlir::math::Exp2Op>(x, "exp2"); }
Value wavetile::dsl::log(Operand x) { return unaryFloat<mlir::math::LogOp>(x, "log"); }
Value wavetile::dsl::sqrt(Operand x) { return unaryFloat<mlir::math::SqrtOp>(x, "sqrt"); }
Value wavetile::dsl::rsqrt(Operand x) { return unaryFloat<mlir::math::RsqrtOp>(x, "rsqrt"); }
Value wavetile::dsl::tanh(Operand x) { return unaryFloat<mlir::math::TanhOp>(x, "tanh"); }
Value wavetile::dsl::erf(Operand x) { return unaryFloat<mlir::math::ErfOp>(x, "erf"); }
Value wavetile::dsl::floor(Operand x) { return unaryFloat<mlir::math::FloorOp>(x, "floor"); }
Value wavetile::dsl::approximateReciprocal(Operand x) {
  Value v = resolve(x, std::nullopt);
  if (!v.valid())
    return v;
  if (!isFloat(v.dtype()))
    return fail(x.loc,
                std::string("approximateReciprocal needs a floating-point operand, got ") + dtypeName(v.dtype()));
  Value quotient = Operand(1.0, x.loc) / Operand(v, x.loc);
  // 'afn' lets the backends divide with their reciprocal instruction.
  if (quotient.valid())
    unwrap(quotient).getDefiningOp<ma::DivFOp>().setFastmath(ma::FastMathFlags::afn);
  return quotient;
}

Value wavetile::dsl::approximateExp(Operand x) {
  Value e = exp(x);
  // 'afn' lets the GPU lowering skip exp's correction term.
  if (e.valid())
    unwrap(e).getDefiningOp<mlir::math::ExpOp>().setFastmath(ma::FastMathFlags::afn);
  return e;
}

Value wavetile::dsl::abs(Operand x) {
  Value v = resolve(x, std::nullopt);
  if (!v.valid())
    return v;
  if (isFloat(v.dtype()))
    return wrap(mlir::math::AbsFOp::create(b(), locOf(x.loc), unwrap(v)));
  return wrap(mlir::math::AbsIOp::create(b(), locOf(x.loc), unwrap(v)));
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

Value wavetile::dsl::programId(int axis, SourceLoc loc) {
  if (axis < 0 || axis > 2)
    return fail(loc, "program axis must be 0, 1 or 2, got " + std::to_string(axis));
  return wrap(wavetile::tile::ProgramIdOp::create(b(), locOf(loc), b().getI32Type(), uint32_t(axis)));
}

Value wavetile::dsl::numPrograms(int axis, SourceLoc loc) {
  if (axis < 0 || axis > 2)
    return fail(loc, "program axis must be 0, 1 or 2, got " + std::to_string(axis));
  return wrap(wavetile::tile::NumProgramsOp::create(b(), locOf(loc), b().getI32Type(), uint32_t(axis)));
}

Value wavetile::dsl::arange(int32_t start, int32_t end, SourceLoc loc) {
  if (end <= start)
    return fail(loc, "arange needs end > start, got " + std::to_string(start) + " to " + std::to_string(end));
  auto type = mlir::RankedTensorType::get({end - start}, b().getI32Type());
  return wrap(wavetile::tile::ArangeOp::create(b(), locOf(loc), type, start, end));
}

Value wavetile::dsl::constant(double value, DType dtype, SourceLoc loc) {
  return wrap(scalarConstant(value, dtype, locOf(loc)));
}

Value wavetile::dsl::full(const Shape &shape, Operand value, DType dtype) {
  Value v = resolve(value, dtype);
  if (!v.valid())
    return v;
  if (v.isTile() || v.dtype() != dtype)
    return fail(value.loc, std::string("full() needs a ") + dtypeName(dtype) + " scalar");
  for (int64_t d : shape)
    if (d <= 0)
      return fail(value.loc, "tile dimensions must be positive, got " + shapeText(shape));
  return broadcastValue(v, shape, value.loc);
}

Value wavetile::dsl::zeros(const Shape &shape, DType dtype, SourceLoc loc) {
  return full(shape, Operand(constant(0, dtype, loc), loc), dtype);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Value wavetile::dsl::load(Pointer ptr, Operand offsets, std::optional<Operand> mask, std::optional<Operand> other,
                          SourceLoc loc) {
  Value o = offsetTile(offsets, loc);
  if (!o.valid())
    return o;
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!ok)
    return Value();
  mlir::Value otherValue;
  if (other) {
    if (!mask)
      return fail(loc, "load: 'other' needs a mask");
    Value v = resolve(*other, ptr.element);
    if (!v.valid())
      return v;
    if (v.dtype() != ptr.element)
      return fail(loc, std::string("load: 'other' must be ") + dtypeName(ptr.element) + ", got " + dtypeName(v.dtype()));
    otherValue = unwrap(v);
  }
  auto type = mlir::RankedTensorType::get(o.shape(), typeOf(ptr.element));
  return wrap(wavetile::tile::LoadOp::create(b(), locOf(loc), type, mlir::Value::getFromOpaquePointer(ptr.handle),
                                             unwrap(o), m, otherValue));
}

/// The value to store, broadcast to the offsets' shape and checked against the element type.
static Value storedValue(const Operand &value, DType element, const Shape &shape, const SourceLoc &loc) {
  Value v = broadcastValue(resolve(value, element), shape, loc);
  if (v.valid() && v.dtype() != element)
    return fail(loc, std::string("cannot store ") + dtypeName(v.dtype()) + " values through a pointer to " +
                         dtypeName(element) + "; convert with .to()");
  return v;
}

void wavetile::dsl::store(Pointer ptr, Operand offsets, Operand value, std::optional<Operand> mask, SourceLoc loc) {
  Value o = offsetTile(offsets, loc);
  if (!o.valid())
    return;
  Value v = storedValue(value, ptr.element, o.shape(), loc);
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!v.valid() || !ok)
    return;
  wavetile::tile::StoreOp::create(b(), locOf(loc), mlir::Value::getFromOpaquePointer(ptr.handle), unwrap(o),
                                  unwrap(v), m);
}

Value wavetile::dsl::atomicAdd(Pointer ptr, Operand offsets, Operand value, std::optional<Operand> mask,
                               SourceLoc loc) {
  Value o = offsetTile(offsets, loc);
  if (!o.valid())
    return o;
  if (ptr.element != DType::f32 && ptr.element != DType::i32)
    return fail(loc, std::string("atomicAdd supports f32 and i32, got ") + dtypeName(ptr.element));
  Value v = storedValue(value, ptr.element, o.shape(), loc);
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!v.valid() || !ok)
    return Value();
  return wrap(wavetile::tile::AtomicAddOp::create(b(), locOf(loc), unwrap(v).getType(),
                                                  mlir::Value::getFromOpaquePointer(ptr.handle), unwrap(o), unwrap(v), m));
}

Value wavetile::dsl::offsetsOf(const Tensor &t, const std::vector<Operand> &index, SourceLoc loc) {
  if (index.size() != t.rank())
    return fail(loc, "a tensor of rank " + std::to_string(t.rank()) + " needs " + std::to_string(t.rank()) +
                         " index tiles, got " + std::to_string(index.size()));
  if (!t.pointer.handle)
    return Value();
  Value offsets;
  for (size_t d = 0; d < index.size(); ++d) {
    Value term = Operand(resolve(index[d], DType::i32), loc) * Operand(t.strides[d], loc);
    offsets = d == 0 ? term : Operand(offsets, loc) + Operand(term, loc);
  }
  return offsets;
}

Value wavetile::dsl::inBounds(const Tensor &t, const std::vector<Operand> &index, SourceLoc loc) {
  if (index.size() != t.rank())
    return fail(loc, "a tensor of rank " + std::to_string(t.rank()) + " needs " + std::to_string(t.rank()) +
                         " index tiles, got " + std::to_string(index.size()));
  Value mask;
  for (size_t d = 0; d < index.size(); ++d) {
    if (!t.sizes[d].valid()) // implicit (or an error already reported): the launch bounds it
      continue;
    Value i = resolve(index[d], DType::i32);
    Value inside = Operand(i, loc) < Operand(t.sizes[d], loc);
    // Negative indices are outside too: compare as unsigned by also requiring i >= 0.
    inside = Operand(inside, loc) & Operand(Operand(i, loc) >= Operand(0, loc), loc);
    mask = mask.valid() ? Operand(mask, loc) & Operand(inside, loc) : inside;
  }
  return mask.valid() ? mask : constant(1, DType::i1, loc);
}

Value wavetile::dsl::load(const Tensor &t, const std::vector<Operand> &index, std::optional<Operand> other,
                          SourceLoc loc) {
  Value offsets = offsetsOf(t, index, loc);
  Value mask = inBounds(t, index, loc);
  if (!offsets.valid() || !mask.valid())
    return Value();
  if (!offsets.isTile())
    return fail(loc, "tensor loads need at least one index tile");
  Value fill = other ? resolve(*other, t.pointer.element) : constant(0, t.pointer.element, loc);
  return load(t.pointer, Operand(offsets, loc), Operand(mask, loc), Operand(fill, loc), loc);
}

void wavetile::dsl::store(const Tensor &t, const std::vector<Operand> &index, Operand value, SourceLoc loc) {
  Value offsets = offsetsOf(t, index, loc);
  Value mask = inBounds(t, index, loc);
  if (!offsets.valid() || !mask.valid())
    return;
  if (!offsets.isTile()) {
    fail(loc, "tensor stores need at least one index tile");
    return;
  }
  store(t.pointer, Operand(offsets, loc), value, Operand(mask, loc), loc);
}

Buffer wavetile::dsl::makeBuffer(Pointer ptr, Operand numElements, SourceLoc loc) {
  Buffer buffer;
  buffer.element = ptr.element;
  Value n = resolve(numElements, DType::i32);
  if (!n.valid())
    return buffer;
  if (n.isTile() || n.dtype() != DType::i32) {
    fail(loc, "makeBuffer needs an i32 scalar element count");
    return buffer;
  }
  auto type = wavetile::tile::BufferType::get(state().context, typeOf(ptr.element));
  buffer.handle = wavetile::tile::MakeBufferOp::create(b(), locOf(loc), type,
                                                       mlir::Value::getFromOpaquePointer(ptr.handle), unwrap(n))
                      .getResult()
                      .getAsOpaquePointer();
  return buffer;
}

static Value bufferOffsets(const Buffer &buffer, const Operand &offsets, const SourceLoc &loc) {
  if (!buffer.handle)
    return Value();
  Value o = offsetTile(offsets, loc);
  if (o.valid() && o.dtype() != DType::i32)
    return fail(loc, "buffer offsets are 32-bit: convert them with .to(DType::i32)");
  return o;
}

Value wavetile::dsl::load(Buffer buffer, Operand offsets, std::optional<Operand> mask, SourceLoc loc) {
  Value o = bufferOffsets(buffer, offsets, loc);
  if (!o.valid())
    return o;
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!ok)
    return Value();
  auto type = mlir::RankedTensorType::get(o.shape(), typeOf(buffer.element));
  return wrap(wavetile::tile::BufferLoadOp::create(b(), locOf(loc), type,
                                                   mlir::Value::getFromOpaquePointer(buffer.handle), unwrap(o), m));
}

void wavetile::dsl::store(Buffer buffer, Operand offsets, Operand value, std::optional<Operand> mask, SourceLoc loc) {
  Value o = bufferOffsets(buffer, offsets, loc);
  if (!o.valid())
    return;
  Value v = storedValue(value, buffer.element, o.shape(), loc);
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!v.valid() || !ok)
    return;
  wavetile::tile::BufferStoreOp::create(b(), locOf(loc), mlir::Value::getFromOpaquePointer(buffer.handle),
                                        unwrap(o), unwrap(v), m);
}

Shared wavetile::dsl::sharedAlloc(const Shape &shape, DType dtype, SourceLoc loc) {
  Shared shared;
  shared.element = dtype;
  for (int64_t d : shape)
    if (d <= 0) {
      fail(loc, "shared buffer dimensions must be positive, got " + shapeText(shape));
      return shared;
    }
  if (shape.empty() || bitWidth(dtype) < 8) {
    fail(loc, "shared buffers need rank >= 1 and elements of at least 8 bits");
    return shared;
  }
  auto type = wavetile::tile::SharedType::get(shape, typeOf(dtype));
  shared.handle = wavetile::tile::SharedAllocOp::create(b(), locOf(loc), type).getResult().getAsOpaquePointer();
  return shared;
}

void wavetile::dsl::sharedStore(Shared dest, Operand value, SourceLoc loc) {
  if (!dest.handle)
    return;
  Value v = storedValue(value, dest.element, dest.shape(), loc);
  if (v.valid())
    wavetile::tile::SharedStoreOp::create(b(), locOf(loc), unwrap(v), mlir::Value::getFromOpaquePointer(dest.handle));
}

Value wavetile::dsl::sharedLoad(Shared source, SourceLoc loc) {
  if (!source.handle)
    return Value();
  auto type = mlir::RankedTensorType::get(source.shape(), typeOf(source.element));
  return wrap(wavetile::tile::SharedLoadOp::create(b(), locOf(loc), type, mlir::Value::getFromOpaquePointer(source.handle)));
}

Shared wavetile::dsl::sharedSlice(Shared source, Operand index, SourceLoc loc) {
  Shared slice;
  slice.element = source.element;
  if (!source.handle)
    return slice;
  Shape shape = source.shape();
  Value i = resolve(index, DType::i32);
  if (!i.valid())
    return slice;
  if (shape.size() < 2 || i.isTile() || i.dtype() != DType::i32) {
    fail(loc, "sharedSlice needs a buffer of rank >= 2 and an i32 scalar index");
    return slice;
  }
  auto sourceValue = mlir::Value::getFromOpaquePointer(source.handle);
  auto type = mlir::cast<wavetile::tile::SharedType>(sourceValue.getType()).entryType();
  slice.handle = wavetile::tile::SharedSliceOp::create(b(), locOf(loc), type, sourceValue, unwrap(i))
                     .getResult()
                     .getAsOpaquePointer();
  return slice;
}

Value wavetile::dsl::asyncCopy(Pointer ptr, Operand offsets, Shared dest, std::optional<Operand> mask, SourceLoc loc) {
  if (!dest.handle)
    return Value();
  Value o = offsetTile(offsets, loc);
  if (!o.valid())
    return o;
  if (o.shape() != dest.shape())
    return fail(loc, "asyncCopy offsets " + shapeText(o.shape()) + " must match the shared buffer " +
                         shapeText(dest.shape()));
  if (ptr.element != dest.element)
    return fail(loc, std::string("asyncCopy from ") + dtypeName(ptr.element) + " memory into a " +
                         dtypeName(dest.element) + " shared buffer");
  bool ok = true;
  mlir::Value m = maskValue(mask, o.shape(), loc, ok);
  if (!ok)
    return Value();
  auto token = wavetile::tile::AsyncTokenType::get(state().context);
  return wrap(wavetile::tile::AsyncCopyOp::create(b(), locOf(loc), token, mlir::Value::getFromOpaquePointer(ptr.handle),
                                                  unwrap(o), mlir::Value::getFromOpaquePointer(dest.handle), m));
}

void wavetile::dsl::asyncWait(const std::vector<Value> &tokens, int pending, SourceLoc loc) {
  llvm::SmallVector<mlir::Value> values;
  for (const Value &t : tokens)
    if (t.valid())
      values.push_back(unwrap(t));
  wavetile::tile::AsyncWaitOp::create(b(), locOf(loc), values, pending);
}

void wavetile::dsl::barrier(SourceLoc loc) { wavetile::tile::BarrierOp::create(b(), locOf(loc)); }
void wavetile::dsl::releaseFence(SourceLoc loc) {
  wavetile::tile::FenceOp::create(b(), locOf(loc), wavetile::tile::FenceOrdering::release);
}
void wavetile::dsl::acquireFence(SourceLoc loc) {
  wavetile::tile::FenceOp::create(b(), locOf(loc), wavetile::tile::FenceOrdering::acquire);
}

//===----------------------------------------------------------------------===//
// Matrix products and formats
//===----------------------------------------------------------------------===//

static bool require2D(const Value &v, const SourceLoc &loc, const char *what) {
  if (!v.valid())
    return false;
  if (v.shape().size() != 2) {
    fail(loc, std::string(what) + " must be a 2-D tile, got " + shapeText(v.shape()));
    return false;
  }
  return true;
}

Value wavetile::dsl::dot(Operand a, Operand b_, Operand acc, std::string atom, SourceLoc loc) {
  Value va = resolve(a, std::nullopt), vb = resolve(b_, std::nullopt), vc = resolve(acc, std::nullopt);
  if (!require2D(va, loc, "dot operand a") || !require2D(vb, loc, "dot operand b") ||
      !require2D(vc, loc, "dot accumulator"))
    return Value();
  auto op = wavetile::tile::DotOp::create(b(), locOf(loc), unwrap(vc).getType(), unwrap(va), unwrap(vb), unwrap(vc),
                                          atom.empty() ? mlir::StringAttr() : b().getStringAttr(atom));
  return wrap(op);
}

Value wavetile::dsl::scaledDot(Operand a, Operand aScale, Operand b_, Operand bScale, Operand acc, SourceLoc loc) {
  Value va = resolve(a, std::nullopt), vsa = resolve(aScale, std::nullopt), vb = resolve(b_, std::nullopt),
        vsb = resolve(bScale, std::nullopt), vc = resolve(acc, std::nullopt);
  if (!require2D(va, loc, "scaledDot operand a") || !require2D(vsa, loc, "scaledDot a scale") ||
      !require2D(vb, loc, "scaledDot operand b") || !require2D(vsb, loc, "scaledDot b scale") ||
      !require2D(vc, loc, "scaledDot accumulator"))
    return Value();
  return wrap(wavetile::tile::ScaledDotOp::create(b(), locOf(loc), unwrap(vc).getType(), unwrap(va), unwrap(vsa),
                                                  unwrap(vb), unwrap(vsb), unwrap(vc), mlir::StringAttr()));
}

Value wavetile::dsl::packFp4(Operand x, SourceLoc loc) {
  Value v = resolve(x, std::nullopt);
  if (!requireTile(v, loc, "packFp4"))
    return Value();
  Shape s = v.shape();
  if (v.dtype() != DType::f4E2M1FN || s.back() % 2 != 0)
    return fail(loc, "packFp4 needs an f4E2M1FN tile with an even last dimension");
  s.back() /= 2;
  auto type = mlir::RankedTensorType::get(s, b().getI8Type());
  return wrap(wavetile::tile::PackFp4Op::create(b(), locOf(loc), type, unwrap(v)));
}

Value wavetile::dsl::unpackFp4(Operand x, SourceLoc loc) {
  Value v = resolve(x, std::nullopt);
  if (!requireTile(v, loc, "unpackFp4"))
    return Value();
  if (v.dtype() != DType::i8)
    return fail(loc, std::string("unpackFp4 needs an i8 tile, got ") + dtypeName(v.dtype()));
  Shape s = v.shape();
  s.back() *= 2;
  auto type = mlir::RankedTensorType::get(s, typeOf(DType::f4E2M1FN));
  return wrap(wavetile::tile::UnpackFp4Op::create(b(), locOf(loc), type, unwrap(v)));
}

Value wavetile::dsl::lookupNibbles(Operand bytes, const std::array<int8_t, 16> &table, SourceLoc loc) {
  Value v = resolve(bytes, std::nullopt);
  if (!requireTile(v, loc, "lookupNibbles"))
    return Value();
  if (v.dtype() != DType::i8)
    return fail(loc, std::string("lookupNibbles needs an i8 tile, got ") + dtypeName(v.dtype()));
  auto type = mlir::RankedTensorType::get(v.shape(), b().getI16Type());
  return wrap(wavetile::tile::LookupNibblesOp::create(b(), locOf(loc), type, unwrap(v), table));
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

/// Checks `produced` against the types `expected`; on mismatch reports and falls back.
static llvm::SmallVector<mlir::Value> checkedYield(const std::vector<Value> &produced, mlir::TypeRange expected,
                                                   mlir::ValueRange fallback, const SourceLoc &loc, const char *what) {
  llvm::SmallVector<mlir::Value> values(fallback.begin(), fallback.end());
  if (produced.size() != expected.size()) {
    fail(loc, std::string(what) + " must produce " + std::to_string(expected.size()) + " values, got " +
                  std::to_string(produced.size()));
    return values;
  }
  for (size_t i = 0; i < produced.size(); ++i) {
    if (!produced[i].valid())
      continue;
    mlir::Value v = unwrap(produced[i]);
    if (v.getType() != expected[i]) {
      std::string want, got;
      llvm::raw_string_ostream(want) << expected[i];
      llvm::raw_string_ostream(got) << v.getType();
      fail(loc, std::string(what) + " value " + std::to_string(i) + " changes type from " + want + " to " + got);
      continue;
    }
    values[i] = v;
  }
  return values;
}

std::vector<Value> wavetile::dsl::forRange(Operand lo, Operand hi, Operand step, const std::vector<Value> &carried,
                                           const LoopBody &body, SourceLoc loc) {
  std::vector<Value> bounds{resolve(lo, DType::i32), resolve(hi, DType::i32), resolve(step, DType::i32)};
  for (const Value &v : bounds)
    if (!v.valid())
      return carried;
  for (const Value &v : bounds)
    if (v.isTile() || v.dtype() != bounds[0].dtype() || isFloat(v.dtype()))
      return fail(loc, "forRange bounds must be integer scalars of one dtype"), carried;
  llvm::SmallVector<mlir::Value> init;
  for (const Value &v : carried) {
    if (!v.valid())
      return carried;
    init.push_back(unwrap(v));
  }
  mlir::Location l = locOf(loc);
  auto loop = mlir::scf::ForOp::create(b(), l, unwrap(bounds[0]), unwrap(bounds[1]), unwrap(bounds[2]), init);
  {
    OpBuilder::InsertionGuard guard(b());
    b().setInsertionPointToStart(loop.getBody());
    std::vector<Value> args;
    for (mlir::Value arg : loop.getRegionIterArgs())
      args.push_back(wrap(arg));
    std::vector<Value> next = body(wrap(loop.getInductionVar()), args);
    auto yielded = checkedYield(next, mlir::ValueRange(loop.getRegionIterArgs()).getTypes(), loop.getRegionIterArgs(), loc,
                                "the loop body");
    // A loop without carried values comes with an implicit terminator; ours replaces it.
    if (!loop.getBody()->empty() && loop.getBody()->back().hasTrait<mlir::OpTrait::IsTerminator>())
      loop.getBody()->back().erase();
    b().setInsertionPointToEnd(loop.getBody());
    mlir::scf::YieldOp::create(b(), l, yielded);
  }
  std::vector<Value> results;
  for (mlir::Value r : loop.getResults())
    results.push_back(wrap(r));
  return results;
}

static Value scalarCondition(const Operand &condition, const SourceLoc &loc) {
  Value c = resolve(condition, DType::i1);
  if (c.valid() && (c.isTile() || c.dtype() != DType::i1))
    return fail(loc, "a branch condition must be an i1 scalar");
  return c;
}

std::vector<Value> wavetile::dsl::whileLoop(const std::vector<Value> &carried, const WhileCondition &condition,
                                            const WhileBody &body, SourceLoc loc) {
  llvm::SmallVector<mlir::Value> init;
  llvm::SmallVector<mlir::Type> types;
  llvm::SmallVector<mlir::Location> locs;
  for (const Value &v : carried) {
    if (!v.valid())
      return carried;
    init.push_back(unwrap(v));
    types.push_back(unwrap(v).getType());
  }
  mlir::Location l = locOf(loc);
  locs.assign(types.size(), l);
  auto loop = mlir::scf::WhileOp::create(b(), l, types, init);
  OpBuilder::InsertionGuard guard(b());
  auto argsOf = [](mlir::Block *block) {
    std::vector<Value> args;
    for (mlir::Value arg : block->getArguments())
      args.push_back(wrap(arg));
    return args;
  };
  // Before: evaluate the condition on the carried values and pass them on unchanged.
  mlir::Block *before = b().createBlock(&loop.getBefore(), {}, types, locs);
  Value c = scalarCondition(condition(argsOf(before)), loc);
  b().setInsertionPointToEnd(before);
  if (!c.valid()) // keep the IR whole; the failure is already reported
    c = wrap(mlir::arith::ConstantIntOp::create(b(), l, 0, 1));
  mlir::scf::ConditionOp::create(b(), l, unwrap(c), before->getArguments());
  // After: the body, yielding the next carried values.
  mlir::Block *after = b().createBlock(&loop.getAfter(), {}, types, locs);
  std::vector<Value> next = body(argsOf(after));
  auto yielded = checkedYield(next, mlir::TypeRange(types), after->getArguments(), loc, "the while body");
  b().setInsertionPointToEnd(after);
  mlir::scf::YieldOp::create(b(), l, yielded);
  std::vector<Value> results;
  for (mlir::Value r : loop.getResults())
    results.push_back(wrap(r));
  return results;
}

void wavetile::dsl::ifThen(Operand condition, const std::function<void()> &then, SourceLoc loc) {
  Value c = scalarCondition(condition, loc);
  if (!c.valid())
    return;
  auto ifOp = mlir::scf::IfOp::create(b(), locOf(loc), unwrap(c), /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b());
  b().setInsertionPoint(ifOp.thenBlock()->getTerminator());
  then();
}

std::vector<Value> wavetile::dsl::ifThenElse(Operand condition, const std::function<std::vector<Value>()> &then,
                                             const std::function<std::vector<Value>()> &otherwise, SourceLoc loc) {
  Value c = scalarCondition(condition, loc);
  if (!c.valid())
    return {};
  mlir::Location l = locOf(loc);
  // Build the then branch first to learn the result types, then the else branch against them.
  auto ifOp = mlir::scf::IfOp::create(b(), l, mlir::TypeRange{}, unwrap(c), /*withElseRegion=*/true);
  llvm::SmallVector<mlir::Value> thenValues;
  {
    OpBuilder::InsertionGuard guard(b());
    b().setInsertionPointToStart(ifOp.thenBlock());
    for (const Value &v : then())
      if (v.valid())
        thenValues.push_back(unwrap(v));
  }
  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value v : thenValues)
    types.push_back(v.getType());
  auto typed = mlir::scf::IfOp::create(b(), l, types, unwrap(c), /*withElseRegion=*/true);
  // The probe's then-block ends in an implicit empty yield; the typed yield replaces it.
  if (mlir::Operation *terminator = ifOp.thenBlock()->getTerminator())
    terminator->erase();
  typed.getThenRegion().takeBody(ifOp.getThenRegion());
  ifOp.erase();
  {
    OpBuilder::InsertionGuard guard(b());
    b().setInsertionPointToEnd(typed.thenBlock());
    mlir::scf::YieldOp::create(b(), l, thenValues);
    b().setInsertionPointToStart(typed.elseBlock());
    std::vector<Value> elseValues = otherwise();
    auto yielded = checkedYield(elseValues, types, thenValues, loc, "the else branch");
    b().setInsertionPointToEnd(typed.elseBlock());
    mlir::scf::YieldOp::create(b(), l, yielded);
  }
  std::vector<Value> results;
  for (mlir::Value r : typed.getResults())
    results.push_back(wrap(r));
  return results;
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

static std::string joined(const std::vector<unsigned> &values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text;
}

Layout Layout::blocked(std::vector<unsigned> sizePerThread, std::vector<unsigned> threadsPerWarp,
                       std::vector<unsigned> warpsPerBlock, std::vector<unsigned> order) {
  return {"#tile.blocked<sizePerThread = [" + joined(sizePerThread) + "], threadsPerWarp = [" +
          joined(threadsPerWarp) + "], warpsPerBlock = [" + joined(warpsPerBlock) + "], order = [" + joined(order) +
          "]>"};
}
Layout Layout::mma(const std::string &atom, std::vector<unsigned> warpsPerBlock) {
  return {"#tile.mma<atom = \"" + atom + "\", warpsPerBlock = [" + joined(warpsPerBlock) + "]>"};
}
Layout Layout::dotOperand(unsigned operandIndex, const Layout &parent) {
  return {"#tile.dot_operand<operand = " + std::to_string(operandIndex) + ", parent = " + parent.text + ">"};
}
Layout Layout::linear(const std::string &map) { return {"#tile.linear<\"" + map + "\">"}; }

Value wavetile::dsl::withLayout(Operand x, const Layout &layout, SourceLoc loc) {
  Value v = resolve(x, std::nullopt);
  if (!requireTile(v, loc, "withLayout"))
    return Value();
  mlir::Location l = locOf(loc);
  mlir::Attribute encoding = mlir::parseAttribute(layout.text, state().context);
  if (!encoding)
    return fail(loc, "invalid layout " + layout.text);
  auto tensor = mlir::cast<mlir::RankedTensorType>(unwrap(v).getType());
  auto type = mlir::RankedTensorType::getChecked([&] { return mlir::emitError(l); }, tensor.getShape(),
                                                 tensor.getElementType(), encoding);
  if (!type) {
    state().failed = true;
    return Value();
  }
  return wrap(wavetile::tile::ConvertLayoutOp::create(b(), l, type, unwrap(v)));
}

//===----------------------------------------------------------------------===//
// Kernels and modules
//===----------------------------------------------------------------------===//

ModuleBuilder::ModuleBuilder() : state_(std::make_unique<State>()) {
  state_->module->module = mlir::ModuleOp::create(mlir::UnknownLoc::get(state_->context));
}

ModuleBuilder::~ModuleBuilder() {
  if (current == state_.get())
    current = nullptr;
}

KernelBuilder ModuleBuilder::kernel(const std::string &name, KernelOptions options, SourceLoc loc) {
  State &s = *state_;
  if (current)
    fprintf(stderr, "%s:%u: wavetile::dsl: a kernel is already open on this thread\n", loc.file_name(), loc.line()),
        abort();
  current = &s;
  mlir::Location l = locOf(loc);
  s.builder.setInsertionPointToEnd(s.module->module->getBody());
  s.kernel = mlir::func::FuncOp::create(s.builder, l, name, s.builder.getFunctionType({}, {}));
  s.kernel->setAttr(wavetile::tile::TileDialect::kKernelAttrName, s.builder.getUnitAttr());
  s.kernel->setAttr(wavetile::tile::TileDialect::kNumWarpsAttrName, s.builder.getI32IntegerAttr(options.numWarps));
  if (options.numWarps <= 0 || (options.numWarps & (options.numWarps - 1)))
    fail(loc, "numWarps must be a positive power of two, got " + std::to_string(options.numWarps));
  if (options.numStages < 1)
    fail(loc, "numStages must be at least 1, got " + std::to_string(options.numStages));
  else if (options.numStages > 1)
    s.kernel->setAttr(wavetile::tile::TileDialect::kNumStagesAttrName,
                      s.builder.getI32IntegerAttr(options.numStages));
  if (!options.narrowRoundedSums)
    s.kernel->setAttr(wavetile::tile::TileDialect::kWideRoundedSumsAttrName, s.builder.getUnitAttr());
  s.builder.setInsertionPointToStart(s.kernel.addEntryBlock());
  return KernelBuilder(this);
}

KernelBuilder::KernelBuilder(KernelBuilder &&other) noexcept : owner(other.owner) { other.owner = nullptr; }

KernelBuilder::~KernelBuilder() {
  if (!owner)
    return;
  ModuleBuilder::State &s = owner->state();
  s.builder.setInsertionPointToEnd(&s.kernel.getBody().front());
  mlir::func::ReturnOp::create(s.builder, s.kernel.getLoc());
  current = nullptr;
}

static mlir::BlockArgument addArgument(ModuleBuilder::State &s, const std::string &name, mlir::Type type,
                                       const SourceLoc &loc) {
  unsigned index = s.kernel.getNumArguments();
  mlir::Location l = locOf(loc);
  if (mlir::failed(s.kernel.insertArgument(index, type, s.builder.getDictionaryAttr({}), l)))
    abort();
  s.kernel.setArgAttr(index, "tile.name", s.builder.getStringAttr(name));
  return s.kernel.getArgument(index);
}

Pointer KernelBuilder::pointer(const std::string &name, DType element, Reach reach, SourceLoc loc) {
  Pointer p;
  p.element = element;
  if (bitWidth(element) < 8) {
    fail(loc, "pointer '" + name + "' to " + dtypeName(element) +
                  ": sub-byte formats live in memory packed in i8 (see packFp4)");
    return p;
  }
  auto type = wavetile::tile::PtrType::get(owner->state().context, typeOf(element));
  mlir::BlockArgument arg = addArgument(owner->state(), name, type, loc);
  if (reach == Reach::within2GiB)
    owner->state().kernel.setArgAttr(arg.getArgNumber(), wavetile::tile::TileDialect::kWithin2GiBAttrName,
                                     owner->state().builder.getUnitAttr());
  p.handle = arg.getAsOpaquePointer();
  return p;
}

/// Records tile.divisibility on the kernel argument behind `value`.
static void assumeDivisibility(ModuleBuilder::State &s, mlir::Value value, int64_t divisor, const char *what,
                               const SourceLoc &loc) {
  auto arg = mlir::dyn_cast_or_null<mlir::BlockArgument>(value);
  if (!arg || arg.getOwner() != &s.kernel.getBody().front()) {
    fail(loc, std::string(what) + " applies to the kernel's own arguments");
    return;
  }
  if (divisor < 1 || (divisor & (divisor - 1))) {
    fail(loc, std::string(what) + " needs a power of two, got " + std::to_string(divisor));
    return;
  }
  s.kernel.setArgAttr(arg.getArgNumber(), wavetile::tile::TileDialect::kDivisibilityAttrName,
                      s.builder.getI64IntegerAttr(divisor));
}

void KernelBuilder::assumeAligned(Pointer pointer, int64_t bytes, SourceLoc loc) {
  assumeDivisibility(owner->state(), mlir::Value::getFromOpaquePointer(pointer.handle), bytes, "assumeAligned", loc);
}

void KernelBuilder::assumeDivisible(Value integerArgument, int64_t divisor, SourceLoc loc) {
  mlir::Value v = unwrap(integerArgument);
  if (v && !v.getType().isSignlessInteger()) {
    fail(loc, "assumeDivisible applies to integer arguments");
    return;
  }
  assumeDivisibility(owner->state(), v, divisor, "assumeDivisible", loc);
}

Value KernelBuilder::scalar(const std::string &name, DType dtype, SourceLoc loc) {
  if (dtype != DType::i32 && dtype != DType::i64 && dtype != DType::f32 && dtype != DType::f64)
    return fail(loc, "scalar argument '" + name + "' must be i32, i64, f32 or f64, got " + dtypeName(dtype));
  return wrap(addArgument(owner->state(), name, typeOf(dtype), loc));
}

Tensor KernelBuilder::tensor(const std::string &name, DType element, const std::vector<Dim> &dims, bool contiguous,
                             Reach reach, SourceLoc loc) {
  Tensor t;
  t.name = name;
  t.pointer = pointer(name, element, reach, loc);
  if (dims.empty()) {
    fail(loc, "tensor '" + name + "' needs at least one dimension");
    return t;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].isDynamic())
      t.sizes.push_back(scalar(name + "_size" + std::to_string(d), DType::i32, loc));
    else if (dims[d].isImplicit())
      t.sizes.push_back(Value());
    else if (dims[d].size <= 0 || dims[d].size > INT32_MAX)
      t.sizes.push_back(fail(loc, "tensor '" + name + "' has a static size out of [1, 2^31)"));
    else
      t.sizes.push_back(constant(double(dims[d].size), DType::i32, loc));
  }
  t.strides.resize(dims.size());
  t.strides.back() = constant(1, DType::i32, loc);
  for (int d = int(dims.size()) - 2; d >= 0; --d) {
    if (contiguous && dims[d + 1].isImplicit())
      t.strides[d] = fail(loc, "tensor '" + name + "' is contiguous, so only its first dimension may be implicit " +
                                   "(the strides of the others are products of later sizes)");
    else
      t.strides[d] = contiguous ? Operand(t.strides[d + 1], loc) * Operand(t.sizes[d + 1], loc)
                                : scalar(name + "_stride" + std::to_string(d), DType::i32, loc);
  }
  return t;
}

Value Tensor::size(int d, SourceLoc loc) const {
  if (!sizes.at(d).valid() && pointer.handle)
    return fail(loc, "dimension " + std::to_string(d) + " of tensor '" + name +
                         "' is implicit (Dim::implicit): the kernel has no argument for its size");
  return sizes[d];
}

int64_t KernelBuilder::param(const std::string &name, int64_t value) {
  mlir::func::FuncOp kernel = owner->state().kernel;
  mlir::NamedAttrList params;
  if (auto existing = kernel->getAttrOfType<mlir::DictionaryAttr>("tile.params"))
    params.append(existing.getValue());
  params.set(name, owner->state().builder.getI64IntegerAttr(value));
  kernel->setAttr("tile.params", params.getDictionary(owner->state().context));
  return value;
}

std::unique_ptr<Module> ModuleBuilder::finish(std::string *errors) {
  State &s = *state_;
  if (current == &s)
    fail(std::source_location::current(), "finish() called while a kernel is still open");
  bool ok = !s.failed && mlir::succeeded(mlir::verify(*s.module->module));
  std::string text = s.diagnostics->take();
  s.diagnostics.reset();
  if (!ok) {
    if (errors)
      *errors = text.empty() ? "kernel construction failed" : text;
    return nullptr;
  }
  return std::make_unique<Module>(std::move(s.module));
}
