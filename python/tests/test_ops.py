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
    with pytest.raises(ops.OpError, match="numpy arrays of int32 are not supported"):
        ops.rmsnorm2d_fwd(np.zeros((4, 8), np.int32), np.ones(8, np.int32), 1e-5)
    with pytest.raises(ops.OpError, match="'residual_out' has shape \\[4, 7\\]"):
        ops.rmsnorm2d_fwd_with_add(x.copy(), x, x, np.zeros((4, 7), np.float32), np.ones(8, np.float32), 1e-5)


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
    q = np.full((m, n), 99, np.int8)
    if group:
        scales = np.full((m, n // group), np.nan, np.float32)
        ops.dynamic_per_group_scaled_quant(q, x, scales, group)
        amax = np.abs(x).reshape(m, n // group, group).max(axis=2)
        expected_scales = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
        per_element = np.repeat(expected_scales, group, axis=1)
    else:
        scales = np.full((m, 1), np.nan, np.float32)
        ops.dynamic_per_token_scaled_quant(q, x, scales)
        amax = np.abs(x).max(axis=1, keepdims=True)
        expected_scales = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
        per_element = expected_scales
    np.testing.assert_array_equal(scales, expected_scales)
    expected = np.clip(np.rint(x / per_element), -128, 127).astype(np.int8)  # rint: half to even
    np.testing.assert_array_equal(q, expected)
