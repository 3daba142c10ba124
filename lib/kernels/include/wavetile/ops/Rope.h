//===- Rope.h - rotary position embedding with AITER's names ----*- C++ -*-===//
//
// `input` [S, B, H, D] (sbhd, f32 / f16 / bf16, unit stride along D) is rotated with cached
// cos and sin tables ([P, 1, 1, F] or [P, F], f32 / f16 / bf16) into `out` of its shape and
// dtype (out may be input: in place). The rotary dimension is R = F, or 2F when
// `reuseFreqsFrontPart` (the tables hold half of it: NeoX repeats them, GPT-J interleaves);
// it covers the first R columns, or the last R when `nopeFirst`; the other D - R columns are
// copied. With x the rotary part, in f32 and rounded once to the dtype:
//   out = x * cos[p, f(i)] + rotate(x)[i] * sin[p, f(i)]
// NeoX: rotate(x) = [-x2, x1] over the two halves; GPT-J: over (even, odd) pairs. The table
// row p is s (rope_cached_fwd), positions[s, b] (..._positions_...), or positions[s, b] +
// offsets[s, b] (..._positions_offsets_...); positions and offsets are i32 or i64 [S, B].
// The _2c_ forms rotate two tensors (queries and keys: [S, B, Hx, D] and [S, B, Hy, D])
// with the same tables in one launch.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_ROPE_H
#define WAVETILE_OPS_ROPE_H

#include "wavetile/ops/OpRuntime.h"

#include <optional>

namespace wavetile::ops {

/// AITER's rotate_style: 0 NeoX (halves), 1 GPT-J (interleaved pairs).
enum class RotateStyle { NeoX = 0, GptJ = 1 };

struct RopeOptions {
  RotateStyle style = RotateStyle::NeoX;
  bool reuseFreqsFrontPart = false, nopeFirst = false;
};

bool rope_cached_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &cos,
                     const TensorRef &sin, const RopeOptions &options, std::string *error);
bool rope_cached_positions_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &cos,
                               const TensorRef &sin, const TensorRef &positions, const RopeOptions &options,
                               std::string *error);
bool rope_cached_positions_offsets_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                       const TensorRef &cos, const TensorRef &sin, const TensorRef &positions,
                                       const TensorRef &offsets, const RopeOptions &options, std::string *error);
/// Queries and keys together; `offsets` may be null.
bool rope_cached_positions_2c_fwd(OpRuntime &rt, const TensorRef &outX, const TensorRef &outY, const TensorRef &x,
                                  const TensorRef &y, const TensorRef &cos, const TensorRef &sin,
                                  const TensorRef &positions, const TensorRef *offsets, const RopeOptions &options,
                                  std::string *error);

/// The generated kernel, for tools and tests.
struct RopeSpec {
  DType dtype, tableDType;
  int64_t heads, headDim, tableDim; // H, D, F
  int64_t secondHeads = 0;          // the _2c_ forms' second tensor (0: none)
  RopeOptions options;
  std::optional<DType> positions; // i32 or i64 positions index the tables
  bool offsets = false;
  int64_t warpSize = 32;
  bool vectorAligned = false, within2GiB = true;
  /// Each thread holds 64 bytes of a chunk instead of 32: twice the bytes in flight per
  /// multiprocessor where a launch has more programs than the multiprocessors hold at once.
  bool wideThreads = false;
  /// The grid's x axis runs over the batch and y over the sequence (B beyond the y axis' limit);
  /// otherwise x over the sequence and y over the batch.
  bool batchOnX = false;
  /// Every tensor is row-major without gaps: the kernel indexes tokens as s * B + b with
  /// strides fixed at compile time, and takes pointers and the tables' row count only (the
  /// first loads' parameters then share one 64-byte constant line).
  bool packed = false;
  /// Packed with positions, the table row does not depend on (s, b): the grid's x axis runs
  /// over the S * B tokens, and a program's token is its id.
  bool tokenGrid() const { return packed && positions.has_value(); }
  int64_t rotaryDim() const { return tableDim * (options.reuseFreqsFrontPart ? 2 : 1); }
  /// A program rotates one token's heads in a chunk of this many (of `heads` heads).
  int64_t headsPerProgram(int64_t heads) const;
  /// Chunks per token (of the tensor with more of them).
  int64_t chunksPerToken() const;
  std::string name() const;
  std::string key() const;
};
std::unique_ptr<Module> buildRope(const RopeSpec &spec, std::string *error);

} // namespace wavetile::ops

#endif
