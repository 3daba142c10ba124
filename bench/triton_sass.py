#!/usr/bin/env python3
"""SASS of each library op next to the Triton kernel it is benchmarked against, without a GPU.

The Triton kernels are the ones in bench/h200/ops_bench.py, compiled for sm_90a with the
configuration that script launches them with; Wavetile's are `wavetile compile --op` specs of
the same shape (16-byte aligned). Both go through the ptxas inside Triton's wheel, and
its cuobjdump prints the SASS. Per kernel: registers, instructions in all and up to the last
EXIT (the main path, without out-of-line slow paths), and a few counts.

    python3 -m venv /tmp/triton && /tmp/triton/bin/pip install triton==3.6.0
    /tmp/triton/bin/python bench/triton_sass.py [--n 4096,16384] [--ops rmsnorm,silu] [--keep DIR]
"""
import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")


def row_warps(block):
    return min(max(block // 512, 1), 16)


def pow2(n):
    return 1 << (n - 1).bit_length()


# op -> (Triton kernel, signature, constexprs(N), warps(N), Wavetile spec(N)), as ops_bench.py launches them.
OPS = {
    "rmsnorm": ("_triton_rmsnorm", {"x": "*bf16", "w": "*bf16", "out": "*bf16", "stride": "i32", "n": "i32",
                                    "eps": "fp32"},
                lambda n: {"BLOCK": pow2(n)}, lambda n: row_warps(pow2(n)), lambda n: f"rmsnorm2d_fwd:bf16:{n}:packed:a16"),
    "layernorm": ("_triton_layernorm", {"x": "*bf16", "w": "*bf16", "b": "*bf16", "out": "*bf16", "stride": "i32",
                                        "n": "i32", "eps": "fp32"},
                  lambda n: {"BLOCK": pow2(n)}, lambda n: row_warps(pow2(n)),
                  lambda n: f"layernorm2d_fwd:bf16:{n}:packed:a16"),
    **{act: ("_triton_gated", {"x": "*bf16", "out": "*bf16", "x_stride": "i32", "out_stride": "i32", "d": "i32",
                               "limit": "fp32", "alpha": "fp32"},
             lambda n, act=act: {"ACT": act, "BLOCK": min(pow2(n), 2048)}, lambda n: max(1, min(pow2(n), 2048) // 256),
             lambda n, name=name: f"{name}:bf16:{n}:a16")
       for act, name in (("silu", "silu_and_mul"), ("gelu", "gelu_and_mul"), ("gelu_tanh", "gelu_tanh_and_mul"),
                         ("swiglu", "swiglu"))},
    "quant": ("_triton_per_token_quant", {"x": "*bf16", "out": "*fp8e4nv", "scales": "*fp32", "stride": "i32",
                                          "n": "i32"},
              lambda n: {"BLOCK": pow2(n), "EXACT": False}, lambda n: row_warps(pow2(n)),
              lambda n: f"dynamic_per_token_scaled_quant:bf16:{n}:a16"),
    "rmsnorm_quant": ("_triton_rmsnorm_quant", {"x": "*bf16", "w": "*bf16", "out": "*fp8e4nv", "scales": "*fp32",
                                                "stride": "i32", "n": "i32", "eps": "fp32"},
                      lambda n: {"BLOCK": pow2(n)}, lambda n: row_warps(pow2(n)),
                      lambda n: f"rmsnorm2d_fwd_with_dynamicquant:bf16:{n}:packed:a16"),
    "mxfp4": ("_triton_mxfp4", {"x": "*bf16", "out": "*u8", "scales": "*u8", "stride": "i32", "n": "i32"},
              lambda n: {"GROUPS": 32}, lambda n: 4,
              lambda n: f"dynamic_per_group_scaled_quant:bf16:{n}:out=f4E2M1FN:group=32:a16"),
    "mxfp8": ("_triton_mxfp8", {"x": "*bf16", "out": "*fp8e4nv", "scales": "*u8", "stride": "i32", "n": "i32"},
              lambda n: {"GROUPS": 64, "GROUP": 32}, lambda n: 4,
              lambda n: f"dynamic_per_group_scaled_quant:bf16:{n}:group=32:e8m0:a16"),
    "rope": ("_triton_rope", {"x": "*bf16", "out": "*bf16", "cos": "*bf16", "sin": "*bf16", "positions": "*i64",
                              "stride_t": "i32", "heads": "i32"},
             lambda n: {"HEADS": pow2(n // 128), "HALF": 64, "GPTJ": False}, lambda n: 4,
             lambda n: f"rope_cached_positions_fwd:bf16:128:heads={n // 128}:f=64:reuse:cos=bf16:pos=i64:packed:a16"),
    "rope_gptj": ("_triton_rope", {"x": "*bf16", "out": "*bf16", "cos": "*bf16", "sin": "*bf16",
                                   "positions": "*i64", "stride_t": "i32", "heads": "i32"},
                  lambda n: {"HEADS": pow2(n // 128), "HALF": 64, "GPTJ": True}, lambda n: 4,
                  lambda n: f"rope_cached_positions_fwd:bf16:128:heads={n // 128}:f=64:gptj:reuse:cos=bf16:"
                            "pos=i64:packed:a16"),
    "group_quant": ("_triton_group_quant", {"x": "*bf16", "out": "*fp8e4nv", "scales": "*fp32", "stride": "i32",
                                            "n": "i32"},
                    lambda n: {"GROUP": 128, "GROUPS": 8, "EXACT": False}, lambda n: 4,
                    lambda n: f"dynamic_per_group_scaled_quant:bf16:{n}:group=128:a16"),
    "static_quant": ("_triton_static_quant", {"x": "*bf16", "out": "*fp8e4nv", "scale": "*fp32", "stride": "i32",
                                              "n": "i32"},
                     lambda n: {"BLOCK": min(pow2(n), 2048), "EXACT": False},
                     lambda n: max(1, min(pow2(n), 2048) // 256),
                     lambda n: f"static_per_tensor_quant:bf16:{n}:rows=few:a16"),
    "rmsnorm_add": ("_triton_norm_add", {"x": "*bf16", "r": "*bf16", "w": "*bf16", "b": "*bf16", "out": "*bf16",
                                         "r_out": "*bf16", "scales": "*bf16", "stride": "i32", "n": "i32",
                                         "eps": "fp32"},
                    lambda n: {"LAYER": False, "QUANT": False, "BLOCK": pow2(n)}, lambda n: row_warps(pow2(n)),
                    lambda n: f"rmsnorm2d_fwd_with_add:bf16:{n}:packed:a16"),
    "rmsnorm_add_quant": ("_triton_norm_add", {"x": "*bf16", "r": "*bf16", "w": "*bf16", "b": "*bf16",
                                               "out": "*fp8e4nv", "r_out": "*bf16", "scales": "*fp32", "stride": "i32",
                                               "n": "i32", "eps": "fp32"},
                          lambda n: {"LAYER": False, "QUANT": True, "BLOCK": pow2(n)}, lambda n: row_warps(pow2(n)),
                          lambda n: f"rmsnorm2d_fwd_with_add_dynamicquant:bf16:{n}:rows=many:packed:a16"),
}


def triton_kernels(directory):
    """The @triton.jit kernels of ops_bench.py as a module of their own (Triton reads its source
    from a file; ops_bench.py itself imports torch)."""
    path = os.path.join(ROOT, "bench", "h200", "ops_bench.py")
    source = open(path).read()
    parts = ["import triton", "import triton.language as tl", ""]
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_triton"):
            parts += ["@triton.jit", ast.get_source_segment(source, node), ""]
    with open(os.path.join(directory, "ops_bench_kernels.py"), "w") as f:
        f.write("\n".join(parts))
    sys.path.insert(0, directory)
    import ops_bench_kernels
    return vars(ops_bench_kernels)


def sass_summary(ptx, stem):
    cubin = stem + ".cubin"
    subprocess.run([os.path.join(TOOLS, "ptxas"), "-arch=sm_90a", "-O3", ptx, "-o", cubin], check=True)
    dump = subprocess.run([os.path.join(TOOLS, "cuobjdump"), "-sass", cubin], check=True, capture_output=True,
                          text=True).stdout
    lines = [line for line in dump.splitlines() if re.match(r"\s+/\*[0-9a-f]+\*/", line) and "NOP" not in line
             and not re.search(r"BRA `?\(\.L_x_\d+\)", line)]
    with open(stem + ".sass", "w") as f:
        f.write("\n".join(lines) + "\n")
    exits = [i for i, line in enumerate(lines) if "EXIT" in line]
    usage = subprocess.run([os.path.join(TOOLS, "cuobjdump"), "-res-usage", cubin], check=True, capture_output=True,
                           text=True).stdout
    registers = re.search(r"REG:(\d+)", usage)
    count = lambda op: sum(1 for line in lines if re.search(r"\b" + op + r"\b", line))
    return {"registers": int(registers.group(1)) if registers else 0, "all": len(lines),
            "main": exits[-1] + 1 if exits else len(lines), "LDG": count("LDG"), "STG": count("STG"),
            "BAR": count("BAR"), "SHFL": count("SHFL"), "MUFU": count("MUFU"), "BRA": count("BRA")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--n", default="4096,16384", help="hidden sizes (RoPE: heads x 128)")
    parser.add_argument("--wavetile", default=os.path.join(ROOT, "build", "bin", "wavetile"))
    parser.add_argument("--keep", help="write the PTX and SASS of every kernel here")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="triton-sass-")
    os.makedirs(directory, exist_ok=True)
    kernels = triton_kernels(directory)
    columns = ["registers", "all", "main", "LDG", "STG", "BAR", "SHFL", "MUFU", "BRA"]
    print("| op | N | kernel | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for op in args.ops.split(","):
        name, signature, constexprs, warps, spec = OPS[op]
        for n in (int(v) for v in args.n.split(",")):
            stem = os.path.join(directory, f"{op}_{n}")
            consts = constexprs(n)
            # Pointers and i32 arguments specialized as divisible by 16, as Triton does for these launches.
            attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(signature.values()) if t != "fp32"}
            source = ASTSource(kernels[name], signature={**signature, **{c: "constexpr" for c in consts}},
                               constexprs=consts, attrs=attrs)
            compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps(n)})
            with open(stem + ".triton.ptx", "w") as f:
                f.write(compiled.asm["ptx"])
            subprocess.run([args.wavetile, "compile", "--op", spec(n), "--target", "sm_90a", "-o",
                            stem + ".wavetile.ptx"], check=True)
            for kernel in ("triton", "wavetile"):
                s = sass_summary(f"{stem}.{kernel}.ptx", f"{stem}.{kernel}")
                print(f"| {op} | {n} | {kernel} | " + " | ".join(str(s[c]) for c in columns) + " |")
    if not args.keep:
        print(f"(PTX and SASS in {directory})")


if __name__ == "__main__":
    main()
