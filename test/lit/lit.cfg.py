# lit configuration for Wavetile. Run through ctest (see test/CMakeLists.txt), or directly:
#   lit-22 -v build/test/lit
import os
import lit.formats

config.name = "Wavetile"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.wavetile_binary_dir, "test", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]

config.environment["PATH"] = os.pathsep.join(
    [config.wavetile_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%wavetile-opt", os.path.join(config.wavetile_tools_dir, "wavetile-opt")))
config.substitutions.append(("%wavetile", os.path.join(config.wavetile_tools_dir, "wavetile")))

# `ptxas` (CUDA toolkit) checks the PTX Wavetile writes; tests that run it say
# `REQUIRES: ptxas`. Wavetile itself never needs it.
import shutil
_ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if _ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
