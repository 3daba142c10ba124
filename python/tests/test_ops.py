"""wavetile.ops on the host against numpy references written from AITER's definitions.

Fresh random inputs each run (the seed is printed), padded rows, outputs poisoned with NaN.
"""
import numpy as np
import pytest

import wavetile
from wavetile import host

ops = wavetile.ops
SEED = np.random.SeedSequence().entropy
print("seed", SEED)


def _rng(*salt):
    return np.random.default_rng([SEED % (1 << 63), *salt])


def _encode(values, dtype):
    """float32 values in the storage numpy uses for `dtype`, and their decoded float32."""
    if dtype == "bf16":
        bits = host.to_bf16(values.astype(np.float32))
        return bits, host.from_bf16(bits)
    stored = values.astype(dtype)
    return stored, stored.astype(np.float32)


def _decode(stored, dtype):
    return host.from_bf16(stored) if dtype == "bf16" else stored.astype(np.float32)


def _padded(rows, n, dtype, values):
    """A [rows, n] view into rows of n + 3 elements (the padding poisoned)."""
    stored, decoded = _encode(values, dtype)
    full = np.full((rows, n + 3), stored.flat[0], dtype=stored.dtype)
    full[:, :n] = stored
    return full[:, :n], decoded


def _round(values, dtype):
    return _encode(values.astype(np.float32), dtype)[1].astype(np.float64)


def _nonzero_scales(scales):
    """AITER's rule: a zero quantization scale (an all-zero row, or an amax / max that underflows) becomes 1."""
    return np.where(scales == 0, np.float32(1), scales).astype(np.float32)


def _reference(x, w, eps, dtype, t5=False, gemma=False):
    x = x.astype(np.float64)
    y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    if t5:
        y = _round(y, dtype)
    return y * (w.astype(np.float64) + (1.0 if gemma else 0.0))


def _check(got, expected, dtype, t5=False):
    ulp = {"float32": 0.0, "float16": 2.0 ** -10, "bf16": 2.0 ** -7}[dtype]
    magnitude = np.maximum(1.0, np.abs(expected))
    tolerance = 1e-5 * magnitude if dtype == "float32" else ulp * magnitude * (2.5 if t5 else 1.0)
    assert not np.isnan(got).any()
    worst = np.max(np.abs(got - expected) - tolerance)
    assert worst <= 0, f"max excess error {worst}"
    if dtype != "float32":
        # All but 2% (plus 4 for tiny tensors) equal the rounded reference: f32 sums flip about
        # 1% of f16 LayerNorm roundings on the host, a wrong formula far more.
        inexact = int((got != _round(expected, dtype)).sum())
        assert inexact <= got.size // 50 + 4, f"{inexact} of {got.size} outputs differ from the rounded reference"


SHAPES = [(1, 1), (3, 31), (127, 4096), (1000, 31), (2, 65537), (4, 5120)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bf16"])
@pytest.mark.parametrize("m,n", SHAPES)
def test_rmsnorm2d_fwd(m, n, dtype):
    rng = _rng(m, n, len(dtype))
    x, xf = _padded(m, n, dtype, rng.uniform(-2, 2, (m, n)))
    w, wf = _encode(rng.uniform(0.5, 1.5, n), dtype)
    out = ops.rmsnorm2d_fwd(x, w, 1e-5)
    assert out.shape == (m, n)
    _check(_decode(out, dtype), _reference(xf, wf, 1e-5, dtype), dtype)


@pytest.mark.parametrize("dtype", ["float16", "bf16"])
def test_rmsnorm2d_fwd_model_sensitive(dtype):
    m, n = 64, 3000
    rng = _rng(7, len(dtype))
    x, xf = _padded(m, n, dtype, rng.uniform(-2, 2, (m, n)))
    w, wf = _encode(rng.uniform(0.5, 1.5, n), dtype)
    out = ops.rmsnorm2d_fwd(x, w, 1e-6, use_model_sensitive_rmsnorm=1)
    _check(_decode(out, dtype), _reference(xf, wf, 1e-6, dtype, t5=True), dtype, t5=True)


@pytest.mark.parametrize("gemma", [False, True])
@pytest.mark.parametrize("dtype,m,n", [("bf16", 33, 4096), ("float16", 3, 65537), ("float32", 5, 129)])
def test_rmsnorm2d_fwd_with_add(dtype, m, n, gemma):
    rng = _rng(m, n, int(gemma))
    x, xf = _padded(m, n, dtype, rng.uniform(-2, 2, (m, n)))
    r, rf = _padded(m, n, dtype, rng.uniform(-2, 2, (m, n)))
    w, wf = _encode(rng.uniform(-0.5, 0.5, n) if gemma else rng.uniform(0.5, 1.5, n), dtype)
    poison = _encode(np.full((m, n), np.nan), dtype)[0]
    out, residual_out = poison.copy(), poison.copy()
    ops.rmsnorm2d_fwd_with_add(out, x, r, residual_out, w, 1e-5, gemma_norm=gemma)
    summed = _round(xf.astype(np.float64) + rf, dtype)
    np.testing.assert_array_equal(_decode(residual_out, dtype), summed.astype(np.float32))
    _check(_decode(out, dtype), _reference(summed, wf, 1e-5, dtype, gemma=gemma), dtype)


def test_errors_name_the_op_and_argument():
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(70000, 70000), strides=(280000, 4))
    with pytest.raises(ops.OpError, match="'input' spans 4900000000 elements; library ops take tensors of fewer"):
        ops.rmsnorm2d_fwd_with_add(huge, huge, huge, huge, np.ones(70000, np.float32), 1e-5)
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(ops.OpError, match="rmsnorm2d_fwd: 'weight' must have shape \\[8\\], got \\[7\\]"):
        ops.rmsnorm2d_fwd(x, np.ones(7, np.float32), 1e-5)
    with pytest.raises(ops.OpError, match="'weight' has dtype f16 but input has f32"):
        ops.rmsnorm2d_fwd(x, np.ones(8, np.float16), 1e-5)
    with pytest.raises(ops.OpError, match="unit stride"):
        ops.rmsnorm2d_fwd(np.zeros((8, 4), np.float32).T, np.ones(8, np.float32), 1e-5)
    with pytest.raises(ops.OpError, match="'input' has dtype i32; expected one of f32, f16, bf16"):
        ops.rmsnorm2d_fwd(np.zeros((4, 8), np.int32), np.ones(8, np.int32), 1e-5)
    with pytest.raises(ops.OpError, match="numpy arrays of float64 are not supported"):
        ops.rmsnorm2d_fwd(np.zeros((4, 8)), np.ones(8), 1e-5)
    with pytest.raises(ops.OpError, match="'residual_out' has shape \\[4, 7\\]"):
        ops.rmsnorm2d_fwd_with_add(x.copy(), x, x, np.zeros((4, 7), np.float32), np.ones(8, np.float32), 1e-5)


def test_outputs_are_writable_and_unshared():
    """Read-only arrays and outputs whose elements share memory are refused (a GPU would race
    on the shared ones); a broadcast input is read as it is, into a row-major output."""
    rng = _rng(11)
    x, w = rng.standard_normal((4, 8)).astype(np.float32), np.ones(8, np.float32)
    frozen = np.zeros((4, 8), np.float32)
    frozen.setflags(write=False)
    with pytest.raises(ops.OpError, match="rmsnorm2d_fwd_with_add: 'out' is read-only"):
        ops.rmsnorm2d_fwd_with_add(frozen, x, x.copy(), np.zeros((4, 8), np.float32), w, 1e-5)
    assert not frozen.any()
    codes = np.zeros((4, 16), np.uint8)
    codes.setflags(write=False)  # a byte output travels as (address, dtype, ...): its flag too
    with pytest.raises(ops.OpError, match="'out' is read-only"):
        ops.dynamic_per_group_scaled_quant(codes, np.zeros((4, 32), np.float32), np.zeros((4, 1), np.uint8), 32,
                                           shuffle_scale=False)
    shared = np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), (4, 8), (0, 4), writeable=True)
    with pytest.raises(ops.OpError, match=r"silu_and_mul: 'out' has elements that share memory \(shape \[4, 8\], "
                                          r"strides \[0, 1\]\)"):
        ops.silu_and_mul(shared, np.zeros((4, 16), np.float32))
    one_scale = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (4, 1), (0, 4), writeable=True)
    with pytest.raises(ops.OpError, match="dynamic_per_group_scaled_quant: 'scales' has elements that share memory"):
        ops.dynamic_per_group_scaled_quant(np.zeros((4, 32), np.int8), np.zeros((4, 32), np.float32), one_scale, 32,
                                           shuffle_scale=False)
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(16, np.float32), (4, 8), (8, 4), writeable=True)
    with pytest.raises(ops.OpError, match="'out' has elements that share memory"):
        ops.rmsnorm2d_fwd_with_add(overlapping, x, x.copy(), np.zeros((4, 8), np.float32), w, 1e-5)
    misaligned = np.frombuffer(bytearray(4 * 32 + 1), np.float32, 32, 1).reshape(4, 8)
    with pytest.raises(ops.OpError, match="'input' starts at an address that is not a multiple of its 4-byte elements"):
        ops.rmsnorm2d_fwd(misaligned, w, 1e-5)
    row = rng.standard_normal(8).astype(np.float32)
    broadcast = np.broadcast_to(row, (4, 8))
    out = ops.rmsnorm2d_fwd(broadcast, w, 1e-5)
    assert out.flags.c_contiguous
    _check(out, _reference(np.tile(row, (4, 1)), w, 1e-5, "float32"), "float32")


def test_arguments_read_in_place():
    """The extension reads each tensor itself: numpy arrays through the buffer protocol (strided
    views, bf16 as uint16) and torch tensors through dtype, data_ptr, shape and stride(). Torch
    CPU tensors run on the host; without torch, a stand-in with just those attributes takes the
    same path."""
    import sys
    import types
    real = sys.modules.get("torch")
    if real is None:
        try:
            import torch as real
        except ImportError:
            pass
    rng = _rng(99)
    x, _ = _padded(5, 40, "bf16", rng.standard_normal((5, 40)))
    w, _ = _encode(rng.standard_normal(40), "bf16")
    expected = ops.rmsnorm2d_fwd(x, w, 1e-6)
    assert expected.dtype == np.uint16 and not np.array_equal(expected, np.zeros_like(expected))
    with pytest.raises(ops.OpError, match="buffers of format 'B' are not supported"):
        ops.rmsnorm2d_fwd(x, bytes(80), 1e-6)
    with pytest.raises(ops.OpError, match="expected a torch tensor or a numpy array, got list"):
        ops.rmsnorm2d_fwd_with_add(np.empty_like(expected), x, x, np.empty_like(expected), [0.0] * 40, 1e-6)

    if real is not None:
        torch = real
        as_torch = lambda a: torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)  # noqa: E731
    else:
        class Tensor:  # what the extension and wavetile.ops read of a torch tensor
            def __init__(self, array, dtype):
                self.array, self.dtype, self.shape = array, dtype, array.shape

            def data_ptr(self):
                return self.array.__array_interface__["data"][0]

            def stride(self):
                return tuple(s // self.array.itemsize for s in self.array.strides)

            def get_device(self):
                return -1

        torch = types.ModuleType("torch")
        torch.Tensor, torch.bfloat16 = Tensor, object()
        as_torch = lambda a: Tensor(a, torch.bfloat16)  # noqa: E731
        sys.modules["torch"] = torch
    try:
        out, residual = np.full_like(expected, 0x7FC0), np.full_like(expected, 0x7FC0)
        zero, _ = _encode(np.zeros((5, 40)), "bf16")
        ops.rmsnorm2d_fwd_with_add(as_torch(out), as_torch(x), as_torch(zero), as_torch(residual), as_torch(w), 1e-6)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(residual, x)
        if real is None:
            with pytest.raises(ops.OpError, match="tensors of .* are not supported"):
                ops.rmsnorm2d_fwd_with_add(as_torch(out), as_torch(x), as_torch(zero), as_torch(residual),
                                           Tensor(w, object()), 1e-6)
    finally:
        if real is None:
            del sys.modules["torch"]


def _gated_reference(name, g, u, limit=7.0, alpha=1.702):
    from math import erf
    g, u = g.astype(np.float64), u.astype(np.float64)
    sigmoid = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    if name == "silu_and_mul":
        return g * sigmoid(g) * u
    if name == "gelu_and_mul":
        return 0.5 * g * (1.0 + np.vectorize(erf)(g / np.sqrt(2.0))) * u
    if name == "gelu_tanh_and_mul":
        return 0.5 * g * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (g + 0.044715 * g ** 3))) * u
    gate = np.minimum(g, limit)
    return gate * sigmoid(alpha * gate) * (np.clip(u, -limit, limit) + 1.0)


@pytest.mark.parametrize("name", ["silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "swiglu"])
@pytest.mark.parametrize("dtype,m,d", [("bf16", 5, 2049), ("float16", 3, 64), ("float32", 2, 7)])
def test_gated_activations(name, dtype, m, d):
    rng = _rng(m, d, len(name))
    x, xf = _padded(m, 2 * d, dtype, rng.uniform(-9, 9, (m, 2 * d)))
    out = _encode(np.full((m, d), np.nan), dtype)[0]
    getattr(ops, name)(out, x)
    expected = _gated_reference(name, xf[:, :d], xf[:, d:])
    got = _decode(out, dtype).astype(np.float64)
    ulp = {"float32": 4e-6, "float16": 2.0 ** -10, "bf16": 2.0 ** -7}[dtype]
    assert np.all(np.abs(got - expected) <= ulp * np.maximum(1.0, np.abs(expected))), name


def test_gated_activation_errors():
    with pytest.raises(ops.OpError, match="silu_and_mul: 'input' must have an even number of columns"):
        ops.silu_and_mul(np.zeros((2, 3), np.float32), np.zeros((2, 7), np.float32))
    with pytest.raises(ops.OpError, match="swiglu: 'out' has shape \\[2, 4\\]; expected \\[2, 3\\]"):
        ops.swiglu(np.zeros((2, 4), np.float32), np.zeros((2, 6), np.float32))


@pytest.mark.parametrize("dtype,m,n", [("bf16", 7, 4096), ("float16", 2, 20000), ("float32", 3, 33)])
def test_layernorm2d_fwd(dtype, m, n):
    rng = _rng(m, n, 11)
    x, xf = _padded(m, n, dtype, rng.uniform(1, 5, (m, n)))  # an offset mean: no cancellation allowed
    w, wf = _encode(rng.uniform(0.5, 1.5, n), dtype)
    b, bf = _encode(rng.uniform(-0.5, 0.5, n), dtype)
    out = ops.layernorm2d_fwd(x, w, b, 1e-5)
    xd = xf.astype(np.float64)
    mean = xd.mean(axis=1, keepdims=True)
    expected = (xd - mean) / np.sqrt(((xd - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5) * wf + bf
    _check(_decode(out, dtype), expected, dtype)


def test_layernorm2d_fwd_with_add():
    m, n = 5, 3000
    rng = _rng(m, n, 12)
    x, xf = _padded(m, n, "bf16", rng.uniform(-2, 2, (m, n)))
    r, rf = _padded(m, n, "bf16", rng.uniform(-2, 2, (m, n)))
    w, wf = _encode(rng.uniform(0.5, 1.5, n), "bf16")
    b, bf = _encode(rng.uniform(-0.5, 0.5, n), "bf16")
    poison = _encode(np.full((m, n), np.nan), "bf16")[0]
    out, residual_out = poison.copy(), poison.copy()
    ops.layernorm2d_fwd_with_add(out, x, r, residual_out, w, b, 1e-5)
    summed = _round(xf.astype(np.float64) + rf, "bf16")
    np.testing.assert_array_equal(_decode(residual_out, "bf16"), summed.astype(np.float32))
    mean = summed.mean(axis=1, keepdims=True)
    expected = (summed - mean) / np.sqrt(((summed - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5) * wf + bf
    _check(_decode(out, "bf16"), expected, "bf16")


@pytest.mark.parametrize("group", [0, 32, 128])
def test_int8_quant(group):
    m, n = 6, 1024
    rng = _rng(group, 13)
    x = rng.normal(0, 3, (m, n)).astype(np.float32)
    x[2] = 0  # an all-zero row: scale 1
    # f32 subnormals whose amax / 127 underflows: scale 1 too (AITER replaces a zero scale)
    x[3] = rng.choice([-1, 1], n) * rng.integers(1, 61, n) * np.float32(2.0 ** -149)
    q = np.full((m, n), 99, np.int8)
    if group:
        scales = np.full((m, n // group), np.nan, np.float32)
        ops.dynamic_per_group_scaled_quant(q, x, scales, group, shuffle_scale=False)
        amax = np.abs(x).reshape(m, n // group, group).max(axis=2)
        expected_scales = _nonzero_scales(amax / np.float32(127))
        per_element = np.repeat(expected_scales, group, axis=1)
    else:
        scales = np.full((m, 1), np.nan, np.float32)
        ops.dynamic_per_token_scaled_quant(q, x, scales)
        amax = np.abs(x).max(axis=1, keepdims=True)
        expected_scales = _nonzero_scales(amax / np.float32(127))
        per_element = expected_scales
    np.testing.assert_array_equal(scales, expected_scales)
    expected = np.clip(np.rint(x / per_element), -128, 127).astype(np.int8)  # rint: half to even
    np.testing.assert_array_equal(q, expected)


def _e8m0(amax, mode, largest=6, power=4, half_step=0x200000):
    """AITER's f32_to_mx_e8m0_scale (fp4_utils.py) for f32 group amaxes, e2m1's constants by
    default: RoundUp multiplies by the rounded reciprocal of the largest value (as torch's GPU
    division by a scalar and AITER's kernels do), the other modes divide by a power of two."""
    def exponent(v, ceil):
        bits = v.astype(np.float32).view(np.uint32)
        e = (bits >> 23) & 0xFF
        return np.where(ceil & (e < 0xFF) & ((bits & 0x7FFFFF) != 0), e + 1, e).astype(np.uint8)
    if mode == 1:
        return exponent(amax * np.float32(1 / largest), True)
    if mode == 0:
        return exponent(amax / np.float32(power), False)
    if mode == 3:
        return exponent(amax / np.float32(power), True)
    rounded = ((amax.view(np.uint32) + np.uint32(half_step)) & np.uint32(0xFF800000)).view(np.float32)
    return exponent(rounded / np.float32(power), False)


def _e8m0_inverse(scales, group, n):
    """1 / the value of e8m0 bytes [M, groups] per element [M, n]: byte 0 is AITER's 2^-127;
    255 (a NaN amax) gives 0 here (the references' inputs have none)."""
    inverse = np.ldexp(np.float32(1), 127 - scales.astype(np.int32)).astype(np.float32)
    return np.repeat(np.where(scales == 255, np.float32(0), inverse), group, axis=1)[:, :n]


def _e2m1(v):
    """torchao's bit-level e2m1 rounding (nearest even, saturating at 6, sign kept)."""
    bits = v.astype(np.float32).view(np.uint32)
    sign = bits & np.uint32(0x80000000)
    x = (bits ^ sign).view(np.float32)
    denorm = np.uint32(((127 - 1) + (23 - 1) + 1) << 23)
    low = ((x + denorm.view(np.float32)).view(np.uint32) - denorm).astype(np.uint8)
    b = x.view(np.uint32)
    high = ((b + np.uint32((-126 << 23) & 0xFFFFFFFF) + np.uint32((1 << 21) - 1) + ((b >> 22) & 1)) >> 22)
    code = np.where(x >= 6, 7, np.where(x < 1, low, high.astype(np.uint8)))
    return (code | (sign >> 28)).astype(np.uint8)


def _mxfp4_reference(x, mode):
    m, n = x.shape
    groups = (n + 31) // 32
    padded = np.zeros((m, groups * 32), np.float32)
    padded[:, :n] = x
    scales = _e8m0(np.abs(padded).reshape(m, groups, 32).max(axis=2), mode)
    codes = _e2m1(x * _e8m0_inverse(scales, 32, n))
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8), scales


def _mxfp8_reference(x, group, mode):
    """AITER's per_1x32_f8_scale_f8_quant for groups of `group` (e4m3fn): the e8m0 byte of each
    group's amax with fp8's constants, codes of x / 2^(byte - 127) rounded to nearest even."""
    m, n = x.shape
    amax = np.abs(x).reshape(m, n // group, group).max(axis=2)
    scales = _e8m0(amax, mode, largest=448, power=256, half_step=0x80000)
    return host.to_fp8_e4m3fn(x * _e8m0_inverse(scales, group, n), saturate=True), scales


def _tiled(plain, m, groups):
    """AITER's e8m0_shuffle of [m, groups] bytes, flat: 32-row by 8-group tiles, zeros in the
    padding of the rows up to a multiple of 32."""
    columns = (groups + 7) // 8 * 8
    tiled = np.zeros(((m + 255) // 256 * 256) * columns, np.uint8)
    for r in range(m):
        for g in range(groups):
            index = ((r // 32 * columns) * 32 + (g // 8) * 256 + (g % 4) * 64 + (r % 16) * 4 + (g % 8) // 4 * 2
                     + (r % 32) // 16)
            tiled[index] = plain[r, g]
    return tiled


@pytest.mark.parametrize("dtype,m,n,mode", [("float32", 3, 4096, 1), ("float16", 5, 62, 0), ("bf16", 4, 96, 2),
                                            ("float32", 1, 32, 3), ("bf16", 2, 20000, 1)])
def test_mxfp4_quant_matches_aiter_definition(dtype, m, n, mode):
    rng = _rng(m, n, mode)
    x = (rng.normal(0, 1, (m, n)) * np.exp2(rng.integers(-8, 8, (m, n)) / 2)).astype(np.float32)
    x[0, :32] = rng.choice([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -6.0], 32)  # e2m1 midpoints, scale 1
    stored, x = _encode(x, dtype)
    packed, scales = ops.per_1x32_f4_quant(stored, round_mode=mode)
    expected_packed, expected_scales = _mxfp4_reference(x, mode)
    np.testing.assert_array_equal(scales, expected_scales)
    np.testing.assert_array_equal(packed, expected_packed)


def test_mxfp4_shuffled_scales():
    m, n = 40, 320
    x = _rng(7).normal(0, 2, (m, n)).astype(np.float32)
    _, plain = ops.per_1x32_f4_quant(x)
    _, shuffled = ops.per_1x32_f4_quant(x, shuffle=True)
    assert shuffled.shape == (256, 16)
    np.testing.assert_array_equal(shuffled.reshape(-1), _tiled(plain, m, n // 32))


@pytest.mark.parametrize("dtype,group,shuffle,m,mode", [("bf16", 32, False, 5, 1), ("float16", 64, False, 3, 0),
                                                        ("bf16", 128, True, 4, 1), ("float32", 32, True, 37, 2),
                                                        ("bf16", 64, True, 1, 3)])
def test_mxfp8_quant(dtype, group, shuffle, m, mode):
    """MXFP8 (fp8 `out`, e8m0 `scales`: AITER's emit_e8m0_scale path) byte for byte, its
    shuffled layouts (tiled for groups of 32, transposed for 64 and 128), and dequant back."""
    n = 512
    rng = _rng(group, m, mode, 17)
    x = (rng.normal(0, 1, (m, n)) * np.exp2(rng.integers(-8, 8, (m, n)) / 2)).astype(np.float32)
    x[0, :group] = 0  # an all-zero group: byte 0, codes 0
    x[-1, group:2 * group] = 448 * np.exp2(rng.integers(-4, 4))  # amax exactly 448 times a power of two
    stored, x = _encode(x, dtype)
    expected_codes, expected_scales = _mxfp8_reference(x, group, mode)
    groups = n // group
    codes = np.full((m, n), 0x6B, np.uint8)
    tiled = shuffle and group == 32
    scales = np.full((((m + 255) // 256 * 256), (groups + 7) // 8 * 8) if tiled else (m, groups), 0x55, np.uint8)
    fp8 = wavetile.language.float8_e4m3fn
    ops.dynamic_per_group_scaled_quant(_fp8_out(codes, fp8), stored, scales, group, shuffle, mode)
    np.testing.assert_array_equal(codes, expected_codes)
    if tiled:  # the kernel writes the rows up to a multiple of 32; the rest of the padding is the caller's
        covered = (m + 31) // 32 * 32 * scales.shape[1]
        np.testing.assert_array_equal(scales.reshape(-1)[:covered], _tiled(expected_scales, m, groups)[:covered])
        assert (scales.reshape(-1)[covered:] == 0x55).all()
    elif shuffle:
        np.testing.assert_array_equal(scales.reshape(-1), expected_scales.T.reshape(-1))
    else:
        np.testing.assert_array_equal(scales, expected_scales)
        y = ops.dequant(_fp8_out(codes, fp8), scales)
        expected = host.from_fp8_e4m3fn(codes) * np.repeat(np.exp2(scales.astype(np.float32) - 127), group, axis=1)
        np.testing.assert_array_equal(y, expected)
        with pytest.raises(ops.OpError, match="e8m0 'scales' of fp8 input must be"):
            ops.dequant(_fp8_out(codes, fp8), scales[:, :1])
    with pytest.raises(ops.OpError, match="MXFP8 quantizes groups of 32, 64 or 128, got group_size 16"):
        ops.dynamic_per_group_scaled_quant(_fp8_out(codes, fp8), stored, scales, 16, False)


@pytest.mark.parametrize("group,shuffle", [(64, False), (32, True)])
def test_mxfp8_num_rows(group, shuffle):
    """MXFP8 with AITER's num_rows: the rows below count * factor as without it, the rest (and,
    tiled, their padding) untouched."""
    m, n, count, factor = 9, 256, 2, 2
    x = _rng(group, 18).normal(0, 3, (m, n)).astype(np.float32)
    rows, groups = (m + 255) // 256 * 256 if shuffle else m, n // group
    runs = []
    for num_rows in (np.array([count], np.int32), None):
        codes = np.full((m, n), 0x6B, np.uint8)
        scales = np.full((rows, (groups + 7) // 8 * 8 if shuffle else groups), 0x55, np.uint8)
        ops.dynamic_per_group_scaled_quant(_fp8_out(codes, wavetile.language.float8_e4m3fn), x, scales, group,
                                           shuffle, num_rows=num_rows, num_rows_factor=factor)
        runs.append((codes, scales))
    (codes, scales), (all_codes, all_scales) = runs
    quantized = count * factor
    np.testing.assert_array_equal(codes[:quantized], all_codes[:quantized])
    assert (codes[quantized:] == 0x6B).all() and (all_codes[quantized:] != 0x6B).any()
    if shuffle:  # the tiled bytes of the quantized rows (a 32-row tile holds them all here)
        expected = _tiled(_mxfp8_reference(x, group, 1)[1][:quantized], quantized, groups)
        written = scales.reshape(-1) != 0x55
        np.testing.assert_array_equal(scales.reshape(-1)[written], expected[written])
        assert written.sum() == quantized * groups
    else:
        np.testing.assert_array_equal(scales[:quantized], all_scales[:quantized])
        assert (scales[quantized:] == 0x55).all()


def test_dynamic_per_tensor_quant():
    m, n = 700, 33
    x = _rng(3).normal(0, 3, (m, n)).astype(np.float32)
    q = np.full((m, n), 99, np.int8)
    scale = np.full(1, np.nan, np.float32)
    ops.dynamic_per_tensor_quant(q, x, scale)
    expected_scale = np.float32(np.abs(x).max()) / np.float32(127)
    assert scale[0] == expected_scale
    np.testing.assert_array_equal(q, np.clip(np.rint(x / expected_scale), -128, 127).astype(np.int8))


@pytest.mark.parametrize("group", [0, 128])
def test_rmsnorm_with_dynamicquant(group):
    m, n = 5, 1024
    rng = _rng(group, 17)
    x, residual = rng.normal(0, 2, (2, m, n)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    q = np.full((m, n), 99, np.int8)
    residual_out = np.full((m, n), np.nan, np.float32)
    scales = np.full((m, n // group) if group else (m, 1), np.nan, np.float32)
    ops.rmsnorm2d_fwd_with_add_dynamicquant(q, x, residual, residual_out, scales, w, 1e-5, group_size=group)
    # AITER's check: the reference norm then per-row / per-group amax / 127, int8 within 1.
    summed = x + residual
    np.testing.assert_array_equal(residual_out, summed)
    y = summed / np.sqrt((summed.astype(np.float64) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w
    span = group or n
    amax = np.abs(y).reshape(m, n // span, span).max(axis=2)
    np.testing.assert_allclose(scales.reshape(m, -1), amax / 127, rtol=1e-5)
    expected = np.rint(y / np.repeat(amax / 127, span, axis=1))
    assert np.abs(q.astype(np.int32) - expected).max() <= 1
    # And exactly the two ops composed.
    normalized = np.empty_like(x)
    ops.rmsnorm2d_fwd_with_add(normalized, x, residual, np.empty_like(x), w, 1e-5)
    q2, scales2 = np.empty_like(q), np.empty_like(scales)
    if group:
        ops.dynamic_per_group_scaled_quant(q2, normalized, scales2, group, shuffle_scale=False)
    else:
        ops.dynamic_per_token_scaled_quant(q2, normalized, scales2)
    np.testing.assert_array_equal(q, q2)
    np.testing.assert_array_equal(scales, scales2)


@pytest.mark.parametrize("group,count,factor", [(0, 2, 2), (128, 1, 3), (32, 5, 1), (0, 0, 4), (32, 7, 9),
                                                 (128, -3, 2)])
def test_quant_num_rows(group, count, factor):
    """AITER's num_rows (int32, one element, read by the kernel) times num_rows_factor: the
    rows below quantized as without it, the rest untouched (per token, per group, MXFP4)."""
    m, n = 7, 256
    x = _rng(group, abs(count), 14).normal(0, 3, (m, n)).astype(np.float32)
    quantized = max(0, min(m, count * factor))  # a negative count: none
    mx = group == 32
    q = np.full((m, n // 2 if mx else n), 0x6B, np.uint8 if mx else np.int8)
    scales = np.full((m, n // 32) if mx else (m, n // group if group else 1), 0x55 if mx else np.nan,
                     np.uint8 if mx else np.float32)
    q_all, scales_all = q.copy(), scales.copy()
    num_rows = np.array(count, np.int32)  # AITER passes torch.tensor(tokens, dtype=torch.int)
    if group:
        ops.dynamic_per_group_scaled_quant(q, x, scales, group, False, num_rows=num_rows, num_rows_factor=factor)
        ops.dynamic_per_group_scaled_quant(q_all, x, scales_all, group, False)
    else:
        ops.dynamic_per_token_scaled_quant(q, x, scales, num_rows=num_rows, num_rows_factor=factor)
        ops.dynamic_per_token_scaled_quant(q_all, x, scales_all)
    np.testing.assert_array_equal(q[:quantized], q_all[:quantized])
    np.testing.assert_array_equal(scales[:quantized], scales_all[:quantized])
    assert (q[quantized:] == 0x6B).all()
    assert (scales[quantized:] == 0x55).all() if mx else np.isnan(scales[quantized:]).all()
    if mx:  # and the full run is the definition
        codes, expected_scales = _mxfp4_reference(x, 1)
        np.testing.assert_array_equal(q_all, codes)
        np.testing.assert_array_equal(scales_all, expected_scales)


@pytest.mark.parametrize("group,m", [(32, 37), (128, 5), (64, 1)])
def test_group_quant_shuffled_scales(group, m):
    """AITER's defaults (group 32, shuffle_scale=True): f32 group scales transposed in their
    [M, N / group] buffer, the scale of (row r, group g) at g * M + r; the codes as unshuffled.
    The transposed view of a [N / group, M] buffer holds the same memory."""
    n = 512
    x = _rng(group, m, 15).normal(0, 3, (m, n)).astype(np.float32)
    q, plain = np.full((m, n), 0x6B, np.int8), np.full((m, n // group), np.nan, np.float32)
    ops.dynamic_per_group_scaled_quant(q, x, plain, group, shuffle_scale=False)
    shuffled_q, shuffled = np.full_like(q, 0x6B), np.full_like(plain, np.nan)
    if group == 32:
        ops.dynamic_per_group_scaled_quant(shuffled_q, x, shuffled)
    else:
        ops.dynamic_per_group_scaled_quant(shuffled_q, x, shuffled, group)
    np.testing.assert_array_equal(shuffled_q, q)
    np.testing.assert_array_equal(shuffled.reshape(-1), plain.T.reshape(-1))
    for shuffle in (True, False):  # a transposed view: the same block of memory either way
        block = np.full((n // group, m), np.nan, np.float32)
        ops.dynamic_per_group_scaled_quant(np.empty_like(q), x, block.T, group, shuffle_scale=shuffle)
        np.testing.assert_array_equal(block.T, plain)
    # Unshuffled, a K-block-major view is addressed as it is, with a row count too.
    block = np.full((n // group, m), np.nan, np.float32)
    rows = (m + 1) // 2
    ops.dynamic_per_group_scaled_quant(np.empty_like(q), x, block.T, group, shuffle_scale=False,
                                       num_rows=np.array([rows], np.int32))
    np.testing.assert_array_equal(block.T[:rows], plain[:rows])
    assert np.isnan(block.T[rows:]).all()
    with pytest.raises(ops.OpError, match="shuffled f32 'scales' must be one contiguous block"):
        ops.dynamic_per_group_scaled_quant(q, x, np.zeros((m, 2 * n // group), np.float32)[:, ::2], group)
    with pytest.raises(ops.OpError, match=r"num_rows is not supported with shuffled \(transposed\) f32 scales"):
        ops.dynamic_per_group_scaled_quant(q, x, plain, group, num_rows=np.array([1], np.int32))
    frozen = np.zeros_like(plain)
    frozen.setflags(write=False)
    with pytest.raises(ops.OpError, match="'scales' is read-only"):
        ops.dynamic_per_group_scaled_quant(q, x, frozen, group)
    assert not frozen.any()


def test_group_quant_fp4_name():
    """AITER's older MXFP4-only name, with its defaults (group 32, shuffled e8m0 scales)."""
    x = _rng(16).normal(0, 3, (9, 96)).astype(np.float32)
    codes, scales = ops.per_1x32_f4_quant(x, shuffle=True)
    got, got_scales = np.full_like(codes, 0x6B), np.zeros_like(scales)
    ops.dynamic_per_group_scaled_quant_fp4(got, x, got_scales)
    np.testing.assert_array_equal(got, codes)
    np.testing.assert_array_equal(got_scales, scales)
    with pytest.raises(ops.OpError, match="'out' must be packed fp4"):
        ops.dynamic_per_group_scaled_quant_fp4(np.zeros((9, 96), np.int8), x, np.zeros((9, 3), np.float32))


def test_quant_errors():
    x = np.zeros((4, 64), np.float32)
    with pytest.raises(ops.OpError, match="MXFP4 quantizes groups of 32, got group_size 64"):
        ops.dynamic_per_group_scaled_quant(np.zeros((4, 32), np.uint8), x, np.zeros((4, 1), np.uint8), 64)
    with pytest.raises(ops.OpError, match="round_mode must be 0"):
        ops.per_1x32_f4_quant(x, round_mode=7)
    q, s = np.zeros((4, 64), np.int8), np.zeros(4, np.float32)
    with pytest.raises(ops.OpError, match="'num_rows' has dtype i64; it must be i32"):
        ops.dynamic_per_token_scaled_quant(q, x, s, num_rows=np.array([2]))
    with pytest.raises(ops.OpError, match=r"num_rows_factor must be in \[0, 2\^31\), got -2"):
        ops.dynamic_per_token_scaled_quant(q, x, s, num_rows=np.array([2], np.int32), num_rows_factor=-2)


def _rope_reference(x, freqs_cos, freqs_sin, style, reuse, nope_first):
    """AITER's ref_rope_sbhd_fwd in float64 (tables already gathered per token: [S, B, 1, F])."""
    d, f = x.shape[-1], freqs_cos.shape[-1]
    r = f * (2 if reuse else 1)
    rot = x[..., d - r:] if nope_first else x[..., :r]
    cos, sin = freqs_cos, freqs_sin
    if reuse:
        cos, sin = ((np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)) if style == 0
                    else (np.repeat(cos, 2, -1), np.repeat(sin, 2, -1)))
    if style == 0:
        rotated = np.concatenate([-rot[..., r // 2:], rot[..., :r // 2]], -1)
    else:
        rotated = np.stack([-rot[..., 1::2], rot[..., 0::2]], -1).reshape(rot.shape)
    embedded = rot * cos + rotated * sin
    return (np.concatenate([x[..., :d - r], embedded], -1) if nope_first
            else np.concatenate([embedded, x[..., r:]], -1))


@pytest.mark.parametrize("style,reuse,nope_first,positions", [(0, False, False, False), (0, True, False, True),
                                                              (1, False, True, True), (1, True, True, False),
                                                              (0, True, True, True)])
def test_rope_cached(style, reuse, nope_first, positions):
    s, b, h, d = 5, 3, 4, 96
    f = 24 if reuse else 48
    rng = _rng(style, reuse, nope_first, positions)
    x = rng.normal(0, 1, (s, b, h, d)).astype(np.float32)
    rows = 40 if positions else s
    angles = rng.uniform(-6, 6, (rows, 1, 1, f))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    pos = rng.integers(0, rows, (s, b)).astype(np.int64)
    if positions:
        out = ops.rope_cached_positions_fwd(x, cos, sin, pos, style, reuse, nope_first)
        gathered_cos, gathered_sin = cos[pos, 0], sin[pos, 0]
    else:
        out = ops.rope_cached_fwd(x, cos, sin, style, reuse, nope_first)
        gathered_cos, gathered_sin = cos[:, None, 0], sin[:, None, 0]
    expected = _rope_reference(x.astype(np.float64), gathered_cos, gathered_sin, style, reuse, nope_first)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_rope_two_tensors_in_place_with_offsets():
    s, b, hx, hy, d = 3, 2, 8, 2, 64
    rng = _rng(11)
    qkv = rng.normal(0, 1, (s, b, hx + 2 * hy, d)).astype(np.float32)
    q, k = qkv[:, :, :hx], qkv[:, :, hx:hx + hy]
    before = qkv.copy()
    angles = rng.uniform(-6, 6, (64, d // 2))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    pos, off = rng.integers(0, 32, (s, b)), rng.integers(0, 32, (s, b))
    ops.rope_cached_positions_2c_fwd_inplace(q, k, cos, sin, pos, 0, True, False, offsets=off)
    rows = pos + off
    for tensor, lo, hi in ((q, 0, hx), (k, hx, hx + hy)):
        expected = _rope_reference(before[:, :, lo:hi].astype(np.float64), cos[rows][:, :, None], sin[rows][:, :, None],
                                   0, True, False)
        np.testing.assert_allclose(tensor, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(qkv[:, :, hx + hy:], before[:, :, hx + hy:])  # v untouched


def test_rope_errors():
    x = np.zeros((2, 2, 4, 64), np.float32)
    table = np.zeros((8, 1, 1, 48), np.float32)
    with pytest.raises(ops.OpError, match="rotary dimension 96"):
        ops.rope_cached_fwd(x, table, table, 0, True)
    with pytest.raises(ops.OpError, match="rotate_style must be 0"):
        ops.rope_cached_fwd(x, table[..., :32], table[..., :32], 2)


def test_layernorm_x_bias():
    m, n = 4, 300
    rng = _rng(5)
    x, w, bias, x_bias = (rng.normal(0, 1, (m, n)).astype(np.float32), rng.normal(0, 1, n).astype(np.float32),
                          rng.normal(0, 1, n).astype(np.float32), rng.normal(0, 1, n).astype(np.float32))
    out = ops.layernorm2d_fwd(x, w, bias, 1e-5, x_bias=x_bias)
    biased = (x + x_bias).astype(np.float64)
    mean = biased.mean(axis=1, keepdims=True)
    expected = (biased - mean) / np.sqrt(((biased - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w + bias
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


def test_dequant_round_trips_mxfp4_and_int8():
    x = _rng(21).normal(0, 2, (6, 96)).astype(np.float32)
    packed, scales = ops.per_1x32_f4_quant(x)
    y = ops.dequant(packed, scales)
    codes = np.stack([packed & 15, packed >> 4], -1).reshape(6, 96)
    e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)
    expected = e2m1[codes] * np.repeat(np.exp2(scales.astype(np.float32) - 127), 32, axis=1)
    np.testing.assert_array_equal(y, expected)
    q, s = np.empty((6, 96), np.int8), np.empty((6, 1), np.float32)
    ops.dynamic_per_token_scaled_quant(q, x, s)
    np.testing.assert_array_equal(ops.dequant(q, s), q.astype(np.float32) * s)


@pytest.mark.parametrize("m,n,k,split", [(1, 100, 72, None), (17, 130, 200, None), (3, 96, 1100, 3)])
def test_gemm_a16w16(m, n, k, split):
    rng = _rng(m, n, k)
    x, w = rng.normal(0, 1, (m, k)).astype(np.float32), rng.normal(0, 1, (n, k)).astype(np.float32)
    bias = rng.normal(0, 1, n).astype(np.float32)
    xs, xr = _encode(x, "bf16")
    ws, wr = _encode(w, "bf16")
    config = None if split is None else (16, 64, 64, 2, 4, split)
    y = ops.gemm_a16w16(xs, ws, bias, dtype=np.float32, config=config)
    expected = xr.astype(np.float64) @ wr.astype(np.float64).T + bias
    magnitude = np.abs(xr.astype(np.float64)) @ np.abs(wr.astype(np.float64)).T
    assert np.all(np.abs(y - expected) <= 2e-5 * magnitude + 1e-6)
    with pytest.raises(ops.OpError, match="but 'x' has K"):
        ops.gemm_a16w16(xs, ws[:, :k - 1].copy(), dtype=np.float32)


def test_gemm_a8w8_int8():
    rng = _rng(8, 8)
    x = rng.integers(-128, 128, (5, 96)).astype(np.int8)
    w = rng.integers(-128, 128, (40, 96)).astype(np.int8)
    xs, ws = rng.uniform(0.01, 0.1, (5, 1)).astype(np.float32), rng.uniform(0.01, 0.1, (1, 40)).astype(np.float32)
    y = ops.gemm_a8w8(x, w, xs, ws)
    expected = (x.astype(np.float64) @ w.astype(np.float64).T) * xs * ws
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("config", [(1, 16, 64, 1, 4, 2, 1), (16, 32, 32, 2, 4, 1)])
def test_gemm_a8w8_takes_a_config(config):
    # A skinny split (exact byte-product sums) and a matrix-instruction tile, plain and preshuffled.
    rng = _rng(8, 9)
    x = rng.integers(-128, 128, (3, 160)).astype(np.int8)
    w = rng.integers(-128, 128, (32, 160)).astype(np.int8)
    xs, ws = rng.uniform(0.01, 0.1, (3, 1)).astype(np.float32), rng.uniform(0.01, 0.1, (1, 32)).astype(np.float32)
    expected = (x.astype(np.float64) @ w.astype(np.float64).T) * xs * ws
    for y in (ops.gemm_a8w8(x, w, xs, ws, dtype=np.float32, config=config),
              ops.gemm_a8w8_bpreshuffle(x, ops.shuffle_weight(w), xs, ws, dtype=np.float32, config=config)):
        np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(ops.OpError, match=r"gemm_a8w8: config is \(block_m"):
        ops.gemm_a8w8(x, w, xs, ws, config=(16, 64))
    with pytest.raises(ops.OpError, match=r"gemm_a8w8_blockscale: config is \(block_m"):
        ops.gemm_a8w8_blockscale(x, w, xs, ws, config=(16,))


def test_gemm_a8w8_bpreshuffle_matches_the_plain_layout():
    rng = _rng(8, 16)
    x = rng.integers(-128, 128, (7, 96)).astype(np.int8)
    w = rng.integers(-128, 128, (48, 96)).astype(np.int8)
    xs, ws = rng.uniform(0.01, 0.1, (7, 1)).astype(np.float32), rng.uniform(0.01, 0.1, (1, 48)).astype(np.float32)
    shuffled = ops.shuffle_weight(w)
    # AITER's layout: 16 rows of the first 16 bytes of a 32-column tile, then of the next 16.
    assert np.array_equal(shuffled.reshape(-1)[:16 * 16].reshape(16, 16), w[:16, :16])
    assert np.array_equal(shuffled.reshape(-1)[16 * 16:2 * 16 * 16].reshape(16, 16), w[:16, 16:32])
    assert np.array_equal(shuffled.reshape(-1)[2 * 16 * 16:3 * 16 * 16].reshape(16, 16), w[:16, 32:48])
    y = ops.gemm_a8w8_bpreshuffle(x, shuffled, xs, ws, dtype=np.float32)
    np.testing.assert_array_equal(y, ops.gemm_a8w8(x, w, xs, ws, dtype=np.float32))
    expected = (x.astype(np.float64) @ w.astype(np.float64).T) * xs * ws
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(ops.OpError, match="N a multiple of 16 and K of 32"):
        ops.shuffle_weight(w[:40])
    with pytest.raises(ops.OpError, match="a preshuffled 'w' needs N a multiple of 16"):
        ops.gemm_a8w8_bpreshuffle(x, w[:40], xs, ws[:, :40])


def test_tune_gemm_writes_checked_rows(tmp_path):
    table = tmp_path / "gemm_a8w8.csv"
    table.write_text("target,cu_num,M,N,K,dtype,out_dtype,bias,block_m,block_n,block_k,stages,warps,split_k,skinny,us\n"
                     "sm_90,132,64,64,64,i8,bf16,0,16,64,64,3,4,1,0,1.00\n")
    rows = ops.tune_gemm("gemm_a8w8", [(2, 24, 130)], dtype="i8", table=str(table), device=None)
    assert len(rows) == 1 and rows[0]["config"] is not None and rows[0]["wrong"] == 0
    assert rows[0]["tried"] > rows[0]["failed"] and rows[0]["us"] > 0 and rows[0]["compile_s"] > 0
    lines = table.read_text().splitlines()
    assert lines[1].startswith("host,") and ",2,24,130,i8,bf16,0," in lines[1]
    assert lines[2].startswith("sm_90,132,64,")  # other rows are kept
    with pytest.raises(ops.OpError, match="unknown dtype 'fp8'"):
        ops.tune_gemm("gemm_a8w8", [(2, 24, 130)], dtype="fp8", device=None)
    with pytest.raises(ops.OpError, match="triples"):
        ops.tune_gemm("gemm_a16w16", [(2, 24)], device=None)
    with pytest.raises(ops.OpError, match="one of gemm_a16w16, gemm_a8w8, gemm_a8w8_blockscale, gemm_a4w4"):
        ops.tune_gemm("gemm_a8w8_bpreshuffle", [(2, 24, 128)], device=None)
    with pytest.raises(ops.OpError, match="takes no bias"):
        ops.tune_gemm("gemm_a8w8_blockscale", [(2, 24, 128)], bias=True, device=None)
    with pytest.raises(ops.OpError, match="K a multiple of 32"):  # MXFP4 scales cover 32 of K
        ops.tune_gemm("gemm_a4w4", [(2, 24, 80)], device=None)


@pytest.mark.parametrize("config", [None, (1, 16, 256, 1, 4, 2, 1), (16, 32, 128, 3, 4, 1)])
def test_gemm_a4w4_round_trips_quantized_operands(config):
    # The default, a skinny split (f32 products) and a ring of matrix-instruction tiles.
    rng = _rng(44)
    x, w = rng.normal(0, 1, (5, 512)).astype(np.float32), rng.normal(0, 1, (24, 512)).astype(np.float32)
    (qx, sx), (qw, sw) = ops.per_1x32_f4_quant(x), ops.per_1x32_f4_quant(w)
    y = ops.gemm_a4w4(qx, qw, sx, sw, dtype=np.float32, config=config)
    # The product of the dequantized operands, from wavetile.ops.dequant (tested separately).
    expected = ops.dequant(qx, sx).astype(np.float64) @ ops.dequant(qw, sw).astype(np.float64).T
    magnitude = np.abs(ops.dequant(qx, sx)).astype(np.float64) @ np.abs(ops.dequant(qw, sw)).astype(np.float64).T
    assert np.all(np.abs(y - expected) <= 2e-5 * magnitude + 1e-6)


def test_gemm_a4w4_refuses_a_malformed_config():
    q, s = np.zeros((2, 32), np.uint8), np.full((2, 2), 127, np.uint8)
    with pytest.raises(ops.OpError, match=r"config is \(block_m"):
        ops.gemm_a4w4(q, q, s, s, config=(16, 64))
    with pytest.raises(ops.OpError, match="skinny tiles hold at most 16 rows"):
        ops.gemm_a4w4(q, q, s, s, config=(32, 64, 128, 1, 4, 1, 1))


# GELU gates at odd widths, static quantization, the quantizing RMSNorm without the add, RoPE
# with offsets and two tensors out of place, fp8_dtype.

def _gelu_reference(name, g, u):
    """torch's GELUs in float64: exact (erf) and the tanh approximation."""
    from math import erf
    g, u = g.astype(np.float64), u.astype(np.float64)
    if name == "gelu_and_mul":
        return 0.5 * g * (1.0 + np.vectorize(erf)(g / np.sqrt(2.0))) * u
    return 0.5 * g * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (g + 0.044715 * g ** 3))) * u


def _poisoned_out(m, n, dtype):
    """A NaN-filled [m, n] view into rows of n + 5 (the padding checked afterwards)."""
    full = _encode(np.full((m, n + 5), np.nan), dtype)[0]
    return full, full[:, :n]


@pytest.mark.parametrize("name", ["gelu_and_mul", "gelu_tanh_and_mul"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bf16"])
@pytest.mark.parametrize("m,d", [(5, 31), (3, 4097)])
def test_gelu_gates_odd_widths(name, dtype, m, d):
    rng = _rng(m, d, len(name), len(dtype), 31)
    x, xf = _padded(m, 2 * d, dtype, rng.normal(0, 2.5, (m, 2 * d)))
    full, out = _poisoned_out(m, d, dtype)
    before = full.copy()
    getattr(ops, name)(out, x)
    np.testing.assert_array_equal(full[:, d:].view(np.uint8), before[:, d:].view(np.uint8), f"padding, seed {SEED}")
    expected = _gelu_reference(name, xf[:, :d], xf[:, d:])
    got = _decode(out, dtype).astype(np.float64)
    ulp = {"float32": 4e-6, "float16": 2.0 ** -10, "bf16": 2.0 ** -7}[dtype]
    excess = np.abs(got - expected) - ulp * np.maximum(1.0, np.abs(expected))
    assert not np.isnan(got).any() and excess.max() <= 0, f"{name}: max excess {excess.max()}, seed {SEED}"
    if dtype != "float32":  # docs/ops.md: all but 1% (+4) of outputs >= 1 equal the rounded reference
        large = np.abs(expected) >= 1
        inexact = int((got[large] != _round(expected[large], dtype)).sum())
        assert inexact <= large.sum() // 100 + 4, f"{name}: {inexact} of {large.sum()} inexact, seed {SEED}"


def _fp8_out(q, fmt):
    """A uint8 array as the (address, dtype, shape, strides) the extension reads as `fmt`."""
    return (q.__array_interface__["data"][0], fmt, list(q.shape), list(q.strides))


@pytest.mark.parametrize("dtype,m,n,out_fmt,ties", [("float32", 600, 2051, "i8", False), ("bf16", 7, 2051, "i8", True),
                                                    ("float16", 5, 33, "i8", True),
                                                    ("float32", 9, 2051, "e4m3fn", False)])
def test_static_per_tensor_quant(dtype, m, n, out_fmt, ties):
    rng = _rng(m, n, len(dtype), 41)
    values = rng.normal(0, 3, (m, n))
    if ties:  # exact halves of a power-of-two scale (half to even) and values past the clamp
        scale = np.float32(2.0 ** -3)
        flat = values.reshape(-1)  # rows and a row's tail alike
        flat[:120] = (np.arange(-60, 60) + 0.5) * scale
        flat[120:128] = np.array([127.5, -128.5, 200, -200, 1e4, -1e4, 127.25, -128.25]) * scale
    x, xf = _padded(m, n, dtype, values)
    if not ties:  # past the range: int8 clamps, e4m3fn saturates at 448
        scale = np.float32(np.abs(xf).max() / (150 if out_fmt == "i8" else 500))
    scale_array = np.array([scale], np.float32)
    quotient = xf / scale  # the correctly rounded f32 quotient
    if out_fmt == "i8":
        full = np.full((m, n + 5), 0x5A, np.int8)
        ops.static_per_tensor_quant(full[:, :n], x, scale_array)
        expected = np.clip(np.rint(quotient), -128, 127).astype(np.int8)  # rint: half to even
    else:
        full = np.full((m, n + 5), 0xFF, np.uint8)
        ops.static_per_tensor_quant(_fp8_out(full[:, :n], wavetile.language.float8_e4m3fn), x, scale_array)
        expected = host.to_fp8_e4m3fn(quotient, saturate=True)
    assert np.abs(quotient).max() > (127 if out_fmt == "i8" else 448)  # the clamp is reached
    np.testing.assert_array_equal(full[:, :n], expected, f"seed {SEED}")
    assert np.all(full[:, n:] == full.dtype.type(0x5A if out_fmt == "i8" else 0xFF)), "wrote past the rows"
    assert scale_array[0] == scale  # an input, left alone


@pytest.mark.parametrize("dtype,m,n,group,t5", [("bf16", 6, 4097, 0, 0), ("float16", 4, 4097, 0, 1),
                                                ("float32", 5, 31, 0, 0), ("bf16", 4, 1536, 128, 0)])
def test_rmsnorm_dynamicquant_without_add(dtype, m, n, group, t5):
    rng = _rng(m, n, group, t5, 43)
    values = rng.normal(0, 2, (m, n))
    values[1] = 0  # an all-zero row: scale 1
    x, xf = _padded(m, n, dtype, values)
    w, wf = _encode(rng.uniform(0.5, 1.5, n), dtype)
    span = group or n
    full = np.full((m, n + 5), 99, np.int8)
    q = full[:, :n]
    scales = np.full((m, n // group) if group else (m,), np.nan, np.float32)
    ops.rmsnorm2d_fwd_with_dynamicquant(q, x, scales, w, 1e-5, use_model_sensitive_rmsnorm=t5, group_size=group)
    assert np.all(full[:, n:] == 99), "wrote past the rows"
    # Independent: the norm in float64 rounded to the dtype, then amax / 127 and half-to-even codes.
    y = _round(_reference(xf, wf, 1e-5, dtype, t5=bool(t5)), dtype).astype(np.float32)
    amax = np.abs(y).reshape(m, n // span, span).max(axis=2)
    expected_scales = _nonzero_scales(amax / np.float32(127))
    rtol = {"float32": 1e-5, "float16": 2.0 ** -10, "bf16": 2.0 ** -7}[dtype]  # one rounding of the amax
    np.testing.assert_allclose(scales.reshape(m, -1), expected_scales, rtol=rtol, err_msg=f"seed {SEED}")
    assert np.all(scales.reshape(m, -1)[1] == 1)
    expected = np.clip(np.rint(y / np.repeat(expected_scales, span, axis=1)), -128, 127)
    diff = np.abs(q.astype(np.int32) - expected)
    assert diff.max() <= 1, f"codes off by {diff.max()}, seed {SEED}"
    assert int((diff != 0).sum()) <= q.size // 50 + 4, f"{int((diff != 0).sum())} of {q.size} codes differ, seed {SEED}"
    # And on the host exactly rmsnorm2d_fwd followed by the quantization op (docs/ops.md).
    normalized = ops.rmsnorm2d_fwd(x, w, 1e-5, use_model_sensitive_rmsnorm=t5)
    q2, scales2 = np.empty_like(q), np.empty((m, n // span), np.float32)
    if group:
        ops.dynamic_per_group_scaled_quant(q2, normalized, scales2, group, shuffle_scale=False)
    else:
        ops.dynamic_per_token_scaled_quant(q2, normalized, scales2)
    np.testing.assert_array_equal(q, q2, f"seed {SEED}")
    np.testing.assert_array_equal(scales.reshape(m, -1), scales2, f"seed {SEED}")


def _check_rope(got, expected, dtype):
    if dtype == "float32":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=f"seed {SEED}")
    else:
        _check(_decode(got, dtype), expected, dtype)


def _rope_tables(rng, rows, f, dtype):
    angles = rng.uniform(-6, 6, (rows, 1, 1, f))
    (cos, cosf), (sin, sinf) = _encode(np.cos(angles), dtype), _encode(np.sin(angles), dtype)
    return cos, sin, cosf.astype(np.float64), sinf.astype(np.float64)


@pytest.mark.parametrize("style,reuse,nope_first,dtype,index", [(0, True, False, "float32", np.int64),
                                                                (1, False, True, "bf16", np.int32),
                                                                (1, True, False, "float16", np.int64)])
def test_rope_positions_offsets(style, reuse, nope_first, dtype, index):
    s, b, h, d, rows = 5, 3, 3, 72, 48
    f = 16 if reuse else 40
    rng = _rng(style, reuse, nope_first, len(dtype), 47)
    x, xf = _encode(rng.normal(0, 1, (s, b, h, d)), dtype)
    cos, sin, cosf, sinf = _rope_tables(rng, rows, f, dtype)
    pos, off = rng.integers(0, 24, (s, b)).astype(index), rng.integers(0, 24, (s, b)).astype(index)
    pos[0, 0], off[0, 0] = rows - 1, 9  # past the table: its last row (docs/ops.md)
    before = x.copy()
    out = ops.rope_cached_positions_offsets_fwd(x, cos, sin, pos, off, style, reuse, nope_first)
    np.testing.assert_array_equal(x, before)
    table_rows = np.minimum(pos.astype(np.int64) + off, rows - 1)
    expected = _rope_reference(xf.astype(np.float64), cosf[table_rows, 0], sinf[table_rows, 0], style, reuse,
                               nope_first)
    _check_rope(out, expected, dtype)


@pytest.mark.parametrize("style,reuse,nope_first,dtype,offsets", [(0, False, False, "bf16", True),
                                                                  (1, True, True, "float32", True),
                                                                  (1, False, False, "float16", False)])
def test_rope_two_tensors_out_of_place(style, reuse, nope_first, dtype, offsets):
    s, b, hx, hy, d, rows = 3, 4, 5, 2, 96, 64
    f = 24 if reuse else 64
    rng = _rng(style, reuse, len(dtype), 53)
    qkv, qkvf = _encode(rng.normal(0, 1, (s, b, hx + 2 * hy, d)), dtype)
    qx, ky = qkv[:, :, :hx], qkv[:, :, hx:hx + hy]  # strided views into the fused buffer
    before = qkv.copy()
    cos, sin, cosf, sinf = _rope_tables(rng, rows, f, dtype)
    pos = rng.integers(0, 32, (s, b))
    off = rng.integers(0, 32, (s, b)) if offsets else None
    out_x, out_y = ops.rope_cached_positions_2c_fwd(qx, ky, cos, sin, pos, style, reuse, nope_first, offsets=off)
    np.testing.assert_array_equal(qkv, before)  # not in place
    table_rows = pos + (off if offsets else 0)
    for got, lo, hi in ((out_x, 0, hx), (out_y, hx, hx + hy)):
        assert got.shape == (s, b, hi - lo, d)
        expected = _rope_reference(qkvf[:, :, lo:hi].astype(np.float64), cosf[table_rows, 0], sinf[table_rows, 0],
                                   style, reuse, nope_first)
        _check_rope(got, expected, dtype)


def test_fp8_dtype_per_target(monkeypatch):
    """fp8_dtype asks torch for the device and the library for its target: a stand-in torch
    (sentinel dtypes) and GPUs whose targets are named, as ops._gpu returns them."""
    import sys
    import types
    torch = types.ModuleType("torch")
    torch.float8_e4m3fn, torch.float8_e4m3fnuz = object(), object()

    class Device:
        def __init__(self, kind, index=None):
            if isinstance(kind, Device):
                kind, index = kind.type, kind.index
            elif ":" in kind:
                kind, index = kind.split(":")[0], int(kind.split(":")[1])
            self.type, self.index = kind, index

    torch.device = Device
    current = [0]
    torch.cuda = types.SimpleNamespace(current_device=lambda: current[0])
    targets = ["gfx942", "gfx950", "sm_90", "sm_90a"]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(ops, "_gpu", lambda i: types.SimpleNamespace(device=types.SimpleNamespace(target=targets[i])))
    fn, fnuz = torch.float8_e4m3fn, torch.float8_e4m3fnuz
    assert [ops.fp8_dtype(i) for i in range(4)] == [fnuz, fn, fn, fn]
    assert ops.fp8_dtype("cuda:0") is fnuz and ops.fp8_dtype("cuda:2") is fn
    assert ops.fp8_dtype(Device("cuda", 0)) is fnuz and ops.fp8_dtype(Device("cuda", 1)) is fn
    assert ops.fp8_dtype("cuda") is fnuz  # no index: device 0
    for current[0], expected in enumerate([fnuz, fn, fn, fn]):
        assert ops.fp8_dtype() is expected  # None: torch's current device


def test_fp8_dtype_needs_torch(monkeypatch):
    """Without torch there is no dtype to give: a clear error, not a KeyError."""
    import sys
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with pytest.raises(ops.OpError, match="import torch first"):
        ops.fp8_dtype()
