"""The names kernels use: dtypes, argument annotations, and operations.

Inside a ``@wavetile.kernel`` function these build tile IR (the front end walks the
function's syntax tree and calls them with each expression's source location). Outside a
kernel they are plain functions of the C++ DSL and need a kernel being built.
"""
from . import _wavetile as _C

DType = _C.DType
i1, i8, i16, i32, i64 = DType.i1, DType.i8, DType.i16, DType.i32, DType.i64
f16, bf16, f32, f64 = DType.f16, DType.bf16, DType.f32, DType.f64
float8_e4m3fn, float8_e5m2 = DType.f8E4M3FN, DType.f8E5M2
float8_e4m3fnuz, float8_e5m2fnuz = DType.f8E4M3FNUZ, DType.f8E5M2FNUZ
float6_e2m3fn, float6_e3m2fn, float4_e2m1fn = DType.f6E2M3FN, DType.f6E3M2FN, DType.f4E2M1FN
float8_e8m0fnu = DType.f8E8M0FNU

SCALAR_DTYPES = (i32, i64, f32, f64)


class constexpr:
    """Annotation of a compile-time parameter: its value at launch specializes the kernel."""


class _PointerType:
    def __init__(self, dtype):
        if not isinstance(dtype, DType):
            raise TypeError(f"pointer[...] takes a wavetile dtype, got {dtype!r}")
        self.dtype = dtype

    def __repr__(self):
        return f"pointer[{_C.dtype_name(self.dtype)}]"

    def __eq__(self, other):
        return isinstance(other, _PointerType) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("pointer", self.dtype))


class pointer:
    """Annotation of a global-memory pointer argument: ``x: pointer[f32]``."""

    def __class_getitem__(cls, dtype):
        return _PointerType(dtype)


class static_range:
    """``for i in static_range(...)`` unrolls at compile time (bounds must be constants)."""

    def __init__(self, *args):
        self.range = range(*args)

    def __iter__(self):
        return iter(self.range)


def cdiv(a, b):
    """Ceiling division of Python ints (grid sizes, tile counts)."""
    return -(-a // b)


program_id = _C.program_id
num_programs = _C.num_programs
arange = _C.arange
full = _C.full
zeros = _C.zeros
constant = _C.constant
load = _C.load
store = _C.store
atomic_add = _C.atomic_add
make_buffer = _C.make_buffer
dot = _C.dot
maximum = _C.maximum
minimum = _C.minimum
minimum_number = _C.minimum_number
where = _C.where
# (a * b).sum(axis) with each product fused into the running sum (FMA chains on GPUs; opt-in).
sum_of_products = _C.sum_of_products
exp, exp2, log, sqrt, rsqrt = _C.exp, _C.exp2, _C.log, _C.sqrt, _C.rsqrt
# 1/x by the GPU's reciprocal instruction (within 1 ulp, no branch); exact on the host.
approximate_reciprocal = _C.approximate_reciprocal
# e^x as the GPU's exp2 of x·log2(e) without its rounding correction (for 16-bit results).
approximate_exp = _C.approximate_exp
abs, tanh, erf, floor = _C.abs, _C.tanh, _C.erf, _C.floor
