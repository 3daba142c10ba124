#!/usr/bin/env python3
"""Runs Wavetile's sm_90 example kernels on an NVIDIA GPU and compares them with the host.

Inputs (made on the build machine by bench/h200/prepare.sh):
  DIR/<kernel>.ptx             PTX from `wavetile compile --example <name> --target sm_90 --emit ptx`
  DIR/<kernel>.json + *.bin    launch plans from `wavetile run <name> --save DIR`, whose output
                               buffers hold the host JIT's results

The kernel is loaded with the CUDA driver API (ctypes, no LLVM and no Wavetile build needed
here), outputs are poisoned (all bits set: NaN for floats) before the launch, and each output
element must match the host within the plan's tolerance (|gpu - host| <= atol + rtol*|host|;
0/0 means bit-exact). Elements the host left untouched (padding) must stay untouched.
Writes a markdown report to $OUT (or stdout) and exits non-zero on any mismatch.
"""
import ctypes
import json
import os
import re
import sys

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32, "i8": torch.int8}


class Driver:
    def __init__(self):
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # makes the primary context current on this thread
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, result, what):
        if result != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(result, ctypes.byref(name))
            raise RuntimeError(f"{what} failed: {name.value.decode() if name.value else result}")

    def load(self, ptx_text, kernel):
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        image = ctypes.create_string_buffer(ptx_text.encode() + b"\0")
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(function), module, kernel.encode()), "cuModuleGetFunction")
        return function

    def launch(self, function, grid, block, values):
        params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
        self.check(self.lib.cuLaunchKernel(function, *grid, *block, 0, None, params, None), "cuLaunchKernel")
        self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


def block_size(ptx, kernel):
    match = re.search(r"\.entry\s+" + re.escape(kernel) + r"\b.*?\.(?:reqntid|maxntid)\s+(\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?",
                      ptx, re.S)
    if not match:
        raise RuntimeError(f"{kernel}: the PTX declares no block size (.reqntid/.maxntid)")
    return tuple(int(g) if g else 1 for g in match.groups())


def run_plan(driver, directory, plan):
    kernel = plan["kernel"]
    with open(os.path.join(directory, kernel + ".ptx")) as f:
        ptx = f.read()
    function = driver.load(ptx, kernel)
    values, outputs = [], []
    for arg in plan["args"]:
        if arg["kind"] == "pointer":
            raw = open(os.path.join(directory, arg["file"]), "rb").read()
            host = torch.frombuffer(bytearray(raw), dtype=DTYPES[arg["type"]])
            device = host.clone().cuda()
            if arg["output"]:
                device.view(torch.uint8).fill_(0xFF)  # poison: NaN for every float format
                outputs.append((arg["name"], host, device))
            values.append(ctypes.c_void_p(device.data_ptr()))
        elif arg["kind"] == "i32":
            values.append(ctypes.c_int32(int(arg["value"])))
        elif arg["kind"] == "f32":
            values.append(ctypes.c_float(float(arg["value"])))
        else:
            raise RuntimeError(f"{kernel}: unsupported argument kind {arg['kind']}")
    values += [ctypes.c_int32(g) for g in plan["grid"]]  # the grid size follows the user arguments
    driver.launch(function, plan["grid"], block_size(ptx, kernel), values)

    rows, passed = [], True
    for name, host, device in outputs:
        gpu = device.cpu()
        h, g = host.double(), gpu.double()
        untouched = torch.isnan(h)
        if not torch.equal(untouched, torch.isnan(g)):
            rows.append((name, "NaN pattern differs (missing or stray writes)", False))
            passed = False
            continue
        diff = (g - h).abs()[~untouched]
        allowed = (plan["atol"] + plan["rtol"] * h.abs())[~untouched]
        ok = bool((diff <= allowed).all())
        worst = float(diff.max()) if diff.numel() else 0.0
        exact = int((diff == 0).sum())
        rows.append((name, f"max |gpu-host| {worst:.3g}, {exact}/{diff.numel()} bit-exact "
                           f"(rtol {plan['rtol']:g}, atol {plan['atol']:g})", ok))
        passed &= ok
    return rows, passed


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "dist/sm_90"
    driver = Driver()
    lines = [f"# Wavetile sm_90 examples vs host results\n",
             f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}\n",
             "| kernel | output | result | status |", "|---|---|---|---|"]
    failures = plans = 0
    for plan_file in sorted(p for p in os.listdir(directory) if p.endswith(".json")):
        plan = json.load(open(os.path.join(directory, plan_file)))
        try:
            rows, passed = run_plan(driver, directory, plan)
        except Exception as error:  # report every kernel, then fail
            rows, passed = [("-", str(error), False)], False
        plans += 1
        failures += not passed
        for name, text, ok in rows:
            lines.append(f"| {plan['kernel']} (grid {plan['grid']}, seed {plan['seed']}) | {name} | {text} | "
                         f"{'PASS' if ok else 'FAIL'} |")
    lines.append(f"\n{plans - failures} passed, {failures} failed")
    report = "\n".join(lines) + "\n"
    out = os.environ.get("OUT")
    if out:
        open(os.path.join(out, "sm90_examples.md"), "w").write(report)
    print(report)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
