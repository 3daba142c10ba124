#!/usr/bin/env python3
"""Fits the polynomials of the GPU's f32 erf (compiler/lib/Conversion/TileToGPU/GPUMath.cpp,
ErfThroughExp2) and bounds its error in f32 arithmetic.

Below SPLIT: erf(x) = x + x * P(x^2), P fitted to erf(x)/x - 1 (relative error).
From SPLIT: erf(x) = copysign(1 - 2^Q(min(|x|, CLAMP)), x), Q fitted to log2(erfc(a)) weighted by
erfc(a) * ln 2 (the absolute error it causes in erf), so the tail, where erfc is tiny, costs
little. Weighted minimax by Lawson's iteration; coefficients rounded to f32 and printed as C++
hex floats. The error bound is measured by evaluating the rounded polynomials as the GPU does
(one rounding per fma) against Python's double erf, with exp2 exact and off by 2 ulp.

Needs numpy: python3 scripts/fit-erf.py
"""
import math
import re

import numpy as np

SPLIT, CLAMP = 0.875, 4.0  # erfc(4) < 2^-25: 1 - 2^Q rounds to 1 from there
SMALL_DEGREE, LARGE_DEGREE = 5, 6


def lawson(xs, target, weight, degree, iterations=300):
    basis = np.vander(xs, degree + 1, increasing=True)
    w = np.full_like(xs, 1 / len(xs))
    for _ in range(iterations):
        root = np.sqrt(w) * weight
        coefficients = np.linalg.lstsq(basis * root[:, None], target * root, rcond=None)[0]
        error = np.abs((basis @ coefficients - target) * weight)
        w = w * error / np.sum(w * error)
    return coefficients.astype(np.float32), error.max()


def fma(a, b, c):
    # The product of two f32 is exact in double; one rounding to f32 after the sum.
    return (a.astype(np.float64) * b + c).astype(np.float32)


def horner(coefficients, v):
    r = np.full_like(v, coefficients[-1])
    for c in coefficients[-2::-1]:
        r = fma(r, v, np.float32(c))
    return r


def erf32(x, small, large, exp2_ulps):
    a = np.abs(x)
    below = fma(x, horner(small, x * x), x)
    tail = np.exp2(horner(large, np.minimum(a, np.float32(CLAMP))).astype(np.float64))
    tail = (tail * (1 + exp2_ulps * 2.0 ** -23)).astype(np.float32)
    return np.where(a < np.float32(SPLIT), below, np.copysign(np.float32(1) - tail, x))


def main():
    x = np.linspace(1e-4, SPLIT, 8000)
    small, small_error = lawson(x * x, np.array([math.erf(v) for v in x]) / x - 1, np.ones_like(x), SMALL_DEGREE)
    a = np.linspace(SPLIT, CLAMP, 8000)
    erfc = np.array([math.erfc(v) for v in a])
    large, large_error = lawson(a, np.log2(erfc), erfc * math.log(2), LARGE_DEGREE)
    print(f"fit: relative {small_error:.2e} below {SPLIT}, absolute {large_error:.2e} above")
    for name, c in (("kErfBelowSplit", small), ("kErfAboveSplit", large)):
        hexes = (re.sub(r"0+p", "p", float(v).hex()) + "f" for v in c)
        print(f"constexpr float {name}[] = {{" + ", ".join(hexes) + "};")
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(0, 4.5, 400000), np.exp2(rng.uniform(-126, 2.2, 200000)),
                         np.linspace(SPLIT - 2 ** -10, SPLIT + 2 ** -10, 20000)]).astype(np.float32)
    xs = np.concatenate([xs, -xs])
    reference = np.array([math.erf(float(v)) for v in xs])
    ulp = np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    for exp2_ulps in (0, 2, -2):
        error = np.abs(erf32(xs, small, large, exp2_ulps) - reference) / ulp
        print(f"exp2 off by {exp2_ulps:+d} ulp: max error {error.max():.2f} ulp at x = {xs[np.argmax(error)]!r}")


if __name__ == "__main__":
    main()
