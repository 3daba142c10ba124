"""Example kernels in the Python DSL. vector_add, softmax and gemm are the C++ examples
(examples/Examples.cpp) operation for operation; scale_rows and double_until exercise
control flow. Used by examples/python/demo.py, the pytest suite and bench/h200."""
import math

import wavetile as wt

ADD_BLOCK = 1024
SOFTMAX_BLOCK = 1024
TILE_M, TILE_N, TILE_K = 64, 64, 32


@wt.kernel
def vector_add(x: wt.pointer[wt.f32], y: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32):
    offsets = wt.program_id(0) * ADD_BLOCK + wt.arange(0, ADD_BLOCK)
    in_bounds = offsets < n
    wt.store(out, offsets, wt.load(x, offsets, in_bounds) + wt.load(y, offsets, in_bounds), in_bounds)


@wt.kernel
def softmax(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n_cols: wt.i32, row_stride: wt.i32):
    row_start = wt.program_id(0) * row_stride
    columns = wt.arange(0, SOFTMAX_BLOCK)
    block_max = wt.full([SOFTMAX_BLOCK], -math.inf, wt.f32)
    for c0 in range(0, n_cols, SOFTMAX_BLOCK):
        c = c0 + columns
        block_max = wt.maximum(block_max, wt.load(x, row_start + c, c < n_cols, -math.inf))
    row_max = block_max.max(0)
    block_sum = wt.zeros([SOFTMAX_BLOCK], wt.f32)
    for c0 in range(0, n_cols, SOFTMAX_BLOCK):
        c = c0 + columns
        block_sum = block_sum + wt.exp(wt.load(x, row_start + c, c < n_cols, -math.inf) - row_max)
    denominator = block_sum.sum(0)
    for c0 in range(0, n_cols, SOFTMAX_BLOCK):
        c = c0 + columns
        v = wt.load(x, row_start + c, c < n_cols, -math.inf)
        wt.store(out, row_start + c, wt.exp(v - row_max) / denominator, c < n_cols)


@wt.kernel(num_warps=4, num_stages=3)
def gemm(a: wt.pointer[wt.bf16], b: wt.pointer[wt.bf16], c: wt.pointer[wt.f32], M: wt.i32, N: wt.i32, K: wt.i32,
         lda: wt.i32, ldb: wt.i32, ldc: wt.i32):
    a_view = wt.make_buffer(a, M * lda)
    b_view = wt.make_buffer(b, K * ldb)
    rows = wt.program_id(0) * TILE_M + wt.arange(0, TILE_M)
    cols = wt.program_id(1) * TILE_N + wt.arange(0, TILE_N)
    k_range = wt.arange(0, TILE_K)
    acc = wt.zeros([TILE_M, TILE_N], wt.f32)
    for k0 in range(0, K, TILE_K):
        ks = k0 + k_range
        a_tile = wt.load(a_view, rows[:, None] * lda + ks[None, :], (ks < K)[None, :])
        b_tile = wt.load(b_view, ks[:, None] * ldb + cols[None, :], (ks < K)[:, None] & (cols < N)[None, :])
        acc = wt.dot(a_tile, b_tile, acc)
    wt.store(c, rows[:, None] * ldc + cols[None, :], acc, (rows < M)[:, None] & (cols < N)[None, :])


@wt.kernel
def scale_rows(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32, threshold: wt.i32,
               BLOCK: wt.constexpr, REPEAT: wt.constexpr = 2):
    """Control flow: a dynamic `if` on the program id carrying a tile, a static loop, and a
    Python number carried through a range loop."""
    row = wt.program_id(0)
    offsets = wt.arange(0, BLOCK)
    mask = offsets < n
    v = wt.load(x, row * n + offsets, mask)
    if row < threshold:
        v = v * 2.0
    else:
        v = v + 1.0
    for _ in wt.static_range(REPEAT):
        v = v + 0.5
    total = 0.0
    for i in range(0, 3):
        total = total + i.to(wt.f32)
    wt.store(out, row * n + offsets, v + total, mask)


@wt.kernel
def double_until(x: wt.pointer[wt.f32], out: wt.pointer[wt.f32], n: wt.i32, limit: wt.f32, BLOCK: wt.constexpr):
    """A while loop on tile values: doubles each row's block until its largest element
    reaches `limit`, counting the rounds."""
    row = wt.program_id(0)
    offsets = wt.arange(0, BLOCK)
    mask = offsets < n
    v = wt.load(x, row * n + offsets, mask)
    rounds = 0
    while wt.where(mask, v, 0.0).max(0) < limit:
        v = v * 2.0
        rounds = rounds + 1
    wt.store(out, row * n + offsets, v + rounds.to(wt.f32) * 1000.0, mask)


def double_until_reference(x, limit):
    """What double_until computes, row by row, in numpy."""
    expected = x.copy()
    for row in expected:
        rounds = 0
        while row.max() < limit:
            row *= 2
            rounds += 1
        row += rounds * 1000.0
    return expected
