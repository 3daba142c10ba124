//===- Quant.cpp - quantization kernels and their dispatch ----------------===//

#include "wavetile/ops/Quant.h"

#include "Checks.h"
#include "RowKernels.h"
#include "RowQuant.h"

using namespace wavetile;
using namespace wavetile::dsl;
using namespace wavetile::ops;

namespace {
/// Rows up to this many elements are quantized from registers (at most 512 threads, 32
/// elements each, as the norms); longer rows are read in chunks of half of it (per token:
/// twice, amax then the output).
constexpr int64_t kRowElements = 16384;
/// Schemes without a row-wide amax give each program a chunk of a row this long: short rows
/// (and few rows) then still spread over many programs; half as long for few rows
/// (QuantSpec::fewRows).
constexpr int64_t kChunkElements = 2048;
} // namespace

double wavetile::ops::quantMax(DType dtype) {
  switch (dtype) {
  case DType::f8E4M3FN:
    return 448.0;
  case DType::f8E4M3FNUZ:
    return 240.0;
  case DType::i8:
    return 127.0;
  case DType::f4E2M1FN:
    return 6.0;
  default:
    return 0.0;
  }
}

DType wavetile::ops::defaultFp8(std::string_view target) {
  return target == "gfx942" ? DType::f8E4M3FNUZ : DType::f8E4M3FN;
}

std::string RowQuant::key() const {
  static const char *schemes[] = {"token", "group", "mx", "static", "tensor"};
  std::string key = std::string(schemes[int(scheme)]) + "->" + dtypeName(out);
  if (group)
    key += "/g" + std::to_string(group);
  if (scheme == QuantScheme::Mx)
    key += "/round" + std::to_string(int(round));
  if (shuffleScales)
    key += "/shuffled";
  return key + (refinedReciprocal ? "/rcp" : "");
}

std::string QuantSpec::name() const {
  switch (quant.scheme) {
  case QuantScheme::PerToken:
    return "dynamic_per_token_scaled_quant";
  case QuantScheme::PerGroup:
  case QuantScheme::Mx:
    return "dynamic_per_group_scaled_quant";
  case QuantScheme::StaticPerTensor:
    return "static_per_tensor_quant";
  case QuantScheme::DynamicPerTensor:
    return "dynamic_per_tensor_quant";
  }
  return "?";
}

int64_t QuantSpec::columnsPerProgram() const {
  switch (quant.scheme) {
  case QuantScheme::PerGroup:
  case QuantScheme::Mx:
  case QuantScheme::StaticPerTensor:
    return std::max(powerOfTwoAtLeast(std::min(hidden, fewRows ? kChunkElements / 2 : kChunkElements)), quant.group);
  default:
    return 0;
  }
}

void QuantSpec::setTarget(std::string_view target) {
  warpSize = OpRuntime::warpSizeOf(target);
  quant.refinedReciprocal = OpRuntime::refinesReciprocalEstimate(target);
  bf16Pairs = quant.packedFp4() && input == DType::bf16 && OpRuntime::hasBf16PairArithmetic(target);
}

std::string QuantSpec::key() const {
  return name() + "/" + dtypeName(input) + "/" + quant.key() + "/n" + std::to_string(hidden) + "/w" +
         std::to_string(warpSize) + (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far") +
         (fewRows ? "/rows=few" : "") + (rowCount ? "/num_rows" : "") + (bf16Pairs ? "/bf16x2" : "");
}

std::unique_ptr<Module> wavetile::ops::buildQuant(const QuantSpec &spec, std::string *error) {
  const int64_t n = spec.hidden;
  const bool singlePass = n <= kRowElements;
  const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
  ModuleBuilder mb;
  auto declareInput = [&](KernelBuilder &k) {
    Tensor input = k.tensor("input", spec.input, {Dim::dynamic(), Dim::fixed(n)}, /*contiguous=*/false, reach);
    if (spec.vectorAligned) {
      k.assumeAligned(input.pointer, 16);
      k.assumeDivisible(input.stride(0), 16 / (bitWidth(spec.input) / 8));
    }
    return input;
  };
  const int64_t chunk = powerOfTwoAtLeast(std::min(n, singlePass ? kRowElements : kRowElements / 2));
  if (spec.quant.scheme == QuantScheme::DynamicPerTensor) {
    // Partial amaxes: program p reduces rows p, p + P, ...; programs past M write 0.
    KernelOptions options;
    options.numWarps = rowWarps(chunk, spec.input, spec.warpSize);
    auto k = mb.kernel(spec.name() + "_amax", options);
    Tensor input = declareInput(k);
    Tensor partials = k.tensor("partials", DType::f32, {Dim::fixed(kAmaxPartials)}, /*contiguous=*/true, reach);
    Value columns = arange(0, int32_t(chunk));
    Value program = programId(0);
    Value amax = forRange(program, input.size(0), int32_t(kAmaxPartials), {zeros({chunk}, DType::f32)},
                          [&](Value row, const std::vector<Value> &acc) {
                            return forRange(0, n, chunk, acc, [&](Value c0, const std::vector<Value> &inner) {
                              Value x = load(input, {row, c0 + columns}).to(DType::f32);
                              return std::vector<Value>{maximum(inner[0], abs(x))};
                            });
                          })[0]
                     .max(0);
    store(partials, {program + arange(0, 1)}, full({1}, amax, DType::f32));
  }
  {
    // One program per row, or (schemes without a row-wide amax) per chunk of a row.
    const int64_t block = spec.columnsPerProgram() ? spec.columnsPerProgram() : std::max(chunk, spec.quant.group);
    KernelOptions options;
    // MXFP4 groups in bf16 pairs: a thread holds a whole group of 32 (64 bytes) where the rows
    // are many; few rows keep 16 bytes a thread (four lanes a group) for the shorter latency.
    options.numWarps = rowWarps(block, spec.input, spec.warpSize, spec.fewRows ? 16 : spec.bf16Pairs ? 64 : 32);
    auto k = mb.kernel(spec.name(), options);
    k.param("BLOCK", block);
    RowQuantizer quantizer(k, spec.quant, n, reach, spec.vectorAligned);
    Tensor input = declareInput(k);
    std::optional<Value> rowLimit;
    if (spec.rowCount) {
      Tensor count = k.tensor("num_rows", DType::i32, {Dim::fixed(1)}, /*contiguous=*/true, reach);
      Value factor = k.scalar("num_rows_factor", DType::i32);
      // In 64 bits: count * factor may pass 2^31 (every row), where 32 bits would wrap.
      rowLimit = load(count, {arange(0, 1)}).max(0).to(DType::i64) * factor.to(DType::i64);
    }
    // Per tensor the input is read twice. The amax pass walks the rows upward, so the last
    // ones it read are still in L2: programs launched first take them (from the last row
    // down). Row -1 of an empty input is masked off everywhere; its program writes the scale.
    Value row = spec.quant.scheme == QuantScheme::DynamicPerTensor ? input.size(0) - 1 - programId(0) : programId(0);
    Value columns = arange(0, int32_t(block));
    // bf16 pairs stay bf16 (the quantizer computes with them); everything else in f32.
    auto read = [&](Value c) {
      Value x = load(input, {row, c});
      return spec.bf16Pairs ? x : x.to(DType::f32);
    };
    // A tensor's scale is taken after the first load of the row is issued: reducing the amax
    // partials takes barriers, which would otherwise hold the row's load back behind them.
    const bool tensorScale =
        spec.quant.scheme == QuantScheme::StaticPerTensor || spec.quant.scheme == QuantScheme::DynamicPerTensor;
    // A row (or chunk) quantized in one piece is read before the row count is known: every
    // row read is inside the input, and the load overlaps the count's instead of waiting.
    Value c0 = spec.columnsPerProgram() ? programId(1) * int32_t(block) : constant(0, DType::i32);
    std::optional<Value> x;
    if (spec.columnsPerProgram()) // bf16 pairs as [groups, 32]: a thread's group stays whole through the amax
      x = read(c0 + (spec.bf16Pairs ? groupedColumns(block / spec.quant.group, spec.quant.group) : columns));
    else if (block >= n)
      x = read(columns);
    auto quantizeRow = [&] {
      std::optional<ProgramScale> scale;
      if (spec.columnsPerProgram()) {
        if (tensorScale)
          scale = quantizer.tensorScale();
        quantizer.storeChunk(row, c0, columns, *x, scale);
        ifThen(programId(1) == 0, [&] { quantizer.finishRow(row, block); });
      } else if (x) {
        scale = tensorScale ? quantizer.tensorScale() : quantizer.rowScale(row, abs(*x).max(0));
        quantizer.storeChunk(row, c0, columns, *x, scale);
      } else {
        if (tensorScale)
          scale = quantizer.tensorScale();
        if (quantizer.needsRowScale()) {
          Value amax = forRange(0, n, block, {zeros({block}, DType::f32)},
                                [&](Value c, const std::vector<Value> &acc) {
                                  return std::vector<Value>{maximum(acc[0], abs(read(c + columns)))};
                                })[0]
                           .max(0);
          scale = quantizer.rowScale(row, amax);
        }
        forRange(0, n, block, {}, [&](Value c, const std::vector<Value> &) {
          quantizer.storeChunk(row, c, columns, read(c + columns), scale);
          return std::vector<Value>{};
        });
        quantizer.finishRow(row, block);
      }
    };
    if (rowLimit)
      ifThen(row.to(DType::i64) < *rowLimit, quantizeRow);
    else
      quantizeRow();
  }
  return mb.finish(error);
}

namespace {

bool launchQuant(OpRuntime &rt, RowQuant quant, const TensorRef &out, const TensorRef &input,
                 const TensorRef &scales, std::string *error, const RowCount &rows = {}) {
  QuantSpec spec{quant};
  std::string op = spec.name();
  ArgumentChecker check(op, error);
  if (!check.rows("input", input, kNormDTypes) ||
      !checkQuantOutputs(check, op, spec.quant, out, input, scales, error))
    return false;
  if (rows.count && !check.single("num_rows", *rows.count, DType::i32))
    return false;
  if (rows.factor < 0 || rows.factor > INT32_MAX)
    return opError(error, op, "num_rows_factor must be in [0, 2^31), got " + std::to_string(rows.factor));
  spec.rowCount = rows.count != nullptr;
  int64_t m = input.shape[0];
  if (m == 0 && spec.quant.scheme != QuantScheme::DynamicPerTensor)
    return true;
  // The dynamic per-tensor scale of one row, or of rows stored back to back that one program
  // holds, is the per-token scale of that row: one launch that reads the input once, instead
  // of the amax partials and a second read.
  const int64_t n = input.shape[1];
  auto packed = [&](const TensorRef &t) { return m == 1 || (t.strides[1] == 1 && t.strides[0] == n); };
  const bool oneRow = spec.quant.scheme == QuantScheme::DynamicPerTensor && m > 0 && packed(input) && packed(out) &&
                      (m == 1 || m * n <= kRowElements);
  const TensorRef rowIn{input.data, input.dtype, {1, m * n}, {m * n, input.strides[1]}};
  const TensorRef rowOut{out.data, out.dtype, {1, m * n}, {m * n, out.strides[1]}};
  const TensorRef &in = oneRow ? rowIn : input, &o = oneRow ? rowOut : out;
  if (oneRow) {
    spec.quant.scheme = QuantScheme::PerToken;
    m = 1;
  }
  spec.input = in.dtype;
  spec.hidden = in.shape[1];
  spec.setTarget(rt.target());
  spec.vectorAligned = vectorAligned({&o, &in});
  spec.within2GiB = within2GiB({&o, &in, &scales});
  spec.fewRows = spec.columnsPerProgram() && m < kFewQuantRows;
  NamedArgs args;
  args.tensor("input", in);
  quantOutputArgs(args, spec.quant, o, scales);
  if (rows.count) {
    args.tensor("num_rows", {rows.count->data, DType::i32, {1}, {1}});
    args.i32("num_rows_factor", int32_t(rows.factor));
  }
  auto build = [&](std::string *e) { return buildQuant(spec, e); };
  std::string launchError;
  if (spec.quant.scheme == QuantScheme::DynamicPerTensor) {
    TensorRef partials = rt.workspace(kAmaxPartials * sizeof(float), &launchError);
    if (!partials.data)
      return opError(error, op, launchError);
    partials = {partials.data, DType::f32, {kAmaxPartials}, {1}};
    args.tensor("partials", partials);
    if (!rt.launch(spec.key(), build, op + "_amax", {uint32_t(kAmaxPartials), 1, 1}, args, &launchError))
      return opError(error, op, launchError);
    if (m == 0) // the scale of nothing is 1 (amax 0); one program writes it
      m = 1;
  }
  const int64_t perProgram = spec.columnsPerProgram();
  const uint32_t chunks = perProgram ? uint32_t((spec.hidden + perProgram - 1) / perProgram) : 1;
  if (!rt.launch(spec.key(), build, spec.name(), {quantRows(spec.quant, m), chunks, 1}, args, &launchError))
    return opError(error, op, launchError);
  return true;
}

} // namespace

bool wavetile::ops::dynamic_per_token_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                   const TensorRef &scales, std::string *error,
                                                   const RowCount &rows) {
  return launchQuant(rt, {QuantScheme::PerToken}, out, input, scales, error, rows);
}

bool wavetile::ops::dynamic_per_group_scaled_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                                   const TensorRef &scales, int64_t groupSize, std::string *error,
                                                   MxScaleRound round, bool shuffleScale, const RowCount &rows) {
  RowQuant quant{QuantScheme::PerGroup};
  quant.group = groupSize;
  quant.round = round;
  // f32 scales viewed K-block-major (unit stride along M, as gemm_a8w8_blockscale may read
  // them) lie in memory as shuffled ones: the same kernel writes them.
  const bool viewedKBlockMajor = kBlockMajor(scales) && scales.strides[1] == scales.shape[0];
  const bool f32Scales = scales.dtype == DType::f32 && out.dtype != DType::f4E2M1FN;
  // AITER transposes shuffled scales (f32, and e8m0 of groups past 32) by the live row count
  // (num_rows * factor), not by M.
  const bool mxfp8 = scales.dtype == DType::f8E8M0FNU && out.dtype != DType::f4E2M1FN;
  if (shuffleScale && (f32Scales || (mxfp8 && groupSize != 32)) && rows.count)
    return opError(error, QuantSpec{quant}.name(), std::string("num_rows is not supported with shuffled (transposed) ") +
                                                       (f32Scales ? "f32" : "e8m0") + " scales");
  quant.shuffleScales = shuffleScale || (viewedKBlockMajor && f32Scales);
  return launchQuant(rt, quant, out, input, scales, error, rows);
}

bool wavetile::ops::dynamic_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                             const TensorRef &scale, std::string *error) {
  return launchQuant(rt, {QuantScheme::DynamicPerTensor}, out, input, scale, error);
}

bool wavetile::ops::static_per_tensor_quant(OpRuntime &rt, const TensorRef &out, const TensorRef &input,
                                            const TensorRef &scale, std::string *error) {
  return launchQuant(rt, {QuantScheme::StaticPerTensor}, out, input, scale, error);
}

std::string DequantSpec::key() const {
  return "dequant/" + quant.key() + "->" + dtypeName(output) + "/n" + std::to_string(hidden) + "/w" +
         std::to_string(warpSize) + (vectorAligned ? "/a16" : "") + (within2GiB ? "" : "/far") +
         (chunkPrograms ? "/chunks" : "");
}

/// fp8/int8 chunk programs on 64-lane waves read 16 codes a thread: one 128-bit buffer load.
static bool wideChunks(const DequantSpec &spec) {
  return spec.chunkPrograms && !spec.quant.packedFp4() && spec.warpSize == 64;
}

/// Output bytes a dequantizing thread writes. Row programs: MXFP4's 16 bytes of codes are
/// 32 bf16 outputs. Chunk programs: one 16-byte store a thread, the shortest chain (at one
/// row the kernel is all latency; 64 bytes a thread ran at 0.84x Triton's 16), or two where
/// the codes come as wideChunks.
static int64_t dequantBytesPerThread(const DequantSpec &spec) {
  if (spec.chunkPrograms)
    return wideChunks(spec) ? 32 : 16;
  return spec.quant.packedFp4() ? 64 : 32;
}

int64_t DequantSpec::columnsPerProgram() const {
  const int64_t chunk = !chunkPrograms      ? kRowElements / 2
                        : wideChunks(*this) ? kChunkElements
                                            : kChunkElements / 2;
  return std::max(powerOfTwoAtLeast(std::min(hidden, chunk)), quant.group ? quant.group : int64_t(1));
}

std::unique_ptr<Module> wavetile::ops::buildDequant(const DequantSpec &spec, std::string *error) {
  const int64_t n = spec.hidden;
  const RowQuant &q = spec.quant;
  const bool mx = q.scheme == QuantScheme::Mx, fp4 = q.packedFp4();
  const int64_t block = spec.columnsPerProgram();
  const Reach reach = spec.within2GiB ? Reach::within2GiB : Reach::unbounded;
  ModuleBuilder mb;
  {
    KernelOptions options; // one program per row, or per chunk of a row
    options.numWarps = rowWarps(block, spec.output, spec.warpSize, dequantBytesPerThread(spec));
    auto k = mb.kernel("dequant", options);
    Tensor out = k.tensor("out", spec.output, {Dim::dynamic(), Dim::fixed(n)}, false, reach);
    Tensor input = k.tensor("input", fp4 ? DType::i8 : q.out, {Dim::dynamic(), Dim::fixed(fp4 ? n / 2 : n)}, false,
                            reach);
    if (spec.vectorAligned)
      for (const Tensor *t : {&out, &input}) {
        k.assumeAligned(t->pointer, 16);
        k.assumeDivisible(t->stride(0), 16 / std::max(1, bitWidth(t->pointer.element) / 8));
      }
    const int64_t groups = q.group ? (n + q.group - 1) / q.group : 1;
    Tensor scales = q.scheme == QuantScheme::PerToken ? k.tensor("scales", DType::f32, {Dim::dynamic()}, true, reach)
                    : q.scheme == QuantScheme::StaticPerTensor
                        ? k.tensor("scales", DType::f32, {Dim::fixed(1)}, true, reach)
                        : k.tensor("scales", mx ? DType::i8 : DType::f32, {Dim::dynamic(), Dim::fixed(groups)}, false,
                                   reach);
    Value row = programId(0);
    Value columns = arange(0, int32_t(block));
    std::optional<Value> rowScale;
    if (q.scheme == QuantScheme::PerToken)
      rowScale = load(scales, {row + arange(0, 1)}).sum(0);
    else if (q.scheme == QuantScheme::StaticPerTensor)
      rowScale = load(scales, {arange(0, 1)}).sum(0);
    // A group's scale for each element of the chunk at c0 (e8m0 bytes decoded).
    auto perElement = [&](Value c0) {
      const int64_t count = block / q.group;
      Value s = load(scales, {row, c0 / q.group + arange(0, int32_t(count))});
      return (mx ? e8m0Value(s) : s).expand(1).broadcastTo({count, q.group}).reshape({block});
    };
    // Row programs stage MXFP4 codes in LDS: a thread's 128-bit code load then feeds 128-bit
    // stores beside its neighbours'. Chunk programs load the 4 code bytes of a thread's 8 outputs.
    std::optional<Shared> staged;
    if (fp4 && !spec.chunkPrograms)
      staged = sharedAlloc({block / 2}, DType::i8);
    auto decodeChunk = [&](Value c0) {
      Value x, scale;
      if (fp4) {
        Value codes = load(input, {row, c0 / 2 + arange(0, int32_t(block / 2))});
        if (staged) {
          sharedStore(*staged, codes);
          barrier();
          codes = sharedLoad(*staged);
        }
        x = e2m1Value(e2m1Codes(codes));
      } else {
        x = load(input, {row, c0 + columns}).to(DType::f32);
      }
      scale = rowScale ? *rowScale : perElement(c0);
      store(out, {row, c0 + columns}, (x * scale).to(spec.output));
    };
    if (spec.chunkPrograms) {
      decodeChunk(programId(1) * int32_t(block));
    } else {
      forRange(0, n, block, {}, [&](Value c0, const std::vector<Value> &) {
        decodeChunk(c0);
        if (staged) // the next chunk overwrites the staged codes
          barrier();
        return std::vector<Value>{};
      });
    }
  }
  return mb.finish(error);
}

bool wavetile::ops::dequant(OpRuntime &rt, const TensorRef &out, const TensorRef &input, const TensorRef &scales,
                            std::string *error) {
  const std::string op = "dequant";
  ArgumentChecker check(op, error);
  if (!check.rows("out", out, kNormDTypes) || !check.written("out", out))
    return false;
  const int64_t m = out.shape[0], n = out.shape[1];
  DequantSpec spec{{QuantScheme::PerToken, input.dtype}, out.dtype, n};
  // Groups of 32, 64 or 128 the [M, N / G] scales say.
  auto groupOf = [&]() -> int64_t {
    if (scales.rank() != 2 || scales.shape[0] != m || scales.shape[1] <= 0 || n % scales.shape[1])
      return 0;
    int64_t group = n / scales.shape[1];
    return group == 32 || group == 64 || group == 128 ? group : 0;
  };
  if (input.dtype == DType::f4E2M1FN) {
    spec.quant.scheme = QuantScheme::Mx;
    spec.quant.group = 32;
    if (n % 2)
      return opError(error, op, "MXFP4 packs pairs of elements; the hidden size " + std::to_string(n) + " is odd");
    if (!check.shaped("input", input, DType::f4E2M1FN, {m, n / 2}) ||
        !check.shaped("scales", scales, DType::f8E8M0FNU, {m, (n + 31) / 32}))
      return false;
  } else {
    if (quantMax(input.dtype) == 0)
      return opError(error, op, std::string("'input' has dtype ") + dsl::dtypeName(input.dtype) +
                                    "; expected f8E4M3FN, f8E4M3FNUZ, i8 or f4E2M1FN");
    if (!check.shaped("input", input, input.dtype, {m, n}))
      return false;
    if (scales.dtype == DType::f8E8M0FNU) { // MXFP8
      spec.quant.scheme = QuantScheme::Mx;
      spec.quant.group = groupOf();
      if (input.dtype == DType::i8)
        return opError(error, op, "e8m0 'scales' go with fp8 (MXFP8) or f4E2M1FN (MXFP4) input, not i8");
      if (!spec.quant.group)
        return opError(error, op, "e8m0 'scales' of fp8 input must be [M, N / G] with G = 32, 64 or 128, got " +
                                      shapeText(scales.shape));
    } else if (scales.dtype != DType::f32) {
      return opError(error, op, std::string("'scales' has dtype ") + dsl::dtypeName(scales.dtype) +
                                    "; expected f32 (or f8E8M0FNU for MXFP8)");
    } else {
      bool perToken = (scales.rank() == 1 && scales.shape[0] == m && m != 1) ||
                      (scales.rank() == 2 && scales.shape[0] == m && scales.shape[1] == 1 && m != 1);
      if (scales.numel() == 1 && scales.rank() <= 2) {
        spec.quant.scheme = QuantScheme::StaticPerTensor;
      } else if (perToken) {
        spec.quant.scheme = QuantScheme::PerToken;
      } else if (groupOf()) {
        spec.quant.scheme = QuantScheme::PerGroup;
        spec.quant.group = groupOf();
      } else {
        return opError(error, op, "'scales' must be [1] (per tensor), [M] or [M, 1] (per token) or [M, N / G] with "
                                  "G = 32, 64 or 128 (per group)");
      }
    }
  }
  if (m == 0)
    return true;
  spec.warpSize = rt.warpSize();
  spec.vectorAligned = vectorAligned({&out, &input});
  spec.within2GiB = within2GiB({&out, &input, &scales});
  // fp8 and int8 in Triton's program shape: at M >= 4096 it measured 93-100% of copy and
  // 0.99-1.00x Triton on an H100, where row programs of 32 bytes a thread took 0.89-0.98x.
  spec.chunkPrograms = !spec.quant.packedFp4() || m < kFewQuantRows;
  NamedArgs args;
  args.tensor("out", out).tensor("input", spec.quant.packedFp4()
                                             ? TensorRef{input.data, DType::i8, input.shape, input.strides}
                                             : input);
  if (spec.quant.scheme == QuantScheme::Mx)
    args.tensor("scales", {scales.data, DType::i8, scales.shape, scales.strides});
  else if (spec.quant.scheme == QuantScheme::PerToken)
    args.tensor("scales", {scales.data, DType::f32, {m}, {scales.strides[0]}});
  else if (spec.quant.scheme == QuantScheme::StaticPerTensor)
    args.tensor("scales", {scales.data, DType::f32, {1}, {1}});
  else
    args.tensor("scales", scales);
  std::string launchError;
  const uint32_t chunks = spec.chunkPrograms ? uint32_t((n + spec.columnsPerProgram() - 1) / spec.columnsPerProgram()) : 1;
  if (!rt.launch(spec.key(), [&](std::string *e) { return buildDequant(spec, e); }, "dequant",
                 {uint32_t(m), chunks, 1}, args, &launchError))
    return opError(error, op, launchError);
  return true;
}
