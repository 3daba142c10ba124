//===- Checks.h - argument checks every library op shares -------*- C++ -*-===//
//
// Ops refuse bad tensors before anything compiles or runs, naming the op, the argument
// and what is wrong with it.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_LIB_KERNELS_CHECKS_H
#define WAVETILE_LIB_KERNELS_CHECKS_H

#include "wavetile/ops/OpRuntime.h"

#include <initializer_list>
#include <string>

namespace wavetile::ops {

inline constexpr std::initializer_list<DType> kNormDTypes = {DType::f32, DType::f16, DType::bf16};

/// Whether every tensor starts 16-byte aligned and its strides (all but the last) are
/// multiples of 16 bytes (what lets kernels drop run-time alignment checks; part of a
/// specialization).
bool vectorAligned(const std::vector<const TensorRef *> &tensors);

/// Whether every tensor is row-major without gaps (TensorRef::isContiguous): kernels may then
/// fix its strides at compile time (a packed specialization).
bool contiguous(const std::vector<const TensorRef *> &tensors);

/// Whether every tensor lies within 2 GiB of its start: kernels may then address it through
/// AMD buffer resources (Reach::within2GiB; part of a specialization).
bool within2GiB(const std::vector<const TensorRef *> &tensors);

/// Whether a 2-D tensor of more than one row and column has unit stride along its rows: scales
/// stored K-block-major, which kernels read as their transpose.
bool kBlockMajor(const TensorRef &t);
/// The transpose of a 2-D tensor: the same memory, shape and strides swapped.
TensorRef transposed(const TensorRef &t);

/// A shape or strides as errors print them: [4, 8].
std::string shapeText(const std::vector<int64_t> &shape);

class ArgumentChecker {
public:
  ArgumentChecker(std::string_view op, std::string *error) : op_(op), error_(error) {}

  /// A matrix of rows [M, N] with unit stride along rows, in one of `dtypes`.
  bool rows(const char *name, const TensorRef &t, std::initializer_list<DType> dtypes) const;
  /// Of rank `rank` in one of `dtypes`, unit stride along its last dimension.
  bool strided(const char *name, const TensorRef &t, std::initializer_list<DType> dtypes, int64_t rank) const;
  /// Of `dtype` and `shape` (an output the op's inputs determine), unit stride along rows.
  bool shaped(const char *name, const TensorRef &t, DType dtype, const std::vector<int64_t> &shape) const;
  /// Same dtype and shape as `like`, unit stride along rows.
  bool sameAs(const char *name, const TensorRef &t, const TensorRef &like) const;
  /// A contiguous vector of `n` elements of `dtype`.
  bool vector(const char *name, const TensorRef &t, DType dtype, int64_t n) const;
  /// One element of `dtype`: shape [] or [1].
  bool single(const char *name, const TensorRef &t, DType dtype) const;
  /// 0 or 1.
  bool flag(const char *name, int value) const;
  /// A finite number >= 0 (a norm's epsilon: a negative or NaN one makes rows NaN silently).
  bool nonNegative(const char *name, float value) const;
  /// An output, after its shape check: writable, each element at its own address.
  bool written(const char *name, const TensorRef &t) const;

private:
  bool fail(const char *name, const std::string &problem) const;
  bool addressable(const char *name, const TensorRef &t) const;
  std::string op_;
  std::string *error_;
};

} // namespace wavetile::ops

#endif
