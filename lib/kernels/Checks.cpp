//===- Checks.cpp - argument checks every library op shares ---------------===//

#include "Checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

using namespace wavetile;
using namespace wavetile::ops;
using dsl::bitWidth;
using dsl::dtypeName;

bool wavetile::ops::kBlockMajor(const TensorRef &t) {
  return t.rank() == 2 && t.shape[0] > 1 && t.shape[1] > 1 && t.strides[0] == 1;
}

TensorRef wavetile::ops::transposed(const TensorRef &t) {
  TensorRef result = t;
  result.shape = {t.shape[1], t.shape[0]};
  result.strides = {t.strides[1], t.strides[0]};
  return result;
}

std::string wavetile::ops::shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

bool ArgumentChecker::fail(const char *name, const std::string &problem) const {
  return opError(error_, op_, std::string("'") + name + "' " + problem);
}

/// Kernels address tensors with 32-bit element offsets: each must span fewer than 2^31
/// elements from its start, with non-negative strides.
bool ArgumentChecker::addressable(const char *name, const TensorRef &t) const {
  if (t.strides.size() != t.shape.size())
    return fail(name, "has " + std::to_string(t.shape.size()) + " sizes but " + std::to_string(t.strides.size()) +
                          " strides");
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] < 0 || t.strides[d] < 0)
      return fail(name, "has a negative size or stride (shape " + shapeText(t.shape) + ", strides " +
                            shapeText(t.strides) + ")");
  if (t.extentElements() > uint64_t(INT32_MAX))
    return fail(name, "spans " + std::to_string(t.extentElements()) +
                          " elements; library ops take tensors of fewer than 2^31 elements");
  if (!t.data && t.numel() > 0)
    return fail(name, "has no data pointer");
  // GPUs fault on misaligned loads and stores (and a fault ends the context).
  const int64_t bytes = std::max(1, bitWidth(t.dtype) / 8);
  if (reinterpret_cast<uintptr_t>(t.data) % bytes)
    return fail(name, "starts at an address that is not a multiple of its " + std::to_string(bytes) +
                          "-byte elements");
  return true;
}

bool ArgumentChecker::rows(const char *name, const TensorRef &t, std::initializer_list<DType> dtypes) const {
  if (t.rank() != 2 && std::find(dtypes.begin(), dtypes.end(), t.dtype) != dtypes.end())
    return fail(name, "must be 2-D [rows, hidden], got shape " + shapeText(t.shape));
  if (!strided(name, t, dtypes, 2))
    return false;
  if (t.shape[1] < 1)
    return fail(name, "has no columns (shape " + shapeText(t.shape) + ")");
  return true;
}

bool ArgumentChecker::strided(const char *name, const TensorRef &t, std::initializer_list<DType> dtypes,
                               int64_t rank) const {
  if (std::find(dtypes.begin(), dtypes.end(), t.dtype) == dtypes.end()) {
    std::string allowed;
    for (DType d : dtypes)
      allowed += std::string(allowed.empty() ? "" : ", ") + dtypeName(d);
    return fail(name, std::string("has dtype ") + dtypeName(t.dtype) + "; expected one of " + allowed);
  }
  if (t.rank() != rank)
    return fail(name, "must be " + std::to_string(rank) + "-D, got shape " + shapeText(t.shape));
  if (t.shape.back() > 1 && t.strides.back() != 1)
    return fail(name, "must have unit stride along its last dimension, got strides " + shapeText(t.strides));
  return addressable(name, t);
}

bool ArgumentChecker::sameAs(const char *name, const TensorRef &t, const TensorRef &like) const {
  if (t.dtype != like.dtype)
    return fail(name, std::string("has dtype ") + dtypeName(t.dtype) + " but input has " + dtypeName(like.dtype));
  if (t.shape != like.shape)
    return fail(name, "has shape " + shapeText(t.shape) + " but input has " + shapeText(like.shape));
  if (t.shape.size() > 1 && t.shape.back() > 1 && t.strides.back() != 1)
    return fail(name, "must have unit stride along its last dimension, got strides " + shapeText(t.strides));
  return addressable(name, t);
}

bool ArgumentChecker::shaped(const char *name, const TensorRef &t, DType dtype,
                             const std::vector<int64_t> &shape) const {
  if (t.dtype != dtype)
    return fail(name, std::string("has dtype ") + dtypeName(t.dtype) + "; expected " + dtypeName(dtype));
  if (t.shape != shape)
    return fail(name, "has shape " + shapeText(t.shape) + "; expected " + shapeText(shape));
  if (t.shape.size() > 1 && t.shape.back() > 1 && t.strides.back() != 1)
    return fail(name, "must have unit stride along its last dimension, got strides " + shapeText(t.strides));
  return addressable(name, t);
}

bool ArgumentChecker::vector(const char *name, const TensorRef &t, DType dtype, int64_t n) const {
  if (t.dtype != dtype)
    return fail(name, std::string("has dtype ") + dtypeName(t.dtype) + " but input has " + dtypeName(dtype));
  if (t.rank() != 1 || t.shape[0] != n)
    return fail(name, "must have shape [" + std::to_string(n) + "], got " + shapeText(t.shape));
  if (n > 1 && t.strides[0] != 1)
    return fail(name, "must be contiguous, got stride " + std::to_string(t.strides[0]));
  return addressable(name, t);
}

bool ArgumentChecker::single(const char *name, const TensorRef &t, DType dtype) const {
  if (t.dtype != dtype)
    return fail(name, std::string("has dtype ") + dtypeName(t.dtype) + "; it must be " + dtypeName(dtype));
  if (t.rank() > 1 || t.numel() != 1)
    return fail(name, "must hold one element (shape [] or [1]), got " + shapeText(t.shape));
  return addressable(name, t);
}

bool ArgumentChecker::flag(const char *name, int value) const {
  if (value == 0 || value == 1)
    return true;
  return fail(name, "must be 0 or 1, got " + std::to_string(value));
}

bool ArgumentChecker::nonNegative(const char *name, float value) const {
  if (value >= 0.f && std::isfinite(value))
    return true;
  std::ostringstream text;
  text << value;
  return fail(name, "must be finite and >= 0, got " + text.str());
}

bool ArgumentChecker::written(const char *name, const TensorRef &t) const {
  if (t.readOnly)
    return fail(name, "is read-only; the op writes it");
  if (t.numel() == 0)
    return true;
  // Dimensions by stride: each must step past all the smaller strides reach, or two elements
  // share an address and the threads writing them race.
  std::vector<std::pair<int64_t, int64_t>> steps; // stride, size
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1)
      steps.emplace_back(t.strides[d], t.shape[d]);
  std::sort(steps.begin(), steps.end());
  int64_t reach = 0;
  for (auto [stride, size] : steps) {
    if (stride <= reach)
      return fail(name, "has elements that share memory (shape " + shapeText(t.shape) + ", strides " +
                            shapeText(t.strides) + "); an output needs each element at its own address");
    reach += (size - 1) * stride;
  }
  return true;
}

bool wavetile::ops::within2GiB(const std::vector<const TensorRef *> &tensors) {
  return std::all_of(tensors.begin(), tensors.end(),
                     [](const TensorRef *t) { return t->extentBytes() <= uint64_t(INT32_MAX); });
}

bool wavetile::ops::contiguous(const std::vector<const TensorRef *> &tensors) {
  return std::all_of(tensors.begin(), tensors.end(), [](const TensorRef *t) { return t->isContiguous(); });
}

bool wavetile::ops::vectorAligned(const std::vector<const TensorRef *> &tensors) {
  for (const TensorRef *t : tensors) {
    int64_t bytes = std::max(1, bitWidth(t->dtype) / 8); // packed fp4 (two per byte) counts bytes
    if (reinterpret_cast<uintptr_t>(t->data) % 16)
      return false;
    for (int64_t d = 0; d + 1 < t->rank(); ++d)
      if ((t->strides[d] * bytes) % 16)
        return false;
  }
  return true;
}
