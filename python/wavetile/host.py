"""Host-side data in the narrow formats numpy lacks: bf16 (as uint16), OCP fp8 e4m3fn and
fp4 e2m1 (as uint8, fp4 packed two per byte, low nibble first, as kernels read them).
Conversions round to nearest, ties to even, like the kernels' ``.to(...)``."""
import numpy as np


def to_bf16(values):
    """float32 -> bf16 bits (uint16). NaNs stay NaN (quiet)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def from_bf16(bits):
    """bf16 bits (uint16) -> float32, exactly."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def _table(exponent_bits, mantissa_bits, bias, has_nan):
    """Every code's value (sign bit highest), from the format's definition."""
    codes = np.arange(1 << (1 + exponent_bits + mantissa_bits))
    sign = np.where(codes >> (exponent_bits + mantissa_bits), -1.0, 1.0)
    exponent = (codes >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = codes & ((1 << mantissa_bits) - 1)
    scale = 1 << mantissa_bits
    value = np.where(exponent == 0, mantissa / scale * 2.0 ** (1 - bias),
                     (1 + mantissa / scale) * 2.0 ** (exponent - bias))
    value = sign * value
    if has_nan:  # e4m3fn: exponent and mantissa all ones is NaN; there is no infinity
        value[(exponent == (1 << exponent_bits) - 1) & (mantissa == scale - 1)] = np.nan
    return value.astype(np.float32)


_E4M3 = _table(4, 3, 7, True)
_E2M1 = _table(2, 1, 1, False)


def _encode(values, table, saturate, overflow_code):
    """Nearest code (ties to the even code) of each value among the table's finite
    non-negative values; beyond the largest, `overflow_code` unless saturating."""
    x = np.asarray(values, dtype=np.float32)
    half = len(table) // 2
    positive = table[:half]
    finite = ~np.isnan(positive)
    codes, magnitudes = np.arange(half)[finite], positive[finite]
    order = np.argsort(magnitudes, kind="stable")
    codes, magnitudes = codes[order], magnitudes[order]
    a = np.abs(x)
    upper = np.clip(np.searchsorted(magnitudes, a), 1, len(magnitudes) - 1)
    lower = upper - 1
    dl, du = a - magnitudes[lower], magnitudes[upper] - a
    pick_upper = (du < dl) | ((du == dl) & (codes[upper] % 2 == 0))
    code = np.where(pick_upper, codes[upper], codes[lower])
    largest = magnitudes[-1]
    step = largest - magnitudes[-2]
    beyond = a >= largest + step / 2 if overflow_code is not None else np.zeros_like(a, dtype=bool)
    code = np.where(a > largest, codes[-1], code)
    if not saturate and overflow_code is not None:
        code = np.where(beyond, overflow_code, code)
    code = code | np.where(np.signbit(x), half, 0)
    if overflow_code is not None:
        code = np.where(np.isnan(x), overflow_code | half, code)
    return code.astype(np.uint8)


def to_fp8_e4m3fn(values, saturate=False):
    """float32 -> OCP fp8 e4m3fn codes (uint8). Values that round past 448 become NaN, or
    448 with `saturate`."""
    return _encode(values, _E4M3, saturate, overflow_code=0x7F)


def from_fp8_e4m3fn(codes):
    return _E4M3[np.asarray(codes, dtype=np.uint8)]


def to_fp4_e2m1(values):
    """float32 -> fp4 e2m1 codes, one per uint8 (the format has no NaN: out of range saturates)."""
    return _encode(values, _E2M1, True, overflow_code=None)


def from_fp4_e2m1(codes):
    return _E2M1[np.asarray(codes, dtype=np.uint8) & 0xF]


def pack_fp4(codes):
    """Pairs of fp4 codes along the last axis -> one byte each, the first in the low nibble."""
    c = np.asarray(codes, dtype=np.uint8)
    if c.shape[-1] % 2:
        raise ValueError("pack_fp4 needs an even number of codes along the last axis")
    return (c[..., 0::2] & 0xF) | ((c[..., 1::2] & 0xF) << 4)


def unpack_fp4(packed):
    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty(p.shape[:-1] + (p.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2], out[..., 1::2] = p & 0xF, p >> 4
    return out
