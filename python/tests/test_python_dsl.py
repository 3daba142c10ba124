"""The Python DSL: the IR it builds, diagnostics, and kernels run on the host JIT."""
import os
import subprocess
import sys

import numpy as np
import pytest

import wavetile as wt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import kernels  # noqa: E402

WAVETILE = os.environ.get("WAVETILE_BIN", os.path.join(os.path.dirname(wt.__file__), "..", "..", "bin", "wavetile"))


def cpp_example(name):
    """The C++ example's module, parsed back from `wavetile compile --emit tile`."""
    text = subprocess.run([WAVETILE, "compile", "--example", name, "--emit", "tile"], check=True,
                          capture_output=True, text=True).stdout
    return wt.Module.parse(text, name)


@pytest.mark.parametrize("name,within", [("vector_add", (True, True, True)), ("softmax", (True, True)),
                                         ("gemm", (False, False, True))])
def test_python_and_cpp_build_the_same_ir(name, within):
    python = getattr(kernels, name).module(within_2gib=within)
    cpp = cpp_example(name)
    assert python.canonical_str() == cpp.canonical_str()
    # Not trivially: a different constant is a different kernel.
    other = kernels.scale_rows.module({"BLOCK": 64})
    assert other.canonical_str() != cpp.canonical_str()


def test_locations_point_at_the_python_source():
    text = kernels.vector_add.ir(with_locations=True)
    line = next(i for i, l in enumerate(open(kernels.__file__), 1) if "in_bounds = offsets < n" in l)
    assert f'kernels.py":{line}:' in text


def rng():
    return np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def test_vector_add_on_the_host():
    n = 70001  # a tail
    r = rng()
    x, y = r.standard_normal(n).astype(np.float32), r.standard_normal(n).astype(np.float32)
    out = np.full(n + 5, np.nan, np.float32)  # poisoned, with guard elements past n
    kernels.vector_add[(wt.cdiv(n, kernels.ADD_BLOCK),)](x, y, out, n)
    np.testing.assert_array_equal(out[:n], x + y)
    assert np.isnan(out[n:]).all()


def test_approximate_reciprocal_on_the_host_and_in_the_ir():
    @wt.kernel
    def reciprocal(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32):
        offsets = wt.arange(0, 256)
        wt.store(out, offsets, wt.approximate_reciprocal(wt.load(x, offsets, offsets < n)), offsets < n)

    n = 200
    x = rng().standard_normal(n).astype(np.float32)
    out = np.full(n + 3, np.nan, np.float32)
    reciprocal[(1,)](x, out, n)
    np.testing.assert_array_equal(out[:n], np.float32(1) / x)  # the host divides exactly
    assert np.isnan(out[n:]).all()
    assert "arith.divf" in reciprocal.ir() and "fastmath<afn>" in reciprocal.ir()


def test_minimum_number_ignores_nan():
    @wt.kernel
    def clamp(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32):
        offsets = wt.arange(0, 256)
        wt.store(out, offsets, wt.minimum_number(wt.load(x, offsets, offsets < n), 2.0), offsets < n)

    n = 200
    x = rng().standard_normal(n).astype(np.float32) * 4
    x[::7] = np.nan
    out = np.full(n + 3, np.nan, np.float32)
    clamp[(1,)](x, out, n)
    np.testing.assert_array_equal(out[:n], np.fmin(x, np.float32(2)))  # NaN gives the bound
    assert np.isnan(out[n:]).all()
    assert "arith.minnumf" in clamp.ir()


def test_sum_of_products_on_the_host_and_as_fma_chains_for_gpus():
    @wt.kernel
    def row_dots(x: wt.pointer[wt.f32], y: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32):
        row = wt.program_id(0)
        offsets = wt.arange(0, 256)
        mask = offsets < n
        a = wt.load(x, row * n + offsets, mask)
        b = wt.load(y, row * n + offsets, mask)
        wt.store(out, row + wt.arange(0, 1), wt.full([1], wt.sum_of_products(a, b, 0), wt.f32))

    rows, n = 3, 201
    x = rng().standard_normal((rows, n)).astype(np.float32)
    y = rng().standard_normal((rows, n)).astype(np.float32)
    out = np.full(rows + 2, np.nan, np.float32)
    row_dots[(rows,)](x, y, out, n)
    want = (x.astype(np.float64) * y).sum(axis=1)
    np.testing.assert_allclose(out[:rows], want, rtol=0, atol=n * 2.0**-23 * np.abs(x * y).sum(axis=1).max())
    assert np.isnan(out[rows:]).all()
    assert "fastmath<contract>" in row_dots.ir()
    # For GPUs each thread's products become a chain of FMAs (without the opt-in: multiplies
    # and adds, no fma at all in this kernel).
    os.environ["WAVETILE_CACHE"] = "0"
    ptx = bytes(wt._wavetile.Jit("sm_90").compile(row_dots.module(within_2gib=(True, True, True)))[0]).decode()
    assert "fma.rn.f32" in ptx


def test_approximate_exp_on_the_host_and_in_the_ir():
    @wt.kernel
    def exponential(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32):
        offsets = wt.arange(0, 256)
        wt.store(out, offsets, wt.approximate_exp(wt.load(x, offsets, offsets < n)), offsets < n)

    n = 200
    x = (rng().standard_normal(n) * 10).astype(np.float32)
    out = np.full(n + 3, np.nan, np.float32)
    exponential[(1,)](x, out, n)
    np.testing.assert_allclose(out[:n], np.exp(x.astype(np.float64)), rtol=4 * 2.0**-23)  # exact on the host
    assert np.isnan(out[n:]).all()
    assert "math.exp" in exponential.ir() and "fastmath<afn>" in exponential.ir()


def test_repeated_launches_take_the_fast_path():
    r = rng()
    n = 3000
    x = r.standard_normal(n).astype(np.float32)
    for grid in ((wt.cdiv(n, kernels.ADD_BLOCK),), wt.cdiv(n, kernels.ADD_BLOCK)):  # tuple and int grids
        for _ in range(3):  # the first launch specializes; the others are matched in C++
            y = r.standard_normal(n).astype(np.float32)
            out = np.full(n, np.nan, np.float32)
            kernels.vector_add[grid](x, y, out, n)
            np.testing.assert_array_equal(out, x + y)
    # A pointer of another dtype is another key: the fast path hands it to the Python launcher.
    with pytest.raises(wt.LaunchError, match="points to f32, got a tensor of float64"):
        kernels.vector_add[1](x, np.zeros(n), out, n)


def test_launches_specialize_on_alignment():
    n = 4096  # a multiple of 16
    r = rng()
    backing = r.standard_normal(3 * (n + 16)).astype(np.float32)
    aligned = [np.zeros(n + 16, np.float32) for _ in range(3)]
    for buffer, lo in zip(aligned, range(3)):
        buffer[:] = backing[lo * (n + 16):(lo + 1) * (n + 16)]
    x, y, out = (a[:n] for a in aligned)
    assert x.__array_interface__["data"][0] % 16 == 0  # numpy allocates aligned
    xs, ys, outs = (a[1:n + 1] for a in aligned)   # 4 bytes past: not 16-byte aligned
    before = len(kernels.vector_add._specializations)
    for xa, ya, oa, count in ((x, y, out, n), (xs, ys, outs, n), (x, y, out, n - 1)):
        oa[:] = np.nan
        kernels.vector_add[(wt.cdiv(count, kernels.ADD_BLOCK),)](xa, ya, oa, count)
        np.testing.assert_array_equal(oa[:count], xa[:count] + ya[:count])
    assert len(kernels.vector_add._specializations) - before <= 3
    # The facts reach the IR as tile.divisibility on the arguments.
    known = kernels.vector_add.module(facts={"x": 16, "y": 16, "out": 16, "n": 16})
    assert known.str().count("tile.divisibility = 16") == 4
    assert "tile.divisibility" not in kernels.vector_add.module().str()


class TensorLike:
    """What the launcher reads from a torch tensor (dtype, nbytes, data_ptr, is_cuda), over
    numpy memory: exercises the torch path of argument conversion on the host."""

    def __init__(self, array):
        self.array, self.dtype, self.nbytes, self.is_cuda = array, array.dtype, array.nbytes, False

    def data_ptr(self):
        return self.array.__array_interface__["data"][0]


def test_tensor_like_arguments_go_through_data_ptr():
    n = 5000
    r = rng()
    x, y = r.standard_normal(n).astype(np.float32), r.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    for _ in range(2):  # the second launch takes the C++ fast path
        out[:] = np.nan
        kernels.vector_add[wt.cdiv(n, kernels.ADD_BLOCK)](TensorLike(x), TensorLike(y), TensorLike(out), n)
        np.testing.assert_array_equal(out, x + y)


def test_softmax_on_the_host():
    rows, cols, stride = 5, 3001, 3008
    r = rng()
    x = r.standard_normal((rows, stride)).astype(np.float32) * 4
    out = np.full((rows, stride), np.nan, np.float32)
    kernels.softmax[(rows,)](x, out, cols, stride)
    reference = np.exp(x[:, :cols].astype(np.float64) - x[:, :cols].max(axis=1, keepdims=True))
    reference /= reference.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out[:, :cols], reference, rtol=2e-5, atol=1e-12)
    assert np.isnan(out[:, cols:]).all()


def test_tiled_gemm_on_the_host():
    m, n, k = 70, 45, 161
    lda, ldb, ldc = k + 1, n + 2, n + 3
    r = rng()
    a = wt.host.to_bf16(r.standard_normal((m, lda)).astype(np.float32))
    b = wt.host.to_bf16(r.standard_normal((k, ldb)).astype(np.float32))
    c = np.full((m, ldc), np.nan, np.float32)
    grid = (wt.cdiv(m, kernels.TILE_M), wt.cdiv(n, kernels.TILE_N))
    kernels.gemm[grid](a, b, c, m, n, k, lda, ldb, ldc)
    af, bf = wt.host.from_bf16(a)[:, :k].astype(np.float64), wt.host.from_bf16(b)[:, :n].astype(np.float64)
    reference = af @ bf
    bound = np.abs(af) @ np.abs(bf) * k * np.finfo(np.float32).eps  # f32 summation error bound
    assert (np.abs(c[:, :n] - reference) <= bound).all()
    assert np.isnan(c[:, n:]).all()


def test_control_flow_on_the_host():
    n, rows, threshold = 50, 6, 2
    x = rng().standard_normal((rows, n)).astype(np.float32)
    out = np.full((rows, n), np.nan, np.float32)
    kernels.scale_rows[(rows,)](x, out, n, threshold, BLOCK=64)
    expected = np.where(np.arange(rows)[:, None] < threshold, x * 2, x + 1) + 2 * 0.5 + (0 + 1 + 2)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # Another constexpr is another specialization.
    kernels.scale_rows[(rows,)](x, out, n, threshold, BLOCK=64, REPEAT=0)
    np.testing.assert_allclose(out, expected - 1.0, rtol=1e-6)


def test_while_loop_on_the_host_and_for_gpus():
    n, rows = 37, 5
    x = rng().uniform(0.5, 1.0, (rows, n)).astype(np.float32)
    x[:, 0] = [0.6, 0.9, 0.3, 0.7, 0.55]  # each row's maximum stays near 1
    out = np.full((rows, n), np.nan, np.float32)
    kernels.double_until[(rows,)](x, out, n, 16.0, BLOCK=64)
    np.testing.assert_array_equal(out, kernels.double_until_reference(x, 16.0))
    # The loop lowers for every GPU target too (layouts carried through scf.while).
    module = kernels.double_until.module({"BLOCK": 64}, within_2gib=(True, True))
    assert "scf.while" in module.str()
    os.environ["WAVETILE_CACHE"] = "0"
    for target in ("gfx942", "sm_90"):
        image, manifest, source, _ = wt._wavetile.Jit(target).compile(module)
        assert source == "compiled" and len(image) > 0 and f"target {target}" in manifest


def test_diagnostics_name_the_python_line():
    @wt.kernel
    def mixed(x: wt.pointer[wt.f32], y: wt.pointer[wt.bf16]):
        a = wt.load(x, wt.arange(0, 16))
        b = wt.load(y, wt.arange(0, 16))
        wt.store(x, wt.arange(0, 16), a + b)

    with pytest.raises(wt.CompilationError) as error:
        mixed.module()
    line = mixed.function.source.line_offset + 5  # the line with `a + b`
    assert f"test_python_dsl.py:{line}:" in str(error.value)
    assert "f32" in str(error.value) and "bf16" in str(error.value)


def test_unsupported_syntax_is_an_error_at_its_line():
    @wt.kernel
    def looping(x: wt.pointer[wt.f32], n: wt.i32):
        i = n
        while i > 0:
            i = i - 1
            if i == 3:
                break

    with pytest.raises(wt.CompilationError, match=r"test_python_dsl.py:\d+:\d+: error: break and continue"):
        looping.module()

    @wt.kernel
    def unknown(x: wt.pointer[wt.f32]):
        wt.store(x, wt.arange(0, 16), undefined_name)  # noqa: F821

    with pytest.raises(wt.CompilationError, match="name 'undefined_name' is not defined"):
        unknown.module()

    # Errors inside kernel loops and branches surface as errors too, and leave nothing broken.
    @wt.kernel
    def inside_regions(x: wt.pointer[wt.f32], n: wt.i32, WHERE: wt.constexpr):
        acc = wt.zeros([16], wt.f32)
        if WHERE == 0:
            for i in range(0, n):
                acc = acc + missing_in_loop  # noqa: F821
        elif WHERE == 1:
            while acc.max(0) < missing_in_condition:  # noqa: F821
                acc = acc + 1.0
        else:
            if n > 2:
                acc = acc * missing_in_branch  # noqa: F821
        wt.store(x, wt.arange(0, 16), acc)

    for where, name in enumerate(["missing_in_loop", "missing_in_condition", "missing_in_branch"]):
        with pytest.raises(wt.CompilationError, match=f"name '{name}' is not defined"):
            inside_regions.module({"WHERE": where})
    assert "scf.for" in kernels.softmax.ir()

    with pytest.raises(wt.CompilationError, match="needs an annotation"):
        @wt.kernel
        def bare(x):
            pass


def test_launch_errors_name_the_argument():
    x = np.zeros(16, np.float32)
    with pytest.raises(wt.LaunchError, match="takes 4 runtime arguments"):
        kernels.vector_add[(1,)](x, x, x)
    with pytest.raises(wt.LaunchError, match="argument 'y' of 'vector_add' points to f32, got a tensor of int32"):
        kernels.vector_add[(1,)](x, np.zeros(16, np.int32), x, 16)
    with pytest.raises(wt.LaunchError, match="has no constexpr named NOPE"):
        kernels.vector_add[(1,)](x, x, x, 16, NOPE=1)
    with pytest.raises(wt.LaunchError, match="grid dimensions"):
        kernels.vector_add[(0,)](x, x, x, 16)
    with pytest.raises(wt.LaunchError, match=r"argument 3 \('n'\) of 'vector_add' must be i32"):
        kernels.vector_add[(1,)](x, x, x, "16")


def test_host_formats():
    f = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, 3.0e38], np.float32)
    bits = wt.host.to_bf16(f)
    assert list(bits) == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0x7F62]  # ties to even
    np.testing.assert_array_equal(wt.host.from_bf16(bits)[:4], [1.0, 1.0, 1.015625, -2.5])
    assert np.isnan(wt.host.from_bf16(wt.host.to_bf16(np.array([np.nan], np.float32))))[0]

    e4m3 = wt.host.to_fp8_e4m3fn(np.array([1.0, 448.0, 460.0, 470.0, -0.001953125, 0.0009765625, 1.0625]))
    # 460 rounds to 448; 470 is past the last step (464) and overflows to NaN; 2^-9 is the
    # smallest subnormal; 2^-10 ties to 0 (even); 1.0625 ties to 1.0 (even).
    assert list(e4m3) == [0x38, 0x7E, 0x7E, 0x7F, 0x81, 0x00, 0x38]
    assert wt.host.to_fp8_e4m3fn(np.array([470.0]), saturate=True)[0] == 0x7E
    codes = np.arange(256, dtype=np.uint8)
    decoded = wt.host.from_fp8_e4m3fn(codes)
    finite = ~np.isnan(decoded)
    assert (~finite).sum() == 2  # 0x7F and 0xFF
    np.testing.assert_array_equal(wt.host.to_fp8_e4m3fn(decoded[finite])[decoded[finite] != 0],
                                  codes[finite][decoded[finite] != 0])

    fp4 = wt.host.to_fp4_e2m1(np.array([0.25, 5.0, 7.0, -1.5, 100.0]))
    assert list(wt.host.from_fp4_e2m1(fp4)) == [0.0, 4.0, 6.0, -1.5, 6.0]
    packed = wt.host.pack_fp4(np.array([[1, 2, 3, 4]], np.uint8))
    assert packed.tolist() == [[0x21, 0x43]]
    np.testing.assert_array_equal(wt.host.unpack_fp4(packed), [[1, 2, 3, 4]])


@pytest.mark.parametrize("narrow", [True, False])
def test_rounded_sums_narrow_unless_the_kernel_says_not(narrow):
    @wt.kernel(narrow_rounded_sums=narrow)
    def rounded_sum(x: wt.pointer[wt.bf16], y: wt.pointer[wt.bf16], out: wt.pointer[wt.bf16]):
        offsets = wt.arange(0, 256)
        total = wt.load(x, offsets).to(wt.f32) + wt.load(y, offsets).to(wt.f32)
        wt.store(out, offsets, total.to(wt.bf16))

    assert ("tile.wide_rounded_sums" in rounded_sum.ir()) != narrow
    os.environ["WAVETILE_CACHE"] = "0"
    ptx = bytes(wt._wavetile.Jit("sm_90").compile(rounded_sum.module(within_2gib=(True, True, True)))[0]).decode()
    assert ("add.rn.bf16x2" in ptx) == narrow
    # The host computes the same values either way: each sum rounded once to bf16.
    xb = wt.host.to_bf16(rng().standard_normal(256).astype(np.float32))
    yb = wt.host.to_bf16(rng().standard_normal(256).astype(np.float32))
    out = np.full(256 + 4, 0xFFFF, np.uint16)
    rounded_sum[(1,)](xb, yb, out)
    # Their sum rounded to f32, then to bf16 (nearest even): rounding twice is rounding once here.
    want = (wt.host.from_bf16(xb).astype(np.float64) + wt.host.from_bf16(yb)).astype(np.float32)
    np.testing.assert_array_equal(out[:256], wt.host.to_bf16(want))
    assert (out[256:] == 0xFFFF).all()
