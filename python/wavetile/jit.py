"""``@wavetile.kernel``: specialize, compile (cached) and launch.

``kernel[grid](*args, CONST=value, stream=None)`` launches on the arguments' device:

- torch tensors on a CUDA device run on the GPU through the runtime (the target comes from
  the device, or ``WAVETILE_TARGET``), on ``stream`` or torch's current stream, without
  waiting;
- numpy arrays (anything exporting DLPack on the CPU) run on the host: the JIT compiles a
  shared object for this CPU, the runtime's host device loads it, and the launch runs the
  grid before returning.

A launch specializes the kernel on its constexpr values and, for each pointer, on whether
the tensor is under 2 GiB (AMD then addresses it through buffer resources). Each
specialization is built once per process, and code objects (host and GPU) also go through
the disk cache.
"""
import functools
import os
import sys

from . import _wavetile as _C
from . import language
from .frontend import CompilationError, KernelFunction

LaunchError = _C.LaunchError
_TWO_GIB = 1 << 31

_TORCH_DTYPES = {"torch.float32": language.f32, "torch.float16": language.f16, "torch.bfloat16": language.bf16,
                 "torch.float64": language.f64, "torch.int32": language.i32, "torch.int64": language.i64,
                 "torch.int8": language.i8, "torch.int16": language.i16, "torch.uint8": language.i8,
                 "torch.bool": language.i1, "torch.float8_e4m3fn": language.float8_e4m3fn,
                 "torch.float8_e5m2": language.float8_e5m2, "torch.float8_e4m3fnuz": language.float8_e4m3fnuz,
                 "torch.float8_e5m2fnuz": language.float8_e5m2fnuz}
_NUMPY_DTYPES = {"float32": language.f32, "float16": language.f16, "float64": language.f64, "int32": language.i32,
                 "int64": language.i64, "int8": language.i8, "int16": language.i16, "uint8": language.i8,
                 "uint16": language.i16, "bool": language.i1}


def _dtype_of(tensor):
    """The wavetile dtype of a tensor's elements (bf16 and fp8 data in numpy travel as
    uint16 / uint8 and match any dtype of that width)."""
    name = str(tensor.dtype)
    return _TORCH_DTYPES.get(name) or _NUMPY_DTYPES.get(name)


# Launches specialize on whether each pointer is 16-byte aligned and each integer argument a
# multiple of 16: the compiler then drops run-time alignment checks around vector accesses.
_ALIGNMENT = 16


def _address_of(p):
    if isinstance(p, int):
        return p
    if hasattr(p, "data_ptr"):
        return p.data_ptr()
    return p.__array_interface__["data"][0] if hasattr(p, "__array_interface__") else 1


def _alignment_facts(args, pointer_slots, integer_slots):
    """Per pointer then per integer argument: aligned to / a multiple of 16."""
    return tuple([_address_of(args[i]) % _ALIGNMENT == 0 for i in pointer_slots] +
                 [isinstance(args[i], int) and args[i] % _ALIGNMENT == 0 for i in integer_slots])


class _Target:
    """A device and the JIT for it, opened on first use: a GPU, or the host."""

    def __init__(self, backend, ordinal=0):
        self.backend, self.ordinal = backend, ordinal
        self.device = self.jit = None

    def get(self):
        if self.device is None:
            self.device = _C.Device.open(self.ordinal, self.backend)
            self.jit = _C.Jit(self.device.target)
        return self


# WAVETILE_EMULATE=<GPU target>: launches and ops on numpy arrays run that target's kernels
# through the emulator (docs/emulator.md) instead of host code.
_HOST = _Target("emulate:" + os.environ["WAVETILE_EMULATE"] if os.environ.get("WAVETILE_EMULATE") else "host")
_GPUS = {}


def _gpu(index):
    """GPU `index` (torch's numbering), opened on first use."""
    if index not in _GPUS:
        _GPUS[index] = _Target("any", index)
    return _GPUS[index].get()


class _TorchStream:
    """torch's current CUDA device and raw stream, through the C functions torch itself uses."""
    get_stream = get_device = None

    @classmethod
    def device(cls):
        if cls.get_device is None:
            torch = sys.modules["torch"]
            cls.get_stream, cls.get_device = torch._C._cuda_getCurrentRawStream, torch._C._cuda_getDevice
        return cls.get_device()

    @classmethod
    def of(cls, device):
        """The raw current stream of `device`."""
        if cls.get_stream is None:
            cls.device()
        return cls.get_stream(device)

    @classmethod
    def current(cls):
        return cls.of(cls.device())


class Kernel:
    """A ``@wavetile.kernel`` function: ``kernel[grid](...)`` launches it, ``kernel.ir(...)``
    shows its tile IR for a specialization."""

    def __init__(self, fn, num_warps=4, num_stages=1, narrow_rounded_sums=True):
        self.function = KernelFunction(fn)
        self.num_warps, self.num_stages = num_warps, num_stages
        self.narrow_rounded_sums = narrow_rounded_sums
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._pointer_slots = [i for i, (_, a) in enumerate(self.function.runtime_params)
                               if isinstance(a, language._PointerType)]
        self._runtime_count = len(self.function.runtime_params)
        self._integer_slots = [i for i, (_, a) in enumerate(self.function.runtime_params)
                               if a in (language.i32, language.i64)]
        # kernel[grid](*args) without keywords is matched and launched in C++ once built.
        self._dispatcher = _C.Dispatcher(self._pointer_slots, self._integer_slots, self._runtime_count, self.launch)
        self._entry = self._dispatcher.entry()
        self._specializations = {}
        self.last_compile = None

    def module(self, constants=None, within_2gib=(), num_warps=None, num_stages=None, facts=None):
        """The compiled tile module for constexpr `constants` (defaults filled in); see
        KernelFunction.build for `within_2gib` and `facts`."""
        values = {}
        for name, default in self.function.constexpr_params:
            if constants and name in constants:
                values[name] = constants[name]
            elif default is not None:
                values[name] = default
            else:
                raise CompilationError(f"{self.function.source.file}: error: constexpr '{name}' of "
                                       f"'{self.__name__}' needs a value")
        return self.function.build(values, within_2gib, num_warps or self.num_warps,
                                   num_stages or self.num_stages, facts, self.narrow_rounded_sums)

    def ir(self, with_locations=False, **constants):
        return self.module(constants).str(with_locations)

    def __getitem__(self, grid):
        return functools.partial(self._entry, grid)

    def launch(self, grid, *args, **kwargs):
        # The hot path: a few attribute reads per pointer, one dict lookup, one C++ call.
        if len(args) != self._runtime_count:
            raise LaunchError(f"'{self.__name__}' takes {self._runtime_count} runtime arguments "
                              f"({', '.join(n for n, _ in self.function.runtime_params)}), got {len(args)}")
        stream, options = None, (self.num_warps, self.num_stages)
        key = []
        for i in self._pointer_slots:
            p = args[i]
            dtype = getattr(p, "dtype", None)
            key.append(dtype)
            key.append(dtype is not None and p.nbytes < _TWO_GIB)
        facts = _alignment_facts(args, self._pointer_slots, self._integer_slots)
        key.append(facts)
        on_gpu = any(getattr(args[i], "is_cuda", False) for i in self._pointer_slots)
        device = _TorchStream.device() if on_gpu else -1  # GPU kernels run on torch's current device
        key.append(device)
        if kwargs:
            stream = kwargs.pop("stream", None)
            options = (kwargs.pop("num_warps", self.num_warps), kwargs.pop("num_stages", self.num_stages))
            key.append((tuple(sorted(kwargs.items())), options))
        key = tuple(key)
        entry = self._specializations.get(key)
        if entry is None:
            pointer_key = key[:2 * len(self._pointer_slots)]
            entry = self._specialize(args, pointer_key[1::2], facts, device, kwargs, *options)
            self._specializations[key] = entry
            if not kwargs and stream is None and options == (self.num_warps, self.num_stages):
                self._dispatcher.add(list(pointer_key[0::2]), list(pointer_key[1::2]), list(facts), device,
                                     entry[1])
        if callable(grid):
            grid = grid(kwargs)
        elif isinstance(grid, int):
            grid = (grid,)
        on_gpu, launcher = entry
        if not on_gpu:
            stream = 0  # the host runs the grid before returning
        elif stream is None:
            stream = _TorchStream.current()
        elif not isinstance(stream, int):
            stream = stream.cuda_stream
        launcher.launch(grid, args, stream)

    def _specialize(self, args, within, facts, device, constants, num_warps, num_stages):
        pointers = [args[i] for i in self._pointer_slots]
        on_gpu = [bool(getattr(p, "is_cuda", False)) for p in pointers]
        if any(on_gpu) and not all(on_gpu):
            raise LaunchError(f"'{self.__name__}': every tensor must be on the same device (some are on the "
                              "GPU, some on the host)")
        elsewhere = sorted({p.device.index for p in pointers if getattr(p, "is_cuda", False)} - {device})
        if elsewhere:
            raise LaunchError(f"'{self.__name__}': tensors on cuda:{elsewhere[0]}, but the current device is "
                              f"cuda:{device}; launch under torch.cuda.device({elsewhere[0]})")
        params = [a for _, a in self.function.runtime_params if isinstance(a, language._PointerType)]
        names = [n for n, a in self.function.runtime_params if isinstance(a, language._PointerType)]
        for name, annotation, tensor in zip(names, params, pointers):
            dtype = _dtype_of(tensor) if hasattr(tensor, "dtype") else None
            if dtype is None:
                continue  # an address given as an int: nothing to check
            if _C.bit_width(dtype) != _C.bit_width(annotation.dtype) or (
                    dtype != annotation.dtype and str(tensor.dtype) not in ("uint8", "uint16", "int8", "int16")):
                raise LaunchError(f"argument '{name}' of '{self.__name__}' points to "
                                  f"{_C.dtype_name(annotation.dtype)}, got a tensor of {tensor.dtype}")
        unknown = set(constants) - {n for n, _ in self.function.constexpr_params}
        if unknown:
            raise LaunchError(f"'{self.__name__}' has no constexpr named {', '.join(sorted(unknown))}")
        names = [n for n, _ in self.function.runtime_params]
        slots = self._pointer_slots + self._integer_slots
        known = {names[i]: _ALIGNMENT for i, fact in zip(slots, facts) if fact}
        module = self.module(constants, within, num_warps, num_stages, known)
        target = _gpu(device) if device >= 0 else _HOST.get()
        image, manifest, source, seconds = target.jit.compile(module)
        self.last_compile = (source, seconds)  # "compiled" / "disk" / "memory", and the time it took
        return device >= 0, target.device.load(image, manifest, self.__name__)


def kernel(fn=None, *, num_warps=4, num_stages=1, narrow_rounded_sums=True):
    """Marks a function as a Wavetile kernel (see the module docstring)."""
    if fn is None:
        return lambda f: Kernel(f, num_warps, num_stages, narrow_rounded_sums)
    return Kernel(fn, num_warps, num_stages, narrow_rounded_sums)
