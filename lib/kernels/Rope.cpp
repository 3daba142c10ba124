//===- Rope.cpp - rotary position embedding kernels and their dispatch ----===//

#include "wavetile/ops/Rope.h"

#include "Checks.h"
#include "RowKernels.h"

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {
/// A program rotates chunks of one token's heads of at most this many elements.
constexpr int64_t kChunkElements = 4096;
/// Below this many tokens each chunk of a token's heads gets a program of its own (H200,
/// 128 heads of 128: 3.2 -> 1.8 us for one token); from it on one program walks a token's
/// chunks (one program per chunk measured 5-15% slower at 4096 and 32768 tokens).
constexpr int64_t kFewTokens = 512;
/// From kFewTokens on, tokens of at most this many chunks take 64 bytes per thread
/// (RopeSpec::wideThreads). H200, 4096 and 32768 tokens against 32 bytes: 32 and 56 heads of
/// 128 4-10% faster, 64 heads within 2%, 128 heads (four chunks walked in turn) 4-5% slower.
constexpr int64_t kWideChunksPerToken = 2;
/// Below kFewTokens, launches of at least this many programs (one per chunk) take 64 bytes
/// per thread: 256 tokens of 128 heads of 128 are 1024 programs of 256 threads at 40
/// registers, six per H200 multiprocessor, so two waves; at 128 threads all fit at once.
constexpr int64_t kWideFewTokenPrograms = 1024;
} // namespace

int64_t RopeSpec::headsPerProgram(int64_t count) const {
  return std::min(powerOfTwoAtLeast(count), std::max<int64_t>(1, kChunkElements / powerOfTwoAtLeast(headDim)));
}

int64_t RopeSpec::chunksPerToken() const {
  auto chunks = [&](int64_t count) {
    return count ? (count + headsPerProgram(count) - 1) / headsPerProgram(count) : 0;
  };
  return std::max(chunks(heads), chunks(secondHeads));
}

std::string RopeSpec::name() const {
  return std::string("rope_cached") + (positions ? offsets ? "_positions_offsets" : "_positions" : "") +
         (secondHeads ? "_2c" : "") + "_fwd";
}

std::string RopeSpec::key() const {
  return name() + "/" + dtypeName(dtype) + "/cos_" + dtypeName(tableDType) + "/h" + std::to_string(heads) +
         (secondHeads ? "+" + std::to_string(secondHeads) : "") + "/d" + std::to_string(headDim) + "/f" +
         std::to_string(tableDim) + (options.style == RotateStyle::NeoX ? "/neox" : "/gptj") +
         (options.reuseFreqsFrontPart ? "/reuse" : "") + (options.nopeFirst ? "/nope_first" : "") +
         (positions ? std::string("/pos_") + dtypeName(*positions) : "") + "/w" + std::to_string(warpSize) +
         (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far") + (wideThreads ? "/wide" : "") +
         (batchOnX ? "/batch_x" : "") + (packed ? "/packed" : "");
}

std::unique_ptr<Module> wavetile::ops::buildRope(const RopeSpec &spec, std::string *error) {
  const int64_t d = spec.headDim, r = spec.rotaryDim(), half = r / 2, pass = d - r;
  const bool nopeFirst = spec.options.nopeFirst, reuse = spec.options.reuseFreqsFrontPart;
  const int64_t rotaryBase = nopeFirst ? d - r : 0, passBase = nopeFirst ? 0 : r;
  const int64_t width = powerOfTwoAtLeast(d);
  const DType dt = spec.dtype;
  ModuleBuilder mb;
  {
    KernelOptions options; // one program per chunk of a token's heads
    const int64_t largest = std::max(spec.heads, spec.secondHeads);
    options.numWarps = rowWarps(std::min(powerOfTwoAtLeast(largest) * width, kChunkElements), dt, spec.warpSize,
                                spec.wideThreads ? 64 : 32);
    auto k = mb.kernel(spec.name(), options);
    const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
    // Tokens are [S, B, ...] with strides as arguments, or, packed, one implicit dimension of
    // S * B tokens whose strides are constants.
    auto tokenDims = [&](std::vector<Dim> inner) {
      std::vector<Dim> dims = spec.packed ? std::vector{Dim::implicit()} : std::vector{Dim::dynamic(), Dim::dynamic()};
      dims.insert(dims.end(), inner.begin(), inner.end());
      return dims;
    };
    // Aligned pointers; strides that are arguments are multiples of 16 bytes.
    auto aligned = [&](const Tensor &t, int strided) {
      if (!spec.vectorAligned)
        return;
      k.assumeAligned(t.pointer, 16);
      for (int i = 0; i < strided && !spec.packed; ++i)
        k.assumeDivisible(t.stride(i), 16 / (bitWidth(t.elementType()) / 8));
    };
    auto tokens = [&](const std::string &name, int64_t heads) {
      Tensor t = k.tensor(name, dt, tokenDims({Dim::fixed(heads), Dim::fixed(d)}), spec.packed, reach);
      aligned(t, 3);
      return t;
    };
    auto table = [&](const std::string &name) {
      Tensor t = k.tensor(name, spec.tableDType, {Dim::dynamic(), Dim::fixed(spec.tableDim)}, spec.packed, reach);
      aligned(t, 1);
      return t;
    };
    // Declared in the order the first loads need them: a launch's parameters are in constant
    // memory from its start, 64 bytes a line, and the position's load waits for its pointer
    // and stride (rope-notes, session 40: 1-4% at few tokens with them in the first line).
    std::optional<Tensor> outY, y, positions, offsets;
    if (spec.positions) {
      positions = k.tensor("positions", *spec.positions, tokenDims({}), spec.packed, reach);
      if (spec.offsets)
        offsets = k.tensor("offsets", *spec.positions, tokenDims({}), spec.packed, reach);
    }
    Tensor x = tokens("input", spec.heads);
    Tensor cosT = table("cos"), sinT = table("sin");
    Tensor outX = tokens("out", spec.heads);
    if (spec.secondHeads) {
      outY = tokens("out_y", spec.secondHeads);
      y = tokens("input_y", spec.secondHeads);
    }
    // The token (s, b) is the program's place on the grid's first two axes (no division on the
    // way to the first load): s on x and b on y, or the other way round (RopeSpec::batchOnX).
    // Packed with positions, the grid's x axis runs over the S * B tokens instead
    // (RopeSpec::tokenGrid), and the token's index is the program's.
    Value s = programId(spec.batchOnX ? 1 : 0), b = programId(spec.batchOnX ? 0 : 1);
    Value token = !spec.packed       ? Value()
                  : spec.tokenGrid() ? programId(0)
                                     : s * numPrograms(spec.batchOnX ? 0 : 1) + b;
    // The index of the token's element `inner` in a tensor of tokens.
    auto at = [&](std::vector<Operand> inner) {
      std::vector<Operand> index = spec.packed ? std::vector<Operand>{token} : std::vector<Operand>{s, b};
      index.insert(index.end(), inner.begin(), inner.end());
      return index;
    };
    // The table row: the token's sequence index, or its position (plus offset). The grid
    // covers the tokens exactly, so these reads need no mask.
    Value row = s;
    auto scalarAt = [&](const Tensor &t) {
      std::vector<Operand> index = at({});
      index.back() = Operand(index.back()) + arange(0, 1);
      return load(t.pointer, offsetsOf(t, index)).sum(0).to(DType::i32);
    };
    if (positions)
      row = scalarAt(*positions);
    if (offsets)
      row = row + scalarAt(*offsets);
    // A position outside the table reads its nearest row: device data cannot be refused, and
    // a clamp keeps the table reads in bounds without predicating them on the position (the
    // Triton kernel with such a mask took 0.1 us longer a launch on the H200,
    // bench/rope-notes.md session 29). Without positions the host checked S <= rows.
    if (positions)
      row = minimum(maximum(row, 0), cosT.size(0) - 1);
    auto tableAt = [&](const Tensor &t, Value f) {
      return load(t.pointer, offsetsOf(t, {row, f}), f < int32_t(spec.tableDim)).to(DType::f32);
    };
    auto cosAt = [&](Value f) { return tableAt(cosT, f); };
    auto sinAt = [&](Value f) { return tableAt(sinT, f); };

    // Programs along axis 2 take every num_programs(2)-th chunk of a token's heads: over few
    // tokens one program per chunk (they run in parallel), over many one for all (chunks of
    // a tensor with fewer of them than the grid are masked off).
    auto rotate = [&](const Tensor &in, const Tensor &out, int64_t heads) {
      const int64_t chunk = spec.headsPerProgram(heads);
      auto rotateChunk = [&](Value h0, const std::vector<Value> &) {
        Value h = (h0 + arange(0, int32_t(chunk))).expand(1);
        // Columns `col` ([1, n]) of the chunk's heads, where `valid`. Tokens come from the
        // grid (always in range) and chunks start at multiples of `chunk` below `heads`: only
        // a last partial chunk reaches past the heads.
        auto mask = [&](Value valid) { return heads % chunk ? (h < int32_t(heads)) & valid : valid; };
        auto read = [&](Value col, Value valid) {
          return load(in.pointer, offsetsOf(in, at({h, col})), mask(valid)).to(DType::f32);
        };
        auto write = [&](Value col, Value valid, Value v) {
          store(out.pointer, offsetsOf(out, at({h, col})), v.to(dt), mask(valid));
        };
        if (spec.options.style == RotateStyle::NeoX) {
          // Pairs (j, j + R/2): two half tiles.
          Value j = arange(0, int32_t(powerOfTwoAtLeast(half))).expand(0);
          Value valid = j < int32_t(half);
          Value xa = read(rotaryBase + j, valid), xb = read(rotaryBase + half + j, valid);
          // Every read before the first write: `out` may alias `input` (in place), so a read
          // after a write could not be merged with an earlier one or issued ahead of it.
          Value ca = cosAt(j), sa = sinAt(j);
          Value cb = reuse ? ca : cosAt(half + j), sb = reuse ? sa : sinAt(half + j);
          Value ya = fma(xa, ca, -(xb * sa)), yb = fma(xb, cb, xa * sb);
          write(rotaryBase + j, valid, ya);
          write(rotaryBase + half + j, valid, yb);
        } else {
          // Pairs (2j, 2j + 1): the tile read whole, split in registers.
          const int64_t columns = powerOfTwoAtLeast(r), pairs = columns / 2;
          Value c = arange(0, int32_t(columns)).expand(0);
          Value valid = c < int32_t(r);
          Value both = read(rotaryBase + c, valid).reshape({chunk, pairs, 2});
          Value e = arange(0, 2).expand(0).expand(0);
          Value xa = where(e == 0, both, 0.0).sum(2), xb = where(e == 1, both, 0.0).sum(2);
          Value j = arange(0, int32_t(pairs)).expand(0);
          Value ca = cosAt(reuse ? j : 2 * j), sa = sinAt(reuse ? j : 2 * j);
          Value cb = reuse ? ca : cosAt(2 * j + 1), sb = reuse ? sa : sinAt(2 * j + 1);
          Value ya = fma(xa, ca, -(xb * sa)).expand(2).broadcastTo({chunk, pairs, 2});
          Value yb = fma(xb, cb, xa * sb).expand(2).broadcastTo({chunk, pairs, 2});
          write(rotaryBase + c, valid, where(e == 0, ya, yb).reshape({chunk, columns}));
        }
        if (pass > 0) {
          Value p = arange(0, int32_t(powerOfTwoAtLeast(pass))).expand(0);
          Value valid = p < int32_t(pass);
          write(passBase + p, valid, load(in.pointer, offsetsOf(in, at({h, passBase + p})), mask(valid)));
        }
        return std::vector<Value>{};
      };
      // Heads of one chunk per token: one program per token and no loop keeping addresses and
      // tables live across iterations (sm_90a, 32 heads of 128 at 64 bytes: 64 -> 56 registers).
      if (spec.chunksPerToken() == 1)
        rotateChunk(constant(0, DType::i32), {});
      else
        forRange(programId(2) * int32_t(chunk), heads, numPrograms(2) * int32_t(chunk), {}, rotateChunk);
    };
    rotate(x, outX, spec.heads);
    if (y)
      rotate(*y, *outY, spec.secondHeads);
  }
  return mb.finish(error);
}

namespace {

inline constexpr std::initializer_list<DType> kIndexDTypes = {DType::i32, DType::i64};

/// A cos or sin table [P, 1, 1, F] or [P, F] as the kernel's [P, F].
bool tableOf(const ArgumentChecker &check, const char *name, const TensorRef &t, TensorRef *flat) {
  if (t.rank() == 4 && t.shape[1] == 1 && t.shape[2] == 1) {
    *flat = {t.data, t.dtype, {t.shape[0], t.shape[3]}, {t.strides[0], t.strides[3]}};
    return check.strided(name, *flat, kNormDTypes, 2);
  }
  *flat = t;
  return check.strided(name, t, kNormDTypes, 2);
}

struct RopeCall {
  const TensorRef &outX, &x;
  const TensorRef *outY = nullptr, *y = nullptr;
  const TensorRef &cos, &sin;
  const TensorRef *positions = nullptr, *offsets = nullptr;
};

bool launchRope(OpRuntime &rt, const std::string &op, const RopeCall &call, const RopeOptions &options,
                std::string *error) {
  ArgumentChecker check(op, error);
  const TensorRef &x = call.x;
  if (!check.strided("input", x, kNormDTypes, 4) || !check.sameAs("out", call.outX, x) ||
      !check.written("out", call.outX))
    return false;
  if (call.y) {
    if (!check.strided("input_y", *call.y, {x.dtype}, 4) || !check.sameAs("out_y", *call.outY, *call.y) ||
        !check.written("out_y", *call.outY))
      return false;
    if (call.y->shape[0] != x.shape[0] || call.y->shape[1] != x.shape[1] || call.y->shape[3] != x.shape[3])
      return opError(error, op, "'input_y' must have the sequence, batch and head sizes of 'input'");
  }
  TensorRef cos, sin;
  if (!tableOf(check, "cos", call.cos, &cos) || !tableOf(check, "sin", call.sin, &sin))
    return false;
  if (sin.shape != cos.shape || sin.dtype != cos.dtype)
    return opError(error, op, "'sin' must have the shape and dtype of 'cos'");
  const int64_t s = x.shape[0], batch = x.shape[1], d = x.shape[3], f = cos.shape[1];
  const int64_t rotary = f * (options.reuseFreqsFrontPart ? 2 : 1);
  if (rotary > d || rotary % 2 || rotary == 0)
    return opError(error, op,
                   "the rotary dimension " + std::to_string(rotary) + " (from cos/sin's last dimension " +
                       std::to_string(f) + (options.reuseFreqsFrontPart ? ", reused" : "") +
                       ") must be even, positive and at most the head size " + std::to_string(d));
  std::vector<const TensorRef *> tensors{&call.outX, &x, &cos, &sin};
  if (call.positions) {
    for (auto [name, t] : {std::pair{"positions", call.positions}, std::pair{"offsets", call.offsets}}) {
      if (!t)
        continue;
      if (!check.strided(name, *t, kIndexDTypes, 2))
        return false;
      if (t->shape != std::vector<int64_t>{s, batch})
        return opError(error, op,
                       std::string("'") + name + "' must have shape [S, B] = [" + std::to_string(s) + ", " +
                           std::to_string(batch) + "]");
      if (t->dtype != call.positions->dtype)
        return opError(error, op, "'offsets' must have the dtype of 'positions'");
      tensors.push_back(t);
    }
  } else if (cos.shape[0] < s) {
    return opError(error, op,
                   "cos/sin have " + std::to_string(cos.shape[0]) + " rows for " + std::to_string(s) +
                       " sequence positions");
  }
  if (call.y) {
    tensors.push_back(call.y);
    tensors.push_back(call.outY);
  }
  if (s * batch == 0)
    return true;
  if (s * batch > INT32_MAX)
    return opError(error, op, "S * B must be below 2^31");
  RopeSpec spec{x.dtype, cos.dtype, x.shape[2], d, f};
  spec.secondHeads = call.y ? call.y->shape[2] : 0;
  spec.options = options;
  if (call.positions)
    spec.positions = call.positions->dtype;
  spec.offsets = call.offsets != nullptr;
  spec.warpSize = rt.warpSize();
  spec.vectorAligned = vectorAligned({&call.outX, &x, call.y ? call.y : &x, call.outY ? call.outY : &x, &cos, &sin});
  spec.within2GiB = within2GiB(tensors);
  const bool fewTokens = s * batch < kFewTokens;
  spec.wideThreads = fewTokens ? s * batch * spec.chunksPerToken() >= kWideFewTokenPrograms
                               : spec.chunksPerToken() <= kWideChunksPerToken;
  spec.packed = contiguous(tensors);
  // Past the grid's y limit the batch goes on x; S * B < 2^31 keeps S below 32768 then.
  spec.batchOnX = batch > kMaxGridYZ && !spec.tokenGrid();
  NamedArgs args;
  args.tensor("out", call.outX).tensor("input", x).tensor("cos", cos).tensor("sin", sin);
  if (call.y)
    args.tensor("out_y", *call.outY).tensor("input_y", *call.y);
  if (call.positions)
    args.tensor("positions", *call.positions);
  if (call.offsets)
    args.tensor("offsets", *call.offsets);
  std::string launchError;
  if (!rt.launch(
          spec.key(), [&](std::string *e) { return buildRope(spec, e); }, spec.name(),
          {uint32_t(spec.tokenGrid() ? s * batch : spec.batchOnX ? batch : s),
           uint32_t(spec.tokenGrid() ? 1 : spec.batchOnX ? s : batch), uint32_t(fewTokens ? spec.chunksPerToken() : 1)},
          args, &launchError))
    return opError(error, op, launchError);
  return true;
}

} // namespace

bool wavetile::ops::rope_cached_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &cos,
                                    const TensorRef &sin, const RopeOptions &options, std::string *error) {
  return launchRope(rt, "rope_cached_fwd", {out, input, nullptr, nullptr, cos, sin}, options, error);
}

bool wavetile::ops::rope_cached_positions_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                              const TensorRef &cos, const TensorRef &sin, const TensorRef &positions,
                                              const RopeOptions &options, std::string *error) {
  return launchRope(rt, "rope_cached_positions_fwd", {out, input, nullptr, nullptr, cos, sin, &positions}, options,
                    error);
}

bool wavetile::ops::rope_cached_positions_offsets_fwd(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                      const TensorRef &cos, const TensorRef &sin,
                                                      const TensorRef &positions, const TensorRef &offsets,
                                                      const RopeOptions &options, std::string *error) {
  return launchRope(rt, "rope_cached_positions_offsets_fwd",
                    {out, input, nullptr, nullptr, cos, sin, &positions, &offsets}, options, error);
}

bool wavetile::ops::rope_cached_positions_2c_fwd(OpRuntime &rt, const TensorRef &outX, const TensorRef &outY,
                                                 const TensorRef &x, const TensorRef &y, const TensorRef &cos,
                                                 const TensorRef &sin, const TensorRef &positions,
                                                 const TensorRef *offsets, const RopeOptions &options,
                                                 std::string *error) {
  return launchRope(rt, offsets ? "rope_cached_positions_offsets_2c_fwd" : "rope_cached_positions_2c_fwd",
                    {outX, x, &outY, &y, cos, sin, &positions, offsets}, options, error);
}
