"""Library ops with AITER's names, argument orders and numerics (docs/ops.md).

Tensors are torch CUDA tensors (the op runs on their device, on torch's current stream,
without waiting) or numpy arrays (the op runs on the host before returning; bf16 data
travels as uint16). Ops that return a tensor allocate it like their input; ``out`` and
residual arguments are written in place. Errors raise ``OpError`` naming the op and the
argument.
"""
import sys

from . import _wavetile as _C
from . import language
from .jit import _HOST, _TorchStream, _gpu

OpError = _C.OpError

_RUNTIMES = {}


def _bytes_as(t, dtype):
    """A byte tensor (uint8) as (address, `dtype`, shape, strides in elements, read-only),
    which the library reads as `dtype` (packed fp4, e8m0 scales); other tensors, and the tuple
    form, as they are."""
    if isinstance(t, tuple) or str(t.dtype) not in ("uint8", "torch.uint8"):
        return t
    if hasattr(t, "data_ptr"):
        return (t.data_ptr(), dtype, list(t.shape), list(t.stride()), False)
    address, read_only = t.__array_interface__["data"]
    return (address, dtype, list(t.shape), list(t.strides), read_only)


def _runtime(*tensors):
    """The op runtime and stream for the tensors' device (they must share one)."""
    devices = {t.get_device() if hasattr(t, "get_device") else -1 for t in tensors}  # torch: -1 on the CPU
    if len(devices) != 1:
        raise OpError("every tensor of an op must be on the same device (got "
                      + ", ".join("host" if d < 0 else f"cuda:{d}" for d in sorted(devices)) + ")")
    device = devices.pop()
    if device not in _RUNTIMES:
        target = _HOST.get() if device < 0 else _gpu(device)
        _RUNTIMES[device] = _C.OpRuntime(target.device)
    return _RUNTIMES[device], 0 if device < 0 else _TorchStream.of(device)


def _empty_like(t):
    """A row-major tensor of `t`'s shape and dtype (whatever `t`'s strides: a broadcast input
    must not give its output shared elements)."""
    if hasattr(t, "data_ptr"):
        torch = sys.modules["torch"]
        return torch.empty_like(t, memory_format=torch.contiguous_format)
    import numpy
    return numpy.empty(t.shape, t.dtype)


def _empty(like, shape, dtype, zeroed=False):
    """A new [shape] tensor on `like`'s device (torch) or a numpy array; `dtype` is a
    function of the module (torch or numpy) giving the element type."""
    if hasattr(like, "data_ptr"):
        torch = sys.modules["torch"]
        return (torch.zeros if zeroed else torch.empty)(shape, dtype=dtype(torch), device=like.device)
    import numpy
    return (numpy.zeros if zeroed else numpy.empty)(shape, dtype=dtype(numpy))


def rmsnorm2d_fwd(input, weight, epsilon, use_model_sensitive_rmsnorm=0):
    """RMSNorm of each row of `input` [M, N]: x * rsqrt(mean(x^2) + epsilon) * weight."""
    out = _empty_like(input)
    runtime, stream = _runtime(out, input, weight)
    _C.rmsnorm2d_fwd(runtime, stream, out, input, weight, epsilon, use_model_sensitive_rmsnorm, False)
    return out


rms_norm = rmsnorm2d_fwd


def rmsnorm2d_fwd_with_add(out, input, residual_in, residual_out, weight, epsilon, gemma_norm=False,
                           use_model_sensitive_rmsnorm=0):
    """residual_out = input + residual_in; out = RMSNorm(residual_out) (weight + 1 with
    gemma_norm)."""
    runtime, stream = _runtime(out, input, residual_in, residual_out, weight)
    _C.rmsnorm2d_fwd_with_add(runtime, stream, out, input, residual_in, residual_out, weight, epsilon, bool(gemma_norm),
                              use_model_sensitive_rmsnorm)


def layernorm2d_fwd(input, weight, bias, epsilon=1e-5, x_bias=None):
    """LayerNorm of each row: (x - mean) * rsqrt(var + epsilon) * weight + bias, with
    x = input (+ x_bias, rounded to the dtype)."""
    out = _empty_like(input)
    runtime, stream = _runtime(out, input, weight, bias, *([] if x_bias is None else [x_bias]))
    _C.layernorm2d_fwd(runtime, stream, out, input, weight, bias, epsilon, x_bias)
    return out


layer_norm = layernorm2d_fwd


def layernorm2d_fwd_with_add(out, input, residual_in, residual_out, weight, bias, epsilon, x_bias=None):
    """residual_out = input (+ x_bias) + residual_in, rounded once; out = LayerNorm(residual_out)."""
    runtime, stream = _runtime(out, input, residual_in, residual_out, weight, bias,
                               *([] if x_bias is None else [x_bias]))
    _C.layernorm2d_fwd_with_add(runtime, stream, out, input, residual_in, residual_out, weight, bias, epsilon, x_bias)


def _gated(name, out, input, limit=7.0, alpha=1.702):
    runtime, stream = _runtime(out, input)
    _C.gated_activation(runtime, stream, name, out, input, limit, alpha)


def silu_and_mul(out, input):
    """out [M, d] = silu(input[:, :d]) * input[:, d:]."""
    _gated("silu_and_mul", out, input)


def gelu_and_mul(out, input):
    """out = gelu(gate) * up with the exact (erf) GELU."""
    _gated("gelu_and_mul", out, input)


def gelu_tanh_and_mul(out, input):
    """out = gelu(gate) * up with the tanh approximation."""
    _gated("gelu_tanh_and_mul", out, input)


def swiglu(out, input, limit=7.0, alpha=1.702):
    """AITER's MoE Swiglu: gate clamped to <= limit, up to [-limit, limit];
    out = gate * sigmoid(alpha * gate) * (up + 1)."""
    _gated("swiglu", out, input, limit, alpha)


def _mx(out, scales):
    """The out and scales tensors of a quantization: MXFP4 when out is packed fp4
    (torch.float4_e2m1fn_x2, or uint8 bytes), its scales e8m0 (float8_e8m0fnu or uint8)."""
    return _bytes_as(out, language.float4_e2m1fn), _bytes_as(scales, language.float8_e8m0fnu)


def dynamic_per_token_scaled_quant(out, input, scales, num_rows=None, num_rows_factor=1):
    """out (fp8 or int8, by its dtype) = quantize(input / scale) with one f32 scale per row:
    scales[m] = amax(row) / max of out's dtype (1 for an all-zero row). With `num_rows` (an
    int32 tensor of one element on the op's device, read by the kernel) only rows below
    num_rows[0] * num_rows_factor are quantized; later rows of out and scales keep their
    contents (AITER's arguments for graph-captured padded batches)."""
    runtime, stream = _runtime(out, input, scales, *([] if num_rows is None else [num_rows]))
    _C.quant(runtime, stream, "dynamic_per_token_scaled_quant", out, input, scales, 0, 1, False, num_rows,
             num_rows_factor)


def dynamic_per_group_scaled_quant(out, input, scales, group_size=32, shuffle_scale=True, round_mode=1,
                                   num_rows=None, num_rows_factor=1):
    """As per token, with one scale per group of `group_size` (32, 64, 128) columns:
    f32 scales [M, N / group_size]; shuffled (AITER's default) they are transposed in that
    buffer, the scale of (row m, group g) at g * M + m: the K-block-major x_scale of
    gemm_a8w8_blockscale. MXFP4 when `out` is packed fp4 ([M, N/2],
    torch.float4_e2m1fn_x2 or uint8) with group 32: e8m0 `scales` [M, ceil(N/32)], or
    AITER's shuffled layout [roundup(M, 256), roundup(ceil(N/32), 8)] with shuffle_scale;
    round_mode is AITER's MxScaleRoundMode (0 RoundDown, 1 RoundUp, 2 Even, 3 Ceil). MXFP8
    when `out` is fp8 and `scales` e8m0 (float8_e8m0fnu or uint8) [M, N / group_size]:
    shuffled, group 32 takes the MXFP4 layout and 64 or 128 the transposed one.
    num_rows and num_rows_factor as per token (nor are the shuffled scales' padding rows from
    that count on written; not with transposed shuffled scales)."""
    runtime, stream = _runtime(out, input, scales, *([] if num_rows is None else [num_rows]))
    q, s = _mx(out, scales)
    _C.quant(runtime, stream, "dynamic_per_group_scaled_quant", q, input, s, group_size, round_mode,
             bool(shuffle_scale), num_rows, num_rows_factor)


def dynamic_per_group_scaled_quant_fp4(out, input, scales, group_size=32, shuffle_scale=True, round_mode=1,
                                       num_rows=None, num_rows_factor=1):
    """AITER's older MXFP4-only name of dynamic_per_group_scaled_quant: `out` must be packed fp4."""
    if str(out.dtype).removeprefix("torch.") not in ("uint8", "float4_e2m1fn_x2"):
        raise OpError("dynamic_per_group_scaled_quant_fp4: 'out' must be packed fp4 (float4_e2m1fn_x2 or uint8); "
                      "use dynamic_per_group_scaled_quant for fp8 and int8")
    dynamic_per_group_scaled_quant(out, input, scales, group_size, shuffle_scale, round_mode, num_rows,
                                   num_rows_factor)


def per_1x32_f4_quant(input, shuffle=False, round_mode=1):
    """MXFP4 of `input` [M, N] (N even): returns (packed codes [M, N/2] uint8, e8m0
    scales uint8 [M, ceil(N/32)], or shuffled and padded with `shuffle`)."""
    m, n = input.shape
    groups = (n + 31) // 32
    shape = (shuffled_scale_rows(m), shuffled_scale_columns(groups)) if shuffle else (m, groups)
    out = _empty(input, (m, n // 2), lambda mod: mod.uint8)
    # The kernel writes every scale of the rows it covers; only the shuffled layout's padding
    # rows (past M, up to 256) must start at zero. Zeroing otherwise cost a memset launch.
    scales = _empty(input, shape, lambda mod: mod.uint8, zeroed=shuffle)
    dynamic_per_group_scaled_quant(out, input, scales, 32, shuffle, round_mode)
    return out, scales


def shuffled_scale_rows(rows):
    """Rows of shuffled e8m0 scales: padded to 256."""
    return (rows + 255) // 256 * 256


def shuffled_scale_columns(groups):
    """Columns of shuffled e8m0 scales: padded to 8."""
    return (groups + 7) // 8 * 8


def dynamic_per_tensor_quant(out, input, scale):
    """out = quantize(input / scale) with scale[0] = amax(input) / max of out's dtype
    (1 for an all-zero input), written."""
    runtime, stream = _runtime(out, input, scale)
    _C.quant(runtime, stream, "dynamic_per_tensor_quant", out, input, scale, 0, 1, False, None, 1)


def static_per_tensor_quant(out, input, scale):
    """out = quantize(input / scale[0])."""
    runtime, stream = _runtime(out, input, scale)
    _C.quant(runtime, stream, "static_per_tensor_quant", out, input, scale, 0, 1, False, None, 1)


def dequant(input, scales, dtype=None, out=None):
    """input * scale into `out` (or a new tensor of `dtype`, default float32): fp8/int8
    input with f32 scales [1] (per tensor), [M] / [M, 1] (per token) or [M, N / G] (per
    group); or MXFP4 (packed fp4 [M, N/2] as float4_e2m1fn_x2 or uint8, e8m0 scales
    [M, ceil(N/32)] as float8_e8m0fnu or uint8); or MXFP8 (fp8 input, e8m0 scales
    [M, N / G]). `input` may be the extension's tuple form (fp8 codes of a numpy array)."""
    described = isinstance(input, tuple)  # (address, dtype, shape, strides[, read_only])
    packed = not described and str(input.dtype) in ("uint8", "torch.uint8", "torch.float4_e2m1fn_x2")
    shape = input[2] if described else input.shape
    m, n = shape[0], shape[1] * (2 if packed else 1)
    if out is None:
        out = _empty(input, (m, n), lambda mod: dtype or mod.float32)
    runtime, stream = _runtime(out, input, scales)
    _C.dequant(runtime, stream, out, *_mx(input, scales) if packed else
               (input, _bytes_as(scales, language.float8_e8m0fnu)))
    return out


def rmsnorm2d_fwd_with_dynamicquant(out, input, yscale, weight, epsilon, use_model_sensitive_rmsnorm=0,
                                    group_size=0, shuffle_scale=False, round_mode=1):
    """RMSNorm, rounded to the input dtype, then quantized into `out` with scales `yscale`:
    per token (group_size 0), per group (64, 128; or 32 into fp8/int8), or MXFP4 (group 32
    with packed fp4 `out` and e8m0 `yscale`), as the quantization ops define them."""
    runtime, stream = _runtime(out, input, yscale, weight)
    q, s = _mx(out, yscale)
    _C.rmsnorm2d_fwd_dynamicquant(runtime, stream, q, input, None, None, s, weight, epsilon,
                                  use_model_sensitive_rmsnorm, group_size, bool(shuffle_scale), round_mode)


def rmsnorm2d_fwd_with_add_dynamicquant(out, input, residual_in, residual_out, yscale, weight, epsilon,
                                        use_model_sensitive_rmsnorm=0, group_size=0, shuffle_scale=False,
                                        round_mode=1):
    """residual_out = input + residual_in, then rmsnorm2d_fwd_with_dynamicquant of it."""
    runtime, stream = _runtime(out, input, residual_in, residual_out, yscale, weight)
    q, s = _mx(out, yscale)
    _C.rmsnorm2d_fwd_dynamicquant(runtime, stream, q, input, residual_in, residual_out, s, weight, epsilon,
                                  use_model_sensitive_rmsnorm, group_size, bool(shuffle_scale), round_mode)


def fp8_dtype(device=None):
    """The fp8 dtype library ops default to on `device` (a torch device or index; None: the
    current one): float8_e4m3fnuz on gfx942 (what its hardware converts), float8_e4m3fn on
    gfx950 and NVIDIA. AITER's dtypes.fp8."""
    torch = sys.modules.get("torch")
    if torch is None:
        raise OpError("fp8_dtype gives a torch dtype of a GPU: import torch first")
    if device is None:
        index = torch.cuda.current_device()
    else:
        index = (torch.device("cuda", device) if isinstance(device, int) else torch.device(device)).index or 0
    return torch.float8_e4m3fnuz if _gpu(index).device.target == "gfx942" else torch.float8_e4m3fn


def _rope(outs, inputs, cos, sin, positions, offsets, rotate_style, reuse_freqs_front_part, nope_first):
    extra = [t for t in (positions, offsets) if t is not None]
    runtime, stream = _runtime(*outs, *inputs, cos, sin, *extra)
    two = len(inputs) == 2
    _C.rope_cached(runtime, stream, outs[0], inputs[0], outs[1] if two else None, inputs[1] if two else None, cos, sin,
                   positions, offsets, int(rotate_style), bool(reuse_freqs_front_part), bool(nope_first))


def rope_cached_fwd(input, cos, sin, rotate_style=0, reuse_freqs_front_part=False, nope_first=False):
    """Rotary embedding of `input` [S, B, H, D] with cached tables cos, sin [S, 1, 1, F]
    (or [S, F]): rotate_style 0 NeoX, 1 GPT-J; the rotary part is F columns (2F when the
    front part is reused), first or (nope_first) last; the rest is copied. Returns out."""
    out = _empty_like(input)
    _rope([out], [input], cos, sin, None, None, rotate_style, reuse_freqs_front_part, nope_first)
    return out


def rope_cached_positions_fwd(input, cos, sin, positions, rotate_style=0, reuse_freqs_front_part=False,
                              nope_first=False):
    """As rope_cached_fwd with table rows positions[s, b] (int32 or int64 [S, B])."""
    out = _empty_like(input)
    _rope([out], [input], cos, sin, positions, None, rotate_style, reuse_freqs_front_part, nope_first)
    return out


def rope_cached_positions_offsets_fwd(input, cos, sin, positions, offsets, rotate_style=0,
                                      reuse_freqs_front_part=False, nope_first=False):
    """As rope_cached_fwd with table rows positions[s, b] + offsets[s, b]."""
    out = _empty_like(input)
    _rope([out], [input], cos, sin, positions, offsets, rotate_style, reuse_freqs_front_part, nope_first)
    return out


def rope_cached_positions_2c_fwd(input_x, input_y, cos, sin, positions, rotate_style=0,
                                 reuse_freqs_front_part=False, nope_first=False, offsets=None):
    """Queries and keys ([S, B, Hx, D], [S, B, Hy, D]) rotated in one launch; returns both."""
    out_x, out_y = _empty_like(input_x), _empty_like(input_y)
    _rope([out_x, out_y], [input_x, input_y], cos, sin, positions, offsets, rotate_style, reuse_freqs_front_part,
          nope_first)
    return out_x, out_y


def rope_cached_positions_2c_fwd_inplace(input_x, input_y, cos, sin, positions, rotate_style=0,
                                         reuse_freqs_front_part=False, nope_first=False, offsets=None):
    """rope_cached_positions_2c_fwd writing into the inputs."""
    _rope([input_x, input_y], [input_x, input_y], cos, sin, positions, offsets, rotate_style,
          reuse_freqs_front_part, nope_first)


def gemm_a16w16(x, w, bias=None, dtype=None, out=None, config=None):
    """Y = x·wᵀ (+ bias): x [M, K], w [N, K] (bf16 or f16), out [M, N] of `dtype` (bf16, f16
    or float32; default x's), f32 accumulation, one rounding. `config` = (block_m, block_n,
    block_k, stages, warps, split_k[, skinny]) overrides the tuned or default choice for the shape."""
    m, n = x.shape[0], w.shape[0]
    if out is None:
        out = _empty(x, (m, n), lambda mod: dtype or x.dtype)
    runtime, stream = _runtime(out, x, w, *([] if bias is None else [bias]))
    _C.gemm_a16w16(runtime, stream, out, x, w, bias, None if config is None else list(config))
    return out


def _gemm_a8w8(x, w, x_scale, w_scale, bias, dtype, out, preshuffled, config):
    m, n = x.shape[0], w.shape[0]
    if out is None:  # bf16 by default; numpy has none: float32
        out = _empty(x, (m, n), lambda mod: dtype or getattr(mod, "bfloat16", mod.float32))
    runtime, stream = _runtime(out, x, w, x_scale, w_scale, *([] if bias is None else [bias]))
    _C.gemm_a8w8(runtime, stream, out, x, w, x_scale, w_scale, bias, preshuffled,
                 None if config is None else list(config))
    return out


def gemm_a8w8(x, w, x_scale, w_scale, bias=None, dtype=None, out=None, config=None):
    """Y = (x·wᵀ)·x_scale·w_scale (+ bias): x [M, K], w [N, K] fp8 (e4m3fn/fnuz) or int8,
    x_scale f32 [M, 1] or [M] or one, w_scale f32 [1, N], [N, 1] or [N] or one; out [M, N]
    bf16 (default), f16 or float32. `config` as gemm_a16w16's."""
    return _gemm_a8w8(x, w, x_scale, w_scale, bias, dtype, out, False, config)


def gemm_a8w8_bpreshuffle(x, w_shuffled, x_scale, w_scale, bias=None, dtype=None, out=None, config=None):
    """gemm_a8w8 with W as shuffle_weight(w) leaves it (AITER's layout (16, 16)): N a multiple
    of 16, K of 32, contiguous."""
    return _gemm_a8w8(x, w_shuffled, x_scale, w_scale, bias, dtype, out, True, config)


def shuffle_weight(w, layout=(16, 16)):
    """AITER's shuffle_weight: W [N, K] viewed as [N/16, 16, K/(2·KP), 2, KP] (KP elements in
    16 bytes) and permuted to (0, 2, 3, 1, 4), returned [N, K] and contiguous (torch or numpy)."""
    if tuple(layout) != (16, 16):
        raise OpError(f"shuffle_weight: only layout (16, 16) is supported, got {tuple(layout)}")
    n, k = w.shape
    size = w.element_size() if hasattr(w, "element_size") else w.itemsize
    kp = 16 // size
    if n % 16 or k % (2 * kp):
        raise OpError(f"shuffle_weight: W [{n}, {k}] needs N a multiple of 16 and K of {2 * kp}")
    v = w.reshape(n // 16, 16, k // (2 * kp), 2, kp)
    if hasattr(v, "permute"):
        return v.permute(0, 2, 3, 1, 4).contiguous().reshape(n, k)
    return v.transpose(0, 2, 3, 1, 4).copy().reshape(n, k)


def tune_gemm(op, shapes, dtype=None, out_dtype=None, bias=False, table=None, device=0):
    """Tunes `op` ("gemm_a16w16", "gemm_a8w8", "gemm_a8w8_blockscale" or "gemm_a4w4") for each
    (M, N, K) of `shapes` on cuda:`device` (the host with device=None), as `wavetile tune` does
    (docs/tuning.md): every candidate is checked against a double reference, the wrong ones
    dropped, the rest timed. `dtype` and `out_dtype` are dtype names ("bf16", "f16", "f32",
    "f8E4M3FN", "f8E4M3FNUZ", "i8", "f4E2M1FN"; by default bf16 in, e4m3fn for the gemm_a8w8
    ops and f4E2M1FN for gemm_a4w4, and bf16 out). With `table`, the results are merged into that CSV. Returns one dict per
    shape: M, N, K, config (None when every candidate was dropped), us, tried, wrong, failed,
    first_failure, compile_s (the candidates compile first, on every core: wall seconds)."""
    defaults = {"gemm_a16w16": "bf16", "gemm_a8w8": "f8E4M3FN", "gemm_a8w8_blockscale": "f8E4M3FN",
                "gemm_a4w4": "f4E2M1FN"}
    if op not in defaults:
        raise OpError(f"tune_gemm: op must be one of {', '.join(defaults)}, got {op!r}")
    names = {"bf16": language.bf16, "f16": language.f16, "f32": language.f32, "f8E4M3FN": language.float8_e4m3fn,
             "f8E4M3FNUZ": language.float8_e4m3fnuz, "i8": language.i8, "f4E2M1FN": language.float4_e2m1fn}
    dtype = dtype or defaults[op]
    out_dtype = out_dtype or (dtype if op == "gemm_a16w16" else "bf16")
    for name in (dtype, out_dtype):
        if name not in names:
            raise OpError(f"tune_gemm: unknown dtype {name!r} (one of {', '.join(names)})")
    shapes = [tuple(int(d) for d in s) for s in shapes]
    if not shapes or any(len(s) != 3 or min(s) < 1 for s in shapes):
        raise OpError("tune_gemm: shapes are (M, N, K) triples of positive integers")
    key = -1 if device is None else device
    if key not in _RUNTIMES:
        _RUNTIMES[key] = _C.OpRuntime((_HOST.get() if key < 0 else _gpu(key)).device)
    return _C.tune_gemm(_RUNTIMES[key], op, shapes, names[dtype], names[out_dtype], bias, table or "")


def gemm_a8w8_blockscale(x, w, x_scale, w_scale, dtype=None, out=None, config=None):
    """DeepSeek-style block scales: x [M, K], w [N, K] fp8; x_scale f32 [M, ceil(K/128)]
    (row-major, or K-block-major: unit stride along M, as AITER's preshuffled kernels take it),
    w_scale f32 [ceil(N/128), ceil(K/128)]; out [M, N] bf16 (default), f16 or float32. `config`
    as gemm_a16w16's (K steps are the 128-element scale blocks)."""
    if out is None:  # bf16 by default; numpy has none: float32
        out = _empty(x, (x.shape[0], w.shape[0]), lambda mod: dtype or getattr(mod, "bfloat16", mod.float32))
    runtime, stream = _runtime(out, x, w, x_scale, w_scale)
    _C.gemm_a8w8_blockscale(runtime, stream, out, x, w, x_scale, w_scale, None if config is None else list(config))
    return out


def gemm_a4w4(x, w, x_scale, w_scale, bias=None, dtype=None, out=None, config=None):
    """MXFP4 × MXFP4: x [M, K/2], w [N, K/2] packed e2m1 (float4_e2m1fn_x2 or uint8), e8m0
    scales x_scale [M, K/32], w_scale [N, K/32] (float8_e8m0fnu or uint8, not shuffled);
    out [M, N] bf16 (default), f16 or float32. `config` as gemm_a16w16's."""
    if out is None:  # bf16 by default; numpy has none: float32
        out = _empty(x, (x.shape[0], w.shape[0]), lambda mod: dtype or getattr(mod, "bfloat16", mod.float32))
    runtime, stream = _runtime(out, x, w, x_scale, w_scale, *([] if bias is None else [bias]))
    qx, sx = _mx(x, x_scale)
    qw, sw = _mx(w, w_scale)
    _C.gemm_a4w4(runtime, stream, out, qx, qw, sx, sw, bias, None if config is None else list(config))
    return out
