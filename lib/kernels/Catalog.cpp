//===- Catalog.cpp - library kernels by textual specialization ------------===//

#include "wavetile/ops/Catalog.h"

#include "wavetile/ops/Activations.h"
#include "wavetile/ops/Norms.h"
#include "wavetile/ops/Gemm.h"
#include "wavetile/ops/Quant.h"
#include "wavetile/ops/Rope.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <vector>

using namespace wavetile;
using namespace wavetile::ops;

namespace {

constexpr const char *kQuantFlags =
    "QUANT: out=f8E4M3FN|f8E4M3FNUZ|i8 (default f8E4M3FN) or out=f4E2M1FN:group=32[:round=0-3][:shuffle] for "
    "MXFP4, group=G[:shuffle] per group (shuffle: scales transposed, AITER's), group=G:e8m0[:round=0-3][:shuffle] "
    "for MXFP8 (fp8 out, e8m0 scales)";
constexpr const char *kCommonFlags = "DTYPE f32, f16 or bf16; a16: 16-byte aligned pointers and rows";

/// The op families of the catalogue: the names each starts with and their syntax.
struct OpFamily {
  std::vector<std::string_view> prefixes;
  std::string syntax;
};

const std::vector<OpFamily> &opFamilies() {
  static const std::vector<OpFamily> families = {
      {{"rmsnorm2d_fwd", "layernorm2d_fwd"},
       std::string("rmsnorm2d_fwd:DTYPE:N[:gemma][:t5][:a16], rmsnorm2d_fwd_with_add:DTYPE:N[:gemma][:t5][:a16], "
                   "layernorm2d_fwd[_with_add]:DTYPE:N[:a16], "
                   "rmsnorm2d_fwd_with[_add]_dynamicquant:DTYPE:N[:t5][:QUANT][:a16] (norms: [:rows=many], the "
                   "kernel for launches over many rows; [:packed], every tensor row-major and one program per row; ") +
           kQuantFlags + ")"},
      {{"dynamic_per_token_scaled_quant", "static_per_tensor_quant", "dynamic_per_tensor_quant",
        "dynamic_per_group_scaled_quant"},
       std::string("dynamic_per_token_scaled_quant|static_per_tensor_quant|dynamic_per_tensor_quant:DTYPE:N"
                   "[:out=...][:a16], dynamic_per_group_scaled_quant:DTYPE:N:group=32|64|128[:QUANT][:a16] (") +
           kQuantFlags + "; per group and static per tensor: [:rows=few], the kernel for launches under 512 rows; "
                         "per token and per group: [:num_rows], the kernel that reads how many rows to quantize)"},
      {{"silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "swiglu"},
       "silu_and_mul|gelu_and_mul|gelu_tanh_and_mul|swiglu:DTYPE:D[:a16] (D the output width)"},
      {{"dequant"},
       "dequant:DTYPE:N:in=f8E4M3FN|f8E4M3FNUZ|i8|f4E2M1FN[:token|:tensor|:group=G[:e8m0]][:chunks][:a16] (DTYPE "
       "the output; e8m0: MXFP8 scales; chunks: 1024-column programs, what fp8/int8 and MXFP4 under 512 rows "
       "launch)"},
      {{"gemm_"},
       "gemm_a16w16:DTYPE:K:n=N[:out=DTYPE][:bias][:bm=..][:bn=..][:bk=..][:stages=..][:warps=..][:splitk=..]"
       "[:skinny][:a16], "
       "gemm_a8w8[_bpreshuffle]:OUT:K:n=N:in=f8E4M3FN|f8E4M3FNUZ|i8[:token][:channel][:bias][:bm=..]...[:a16], "
       "gemm_a8w8_blockscale:OUT:K:n=N:in=f8E4M3FN|f8E4M3FNUZ[:xs=kmajor][:bm=..]...[:a16], "
       "gemm_a4w4:OUT:K:n=N[:bias]..."},
      {{"rope_cached"},
       "rope_cached[_positions[_offsets]][_2c]_fwd:DTYPE:D:heads=H[:heads_y=H][:f=F][:cos=DTYPE][:gptj][:reuse]"
       "[:nope_first][:pos=i32|i64][:wide][:batch_x][:packed][:a16] (D the head size, F the tables' width; "
       "wide: 64 bytes per thread; batch_x: the grid's x axis over the batch; packed: every tensor row-major, "
       "strides fixed)"},
  };
  return families;
}

/// The family whose names `op` starts with, if any.
const OpFamily *familyOf(std::string_view op) {
  for (const OpFamily &family : opFamilies())
    for (std::string_view prefix : family.prefixes)
      if (op.starts_with(prefix))
        return &family;
  return nullptr;
}

std::string withCommonFlags(const std::string &syntax) { return syntax + " (" + kCommonFlags + ")"; }

} // namespace

std::string wavetile::ops::opCatalogHelp() {
  std::string help;
  for (const OpFamily &family : opFamilies())
    help += (help.empty() ? "" : ", ") + family.syntax;
  return withCommonFlags(help);
}

namespace {

/// The integer `text` spells, if it is one in [0, 2^31) and nothing else.
std::optional<int64_t> parseCount(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > INT32_MAX)
    return std::nullopt;
  return value;
}

/// Takes the flags PREFIX=VALUE whose prefix `counts` names from `flags`, their values into
/// the integers named; false (with `error`) for a value that is not an integer in [0, 2^31).
bool takeCounts(std::vector<std::string_view> &flags, const std::map<std::string_view, int64_t *> &counts,
                std::string *error) {
  for (auto it = flags.begin(); it != flags.end();) {
    auto named = std::find_if(counts.begin(), counts.end(), [&](const auto &c) { return it->starts_with(c.first); });
    if (named == counts.end()) {
      ++it;
      continue;
    }
    std::optional<int64_t> value = parseCount(it->substr(named->first.size()));
    if (!value) {
      *error = "'" + std::string(*it) + "' is not an integer in [0, 2^31)";
      return false;
    }
    *named->second = *value;
    it = flags.erase(it);
  }
  return true;
}

/// Takes the quantization flags out=DTYPE, group=G, round=R, shuffle and e8m0 from `flags`
/// into `quant`: group=G makes per-token quantization per group, out=f4E2M1FN makes it MXFP4
/// and e8m0 (with an fp8 out) MXFP8.
bool parseQuantFlags(std::vector<std::string_view> &flags, RowQuant &quant, int64_t hidden, std::string *error) {
  if (!takeCounts(flags, {{"group=", &quant.group}}, error))
    return false;
  bool e8m0 = false;
  for (auto it = flags.begin(); it != flags.end();) {
    std::string_view flag = *it;
    std::optional<DType> out = flag.starts_with("out=") ? dsl::parseDType(flag.substr(4)) : std::nullopt;
    if (out && quantMax(*out))
      quant.out = *out;
    else if (flag.starts_with("round=") && flag.size() == 7 && flag[6] >= '0' && flag[6] <= '3')
      quant.round = MxScaleRound(flag[6] - '0');
    else if (flag == "shuffle")
      quant.shuffleScales = true;
    else if (flag == "e8m0")
      e8m0 = true;
    else {
      ++it;
      continue;
    }
    it = flags.erase(it);
  }
  if (quant.group && quant.scheme == QuantScheme::PerToken)
    quant.scheme = QuantScheme::PerGroup;
  if (quant.out == DType::f4E2M1FN) {
    quant.scheme = QuantScheme::Mx;
    if (quant.group != 32 || hidden % 2) {
      *error = "MXFP4 (out=f4E2M1FN) needs group=32 and an even hidden size";
      return false;
    }
  } else if (e8m0) {
    if (quant.scheme != QuantScheme::PerGroup || quant.out == DType::i8) {
      *error = "e8m0 (MXFP8) needs group=G and an fp8 out";
      return false;
    }
    quant.scheme = QuantScheme::Mx;
  } else if (quant.shuffleScales && quant.scheme != QuantScheme::PerGroup) {
    *error = "shuffle applies to MXFP4 and per-group scales only";
    return false;
  }
  if (quant.group && (quant.group & (quant.group - 1) || quant.group < 32 || quant.group > 128 || hidden % quant.group) &&
      !quant.packedFp4()) {
    *error = "group=G must be 32, 64 or 128 and divide the hidden size";
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Module> wavetile::ops::buildOpKernel(std::string_view spec, std::string_view target,
                                                    std::string *error) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon - start));
    if (colon == std::string_view::npos)
      break;
    start = colon + 1;
  }
  auto fail = [&](const std::string &why) -> std::unique_ptr<Module> {
    // The syntax of the op named, or the whole catalogue where the name is none of its.
    const OpFamily *family = familyOf(parts[0]);
    *error = "op kernel '" + std::string(spec) + "': " + why +
             (family ? "; syntax: " + withCommonFlags(family->syntax) : "; known: " + opCatalogHelp());
    return nullptr;
  };
  if (parts.size() < 3)
    return fail("expected OP:DTYPE:HIDDEN[:FLAG...]");
  std::optional<DType> dtype = dsl::parseDType(parts[1]);
  if (!dtype || (*dtype != DType::f32 && *dtype != DType::f16 && *dtype != DType::bf16))
    return fail("dtype '" + std::string(parts[1]) + "' is not f32, f16 or bf16");
  const int64_t hidden = parseCount(parts[2]).value_or(0);
  if (hidden < 1)
    return fail("hidden size '" + std::string(parts[2]) + "' is not an integer in [1, 2^31)");
  std::vector<std::string_view> flags(parts.begin() + 3, parts.end());
  auto takeFlag = [&](std::string_view flag) {
    auto it = std::find(flags.begin(), flags.end(), flag);
    if (it == flags.end())
      return false;
    flags.erase(it);
    return true;
  };
  // Every norm's common flags and the target's facts; whether no unknown flag is left.
  auto takeNormFlags = [&](NormSpec &norm) {
    norm.vectorAligned = takeFlag("a16");
    norm.manyRows = takeFlag("rows=many");
    norm.packed = takeFlag("packed");
    norm.setTarget(target);
    return flags.empty();
  };
  std::unique_ptr<Module> module;
  bool rms = parts[0].starts_with("rmsnorm2d_fwd"), layer = parts[0].starts_with("layernorm2d_fwd");
  if ((rms || layer) && (parts[0].ends_with("_fwd") || parts[0].ends_with("_fwd_with_add"))) {
    NormSpec norm{rms ? NormKind::RMS : NormKind::Layer, *dtype, hidden, parts[0].ends_with("_with_add")};
    norm.gemma = rms && takeFlag("gemma");
    norm.modelSensitive = rms && takeFlag("t5");
    if (takeNormFlags(norm))
      return buildNorm(norm, error);
  } else if (parts[0] == "rmsnorm2d_fwd_with_dynamicquant" || parts[0] == "rmsnorm2d_fwd_with_add_dynamicquant") {
    NormSpec norm{NormKind::RMS, *dtype, hidden, parts[0].find("_with_add") != std::string_view::npos};
    norm.modelSensitive = takeFlag("t5");
    norm.quant = RowQuant{QuantScheme::PerToken};
    if (!parseQuantFlags(flags, *norm.quant, hidden, error))
      return fail(*error);
    if (norm.quant->scheme == QuantScheme::Mx && !norm.quant->packedFp4())
      return fail("the quantizing norms write MXFP4, not MXFP8 (e8m0 with fp8 out)");
    if (takeNormFlags(norm))
      return buildNorm(norm, error);
  } else if (parts[0] == "dynamic_per_token_scaled_quant" || parts[0] == "dynamic_per_group_scaled_quant" ||
             parts[0] == "static_per_tensor_quant" || parts[0] == "dynamic_per_tensor_quant") {
    QuantSpec quant{{parts[0] == "dynamic_per_token_scaled_quant"   ? QuantScheme::PerToken
                     : parts[0] == "dynamic_per_group_scaled_quant" ? QuantScheme::PerGroup
                     : parts[0] == "static_per_tensor_quant"        ? QuantScheme::StaticPerTensor
                                                                    : QuantScheme::DynamicPerTensor},
                    *dtype, hidden};
    if (!parseQuantFlags(flags, quant.quant, hidden, error))
      return fail(*error);
    if (quant.quant.scheme == QuantScheme::PerGroup && !quant.quant.group)
      return fail("group=G must be given");
    quant.vectorAligned = takeFlag("a16");
    quant.fewRows = quant.columnsPerProgram() && takeFlag("rows=few");
    const bool perRowScheme = quant.quant.scheme != QuantScheme::StaticPerTensor &&
                              quant.quant.scheme != QuantScheme::DynamicPerTensor;
    quant.rowCount = perRowScheme && takeFlag("num_rows");
    quant.setTarget(target);
    if (flags.empty())
      return buildQuant(quant, error);
  } else if (parts[0] == "gemm_a16w16" || parts[0] == "gemm_a8w8" || parts[0] == "gemm_a8w8_bpreshuffle" ||
             parts[0] == "gemm_a8w8_blockscale" || parts[0] == "gemm_a4w4") {
    // gemm_a16w16:DTYPE:K:n=N[:out=DTYPE][:bias][:bm=..][:bn=..][:bk=..][:stages=..][:warps=..][:splitk=..][:a16]
    // gemm_a8w8[_bpreshuffle]:OUT:K:n=N:in=f8E4M3FN|f8E4M3FNUZ|i8[:token][:channel][:bias][:bm=..]...[:a16]
    const bool scaled = parts[0] != "gemm_a16w16";
    GemmSpec gemm{*dtype, *dtype, 0, hidden};
    gemm.wPreshuffled = parts[0] == "gemm_a8w8_bpreshuffle";
    gemm.scaled = parts[0] == "gemm_a8w8" || gemm.wPreshuffled;
    gemm.blockScaled = parts[0] == "gemm_a8w8_blockscale";
    gemm.xScaleKBlockMajor = gemm.blockScaled && takeFlag("xs=kmajor");
    gemm.mx = parts[0] == "gemm_a4w4";
    if (gemm.mx)
      gemm.input = DType::f4E2M1FN;
    if (scaled) {
      gemm.input = DType::f8E4M3FN;
      gemm.xScalePerRow = takeFlag("token");
      gemm.wScalePerColumn = takeFlag("channel");
      for (std::string_view in : {"in=f8E4M3FN", "in=f8E4M3FNUZ", "in=i8"})
        if (takeFlag(in))
          gemm.input = *dsl::parseDType(in.substr(3));
    }
    if (!takeCounts(flags,
                    {{"n=", &gemm.n},
                     {"bm=", &gemm.config.blockM},
                     {"bn=", &gemm.config.blockN},
                     {"bk=", &gemm.config.blockK},
                     {"stages=", &gemm.config.stages},
                     {"warps=", &gemm.config.warps},
                     {"splitk=", &gemm.config.splitK}},
                    error))
      return fail(*error);
    for (auto it = flags.begin(); it != flags.end();) {
      std::string_view flag = *it;
      bool taken = false;
      if (flag.starts_with("out=") && dsl::parseDType(flag.substr(4))) {
        gemm.output = *dsl::parseDType(flag.substr(4));
        taken = true;
      } else if (flag == "bias") {
        gemm.bias = true;
        taken = true;
      } else if (flag == "skinny") {
        gemm.config.skinny = true;
        taken = true;
      }
      it = taken ? flags.erase(it) : it + 1;
    }
    if ((!scaled && *dtype == DType::f32) || gemm.n < 1)
      return fail("gemm_a16w16 takes bf16 or f16 inputs; both GEMMs need n=N");
    fitGemmConfig(gemm, target); // as the op does
    if (std::string problem = gemm.problem(); !problem.empty())
      return fail(problem);
    gemm.vectorAligned = takeFlag("a16");
    if (flags.empty())
      return buildGemm(gemm, error);
  } else if (parts[0] == "dequant") {
    // dequant:DTYPE:N:in=f8E4M3FN|f8E4M3FNUZ|i8|f4E2M1FN[:token|:tensor|:group=G]
    DequantSpec dq{{QuantScheme::PerToken, DType::f8E4M3FN}, *dtype, hidden};
    for (auto it = flags.begin(); it != flags.end();) {
      std::string_view flag = *it;
      std::optional<DType> in = flag.starts_with("in=") ? dsl::parseDType(flag.substr(3)) : std::nullopt;
      if (in && quantMax(*in))
        dq.quant.out = *in;
      else if (flag == "tensor")
        dq.quant.scheme = QuantScheme::StaticPerTensor;
      else if (flag == "token")
        dq.quant.scheme = QuantScheme::PerToken;
      else if (flag.starts_with("group=")) {
        dq.quant.scheme = QuantScheme::PerGroup;
        dq.quant.group = std::atoi(std::string(flag.substr(6)).c_str());
      } else {
        ++it;
        continue;
      }
      it = flags.erase(it);
    }
    if (dq.quant.out == DType::f4E2M1FN) {
      dq.quant.scheme = QuantScheme::Mx;
      dq.quant.group = 32;
      if (hidden % 2)
        return fail("MXFP4 needs an even hidden size");
    } else if (dq.quant.scheme == QuantScheme::PerGroup &&
               ((dq.quant.group != 32 && dq.quant.group != 64 && dq.quant.group != 128) || hidden % dq.quant.group)) {
      return fail("group=G must be 32, 64 or 128 and divide the hidden size");
    }
    if (takeFlag("e8m0")) { // MXFP8
      if (dq.quant.scheme != QuantScheme::PerGroup || dq.quant.out == DType::i8)
        return fail("e8m0 (MXFP8) needs group=G and fp8 input");
      dq.quant.scheme = QuantScheme::Mx;
    }
    dq.vectorAligned = takeFlag("a16");
    dq.chunkPrograms = takeFlag("chunks");
    dq.warpSize = OpRuntime::warpSizeOf(target);
    if (flags.empty())
      return buildDequant(dq, error);
  } else if (parts[0].starts_with("rope_cached")) {
    // rope_cached[_positions[_offsets]][_2c]_fwd:DTYPE:D:heads=H[:heads_y=H][:f=F][:cos=DTYPE][:gptj][:reuse]
    // [:nope_first][:pos=i32|i64][:wide][:batch_x][:packed][:a16]
    RopeSpec rope{*dtype, DType::f32, 1, hidden, hidden};
    rope.positions = parts[0].find("_positions") != std::string_view::npos ? std::optional(DType::i64) : std::nullopt;
    rope.offsets = parts[0].find("_offsets") != std::string_view::npos;
    bool twoTensors = parts[0].find("_2c") != std::string_view::npos;
    if (!takeCounts(flags, {{"heads=", &rope.heads}, {"heads_y=", &rope.secondHeads}, {"f=", &rope.tableDim}}, error))
      return fail(*error);
    for (auto it = flags.begin(); it != flags.end();) {
      std::string_view flag = *it;
      if (flag.starts_with("cos=") && dsl::parseDType(flag.substr(4)))
        rope.tableDType = *dsl::parseDType(flag.substr(4));
      else if (flag == "gptj")
        rope.options.style = RotateStyle::GptJ;
      else if (flag == "reuse")
        rope.options.reuseFreqsFrontPart = true;
      else if (flag == "nope_first")
        rope.options.nopeFirst = true;
      else if (flag == "wide")
        rope.wideThreads = true;
      else if (flag == "batch_x")
        rope.batchOnX = true;
      else if (flag == "packed")
        rope.packed = true;
      else if (flag == "pos=i32" && rope.positions)
        rope.positions = DType::i32;
      else if (flag == "pos=i64" && rope.positions)
        rope.positions = DType::i64;
      else {
        ++it;
        continue;
      }
      it = flags.erase(it);
    }
    if (twoTensors != (rope.secondHeads > 0))
      return fail("heads_y=H is given exactly for the _2c_ forms");
    if (rope.heads < 1 || rope.tableDim < 1 || rope.rotaryDim() > hidden || rope.rotaryDim() % 2)
      return fail("heads=H >= 1 and an even rotary dimension (f=F, doubled by reuse) up to D are needed");
    rope.vectorAligned = takeFlag("a16");
    rope.warpSize = OpRuntime::warpSizeOf(target);
    if (flags.empty())
      return buildRope(rope, error);
  } else {
    std::optional<GatedActivation> kind;
    for (GatedActivation k : {GatedActivation::Silu, GatedActivation::Gelu, GatedActivation::GeluTanh,
                              GatedActivation::Swiglu})
      if (parts[0] == gatedActivationName(k))
        kind = k;
    if (!kind)
      return fail("no op named '" + std::string(parts[0]) + "'");
    GatedActivationSpec gated{*kind, *dtype, hidden};
    gated.vectorAligned = takeFlag("a16");
    gated.warpSize = OpRuntime::warpSizeOf(target);
    if (flags.empty())
      return buildGatedActivation(gated, error);
  }
  return fail("unknown flag '" + std::string(flags.front()) + "'");
}
