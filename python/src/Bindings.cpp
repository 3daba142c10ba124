//===- Bindings.cpp - the _wavetile extension module ----------------------===//
//
// The C++ DSL, the compiler (host JIT, GPU JIT with its cache) and the runtime (devices,
// launches) for the Python package. The Python front end (wavetile/frontend.py) walks a
// kernel's AST and calls the DSL here, with each node's file:line:col as the location.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Compiler.h"
#include "wavetile/Emulator.h"
#include "wavetile/Jit.h"
#include "wavetile/dsl/DSL.h"
#include "wavetile/runtime/Device.h"

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

// The DLPack ABI (dmlc/dlpack, v0.8 and later keep it): what a "dltensor" capsule points to.
struct DLDevice {
  int32_t deviceType, deviceId;
};
struct DLDataType {
  uint8_t code, bits;
  uint16_t lanes;
};
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byteOffset;
};
struct DLManagedTensor {
  DLTensor tensor;
  void *managerContext;
  void (*deleter)(DLManagedTensor *);
};
using namespace wavetile;
using namespace wavetile::dsl;

namespace {

/// An error the Python side raises as wavetile.CompilationError / LaunchError.
struct CompilationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct LaunchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Operands from Python: a Value, an int or a float (which take the other side's dtype).
Operand operand(const py::handle &h) {
  if (py::isinstance<Value>(h))
    return Operand(h.cast<Value>());
  if (py::isinstance<py::bool_>(h))
    return Operand(int64_t(h.cast<bool>()));
  if (py::isinstance<py::int_>(h))
    return Operand(h.cast<int64_t>());
  if (py::isinstance<py::float_>(h))
    return Operand(h.cast<double>());
  throw py::type_error("expected a tile value, an int or a float, got " + std::string(py::str(py::type::of(h))));
}

std::optional<Operand> optionalOperand(const py::object &h) {
  if (h.is_none())
    return std::nullopt;
  return operand(h);
}

/// The locations operations get while Python pushes them (one per AST node being built).
std::vector<std::unique_ptr<SourceOverride>> &locationStack() {
  static thread_local std::vector<std::unique_ptr<SourceOverride>> stack;
  return stack;
}

/// A kernel being built: the module builder and its open kernel.
struct KernelBuild {
  std::unique_ptr<ModuleBuilder> module = std::make_unique<ModuleBuilder>();
  std::optional<KernelBuilder> kernel;
};

/// The address behind a launch argument: a torch tensor (data_ptr), an int, or anything that
/// exports DLPack (numpy arrays). Also its extent in bytes from that address.
void *addressOf(const py::handle &h, uint64_t *extent) {
  *extent = 0;
  if (py::isinstance<py::int_>(h))
    return reinterpret_cast<void *>(h.cast<uintptr_t>());
  // torch: the fast path, one attribute lookup and one call. The extent stays unknown: the
  // launcher chose the specialization (2 GiB promise or not) from the tensor's size.
  static PyObject *dataPtrName = PyUnicode_InternFromString("data_ptr"); // never released
  if (PyObject *address = PyObject_CallMethodNoArgs(h.ptr(), dataPtrName)) {
    void *pointer = PyLong_AsVoidPtr(address);
    Py_DECREF(address);
    if (PyErr_Occurred())
      throw py::error_already_set();
    return pointer;
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError))
    throw py::error_already_set();
  PyErr_Clear();
  if (py::hasattr(h, "__dlpack__")) {
    py::capsule capsule = h.attr("__dlpack__")();
    auto *managed = static_cast<DLManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (!managed)
      throw py::type_error("the argument's __dlpack__ returned no tensor");
    const DLTensor &t = managed->tensor;
    uint64_t elements = 1;
    for (int d = 0; d < t.ndim; ++d)
      elements *= uint64_t(t.shape[d]);
    *extent = elements * ((t.dtype.bits * t.dtype.lanes + 7) / 8);
    void *address = static_cast<char *>(t.data) + t.byteOffset;
    // We did not consume the capsule: its destructor releases the tensor (the owner keeps
    // the memory alive for the call).
    return address;
  }
  throw py::type_error("a pointer argument needs a tensor (torch, numpy or DLPack) or an int address, got " +
                       std::string(py::str(py::type::of(h))));
}

constexpr size_t kMaxArguments = 64;

/// Converts Python launch arguments to KernelArgs by the kernel's parameters, into `args`
/// (as long as `values`).
void convertArguments(const KernelSignature &signature, PyObject *const *values, size_t count, KernelArg *args) {
  if (count != signature.params.size())
    throw LaunchError("kernel '" + signature.name + "' takes " + std::to_string(signature.params.size()) +
                      " arguments, got " + std::to_string(count));
  if (count > kMaxArguments)
    throw LaunchError("kernel '" + signature.name + "' has more than " + std::to_string(kMaxArguments) +
                      " arguments");
  for (size_t i = 0; i < count; ++i) {
    const KernelParam &p = signature.params[i];
    KernelArg &a = args[i];
    a.kind = p.kind;
    a.extentBytes = 0;
    py::handle v(values[i]);
    try {
      switch (p.kind) {
      case ArgKind::Pointer:
        a.pointer = addressOf(v, &a.extentBytes);
        break;
      case ArgKind::I32:
        a.i32 = v.cast<int32_t>();
        break;
      case ArgKind::I64:
        a.i64 = v.cast<int64_t>();
        break;
      case ArgKind::F32:
        a.f32 = v.cast<float>();
        break;
      case ArgKind::F64:
        a.f64 = v.cast<double>();
        break;
      }
    } catch (const py::cast_error &) {
      throw LaunchError("argument " + std::to_string(i) + " ('" + p.name + "') of '" + signature.name +
                        "' must be " + argKindName(p.kind) + ", got " + std::string(py::str(py::type::of(v))));
    }
  }
}

void convertArguments(const KernelSignature &signature, const py::tuple &values, KernelArg *args) {
  convertArguments(signature, &PyTuple_GET_ITEM(values.ptr(), 0), values.size(), args);
}

std::array<uint32_t, 3> gridOf(const py::object &gridObject) {
  PyObject *single[1] = {gridObject.ptr()};
  bool isInt = PyLong_Check(gridObject.ptr());
  // Tuples are read in place; other sequences are copied into one.
  py::object grid = isInt || PyTuple_Check(gridObject.ptr()) ? gridObject : py::tuple(gridObject);
  PyObject *const *items = isInt ? single : &PyTuple_GET_ITEM(grid.ptr(), 0);
  size_t size = isInt ? 1 : size_t(PyTuple_GET_SIZE(grid.ptr()));
  if (size < 1 || size > 3)
    throw LaunchError("a grid has 1 to 3 dimensions");
  std::array<uint32_t, 3> g{1, 1, 1};
  for (size_t i = 0; i < size; ++i) {
    int64_t v = py::handle(items[i]).cast<int64_t>();
    if (v < 1 || v >= (int64_t(1) << 31))
      throw LaunchError("grid dimensions must be in [1, 2^31), got " + std::to_string(v));
    g[i] = uint32_t(v);
  }
  return g;
}

/// The first error a Python callback raised inside a DSL region: the callback returns
/// `fallback()` instead, the DSL completes the region, and `rethrow` raises the error.
class HeldError {
public:
  template <typename Body, typename Fallback> auto call(const Body &body, const Fallback &fallback) -> decltype(body()) {
    if (pending)
      return fallback();
    try {
      return body();
    } catch (...) {
      pending = std::current_exception();
      return fallback();
    }
  }
  void rethrow() const {
    if (pending)
      std::rethrow_exception(pending);
  }

private:
  std::exception_ptr pending;
};

/// A compiled kernel loaded on a device, ready to launch. It keeps its device alive (the
/// module is unloaded through it), whoever holds it.
struct LoadedKernel {
  std::shared_ptr<Device> device; // destroyed after the module
  std::shared_ptr<LoadedModule> module;
  const LoadedModule::Kernel *kernel;
};

/// wavetile.LaunchError, once the module has registered it.
PyObject *launchErrorType = PyExc_RuntimeError;

/// The launch fast path of a Python kernel, for `kernel[grid](*args)` without keywords: the
/// specialization key (per pointer argument, its dtype object and whether its tensor is under
/// 2 GiB) is computed and matched here, and the launch goes straight to the loaded kernel.
/// Anything else (keywords, a key not built yet, a callable grid) goes to the Python launcher,
/// which specializes and registers what it built with `add`. The entry point is a plain
/// CPython vectorcall function (`entry()`): pybind11's dispatch would cost more than the rest.
class Dispatcher {
public:
  Dispatcher(std::vector<size_t> pointerSlots, std::vector<size_t> integerSlots, size_t argumentCount,
             py::object slowPath)
      : pointerSlots(std::move(pointerSlots)), integerSlots(std::move(integerSlots)), argumentCount(argumentCount),
        slowPath(std::move(slowPath)) {}

  /// A built specialization: per pointer its dtype (None for addresses) and 2 GiB bit, then
  /// per pointer and per integer argument whether it is 16-aligned / a multiple of 16; the
  /// CUDA device it was loaded on (-1: the host).
  void add(const std::vector<py::object> &dtypes, const std::vector<bool> &within, const std::vector<bool> &facts,
           int device, const LoadedKernel &kernel) {
    entries.push_back(Entry{dtypes, within, facts, device, kernel});
  }

  /// `f(grid, *args, **kwargs)` as a builtin function bound to this dispatcher.
  py::object entry(const py::object &self) {
    static PyMethodDef definition{"launch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call)),
                                  METH_FASTCALL | METH_KEYWORDS, "kernel[grid](*args): launch"};
    // The function holds the Python wrapper of this dispatcher, which keeps it alive.
    return py::reinterpret_steal<py::object>(PyCFunction_NewEx(&definition, self.ptr(), nullptr));
  }

private:
  struct Entry {
    std::vector<py::object> dtypes; // None for int addresses
    std::vector<bool> within, facts;
    int device; // -1: the host
    LoadedKernel kernel;
  };

  static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    try {
      auto &dispatcher = py::cast<Dispatcher &>(py::handle(self));
      return dispatcher.launch(args, nargs, kwnames);
    } catch (py::error_already_set &e) {
      e.restore();
    } catch (const LaunchError &e) {
      PyErr_SetString(launchErrorType, e.what());
    } catch (const std::exception &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
  }

  PyObject *launch(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *grid = nargs > 0 ? args[0] : nullptr;
    if (kwnames || size_t(nargs) != argumentCount + 1 || !(PyTuple_Check(grid) || PyLong_Check(grid)))
      return PyObject_Vectorcall(slowPath.ptr(), args, size_t(nargs), kwnames);
    PyObject *const *values = args + 1;
    // The key, without building Python objects.
    PyObject *dtypes[kMaxArguments];
    bool within[kMaxArguments];
    for (size_t i = 0; i < pointerSlots.size(); ++i) {
      PyObject *arg = values[pointerSlots[i]];
      dtypes[i] = PyObject_GetAttr(arg, dtypeName());
      within[i] = false;
      if (!dtypes[i]) { // an int address
        PyErr_Clear();
        continue;
      }
      Py_DECREF(dtypes[i]); // the tensor keeps its dtype alive for the call
      PyObject *nbytes = PyObject_GetAttr(arg, nbytesName());
      if (!nbytes)
        return nullptr;
      within[i] = PyLong_AsUnsignedLongLong(nbytes) < (uint64_t(1) << 31);
      Py_DECREF(nbytes);
    }
    if (entries.empty())
      return PyObject_Vectorcall(slowPath.ptr(), args, size_t(nargs), kwnames);
    // Every specialization has the same parameters: convert once, then read the facts.
    KernelArg converted[kMaxArguments];
    convertArguments(entries.front().kernel.kernel->manifest().signature, values, size_t(nargs - 1), converted);
    bool facts[kMaxArguments];
    size_t f = 0;
    for (size_t slot : pointerSlots)
      facts[f++] = reinterpret_cast<uintptr_t>(converted[slot].pointer) % 16 == 0;
    for (size_t slot : integerSlots)
      facts[f++] = (converted[slot].kind == ArgKind::I64 ? converted[slot].i64 : converted[slot].i32) % 16 == 0;
    const Entry *entry = find(dtypes, within, facts, kAnyDevice);
    uintptr_t stream = 0;
    if (entry && entry->device >= 0) { // GPU kernels run on torch's current device and stream
      int device;
      if (!currentTorchStream(&device, &stream))
        return nullptr;
      if (entry->device != device)
        entry = find(dtypes, within, facts, device);
    }
    if (!entry)
      return PyObject_Vectorcall(slowPath.ptr(), args, size_t(nargs), kwnames);
    std::string error;
    if (!entry->kernel.kernel->launch(gridOf(py::reinterpret_borrow<py::object>(grid)), converted, size_t(nargs - 1),
                                      reinterpret_cast<void *>(stream), &error))
      throw LaunchError(error);
    Py_RETURN_NONE;
  }

  // Interned once and never released: they outlive the interpreter's shutdown.
  static PyObject *dtypeName() {
    static PyObject *name = PyUnicode_InternFromString("dtype");
    return name;
  }
  static PyObject *nbytesName() {
    static PyObject *name = PyUnicode_InternFromString("nbytes");
    return name;
  }

  static constexpr int kAnyDevice = -2;

  const Entry *find(PyObject *const *dtypes, const bool *within, const bool *facts, int device) const {
    for (const Entry &e : entries) {
      bool match = (device == kAnyDevice || e.device == device) && std::equal(e.facts.begin(), e.facts.end(), facts);
      for (size_t i = 0; match && i < pointerSlots.size(); ++i) {
        PyObject *want = e.dtypes[i].is_none() ? nullptr : e.dtypes[i].ptr();
        match = within[i] == e.within[i] &&
                (dtypes[i] == want || (dtypes[i] && want && PyObject_RichCompareBool(dtypes[i], want, Py_EQ) == 1));
      }
      if (match)
        return &e;
    }
    return nullptr;
  }

  /// torch's current CUDA device and its current raw stream, through the C functions torch
  /// itself uses.
  bool currentTorchStream(int *deviceIndex, uintptr_t *stream) {
    if (!getStream) {
      py::object torchC = py::module_::import("torch").attr("_C");
      getDevice = torchC.attr("_cuda_getDevice");
      getStream = torchC.attr("_cuda_getCurrentRawStream");
    }
    PyObject *device = PyObject_CallNoArgs(getDevice.ptr());
    if (!device)
      return false;
    *deviceIndex = int(PyLong_AsLong(device));
    PyObject *raw = PyObject_CallOneArg(getStream.ptr(), device);
    Py_DECREF(device);
    if (!raw)
      return false;
    *stream = uintptr_t(PyLong_AsUnsignedLongLong(raw));
    Py_DECREF(raw);
    return true;
  }

  std::vector<size_t> pointerSlots, integerSlots;
  size_t argumentCount;
  py::object slowPath, getDevice, getStream;
  std::vector<Entry> entries;
};

} // namespace

void bindOps(py::module_ &m); // OpsBindings.cpp

PYBIND11_MODULE(_wavetile, m) {
  m.doc() = "Wavetile: the DSL, the compiler and the runtime";
  py::register_exception<CompilationError>(m, "CompilationError");
  launchErrorType = py::register_exception<LaunchError>(m, "LaunchError").ptr();

  py::enum_<DType> dtype(m, "DType");
  for (DType d : {DType::i1, DType::i8, DType::i16, DType::i32, DType::i64, DType::f16, DType::bf16, DType::f32,
                  DType::f64, DType::f8E4M3FN, DType::f8E5M2, DType::f8E4M3FNUZ, DType::f8E5M2FNUZ, DType::f6E2M3FN,
                  DType::f6E3M2FN, DType::f4E2M1FN, DType::f8E8M0FNU})
    dtype.value(dtypeName(d), d);
  m.def("dtype_name", [](DType d) { return std::string(dtypeName(d)); });
  m.def("bit_width", &bitWidth);

  // Values and their operators. Python ints and floats on either side take the value's dtype.
  py::class_<Value> value(m, "Value");
  value.def_property_readonly("shape", &Value::shape)
      .def_property_readonly("dtype", &Value::dtype)
      .def_property_readonly("is_tile", &Value::isTile)
      .def("to", [](const Value &v, DType d, bool saturate) { return v.to(d, saturate); }, py::arg("dtype"),
           py::arg("saturate") = false)
      .def("expand", [](const Value &v, int axis) { return v.expand(axis); })
      .def("broadcast_to", [](const Value &v, const Shape &s) { return v.broadcastTo(s); })
      .def("reshape", [](const Value &v, const Shape &s) { return v.reshape(s); })
      .def("trans", [](const Value &v, std::vector<int> order) { return v.trans(order); },
           py::arg("order") = std::vector<int>{})
      .def("sum", [](const Value &v, int axis) { return v.sum(axis); })
      .def("max", [](const Value &v, int axis) { return v.max(axis); })
      .def("min", [](const Value &v, int axis) { return v.min(axis); })
      .def("cumsum", [](const Value &v, int axis) { return v.cumsum(axis); });
#define WAVETILE_BINARY(pyname, rpyname, op)                                                                     \
  value.def(pyname, [](const Value &a, const py::object &b) { return Operand(a) op operand(b); });               \
  value.def(rpyname, [](const Value &a, const py::object &b) { return operand(b) op Operand(a); });
  WAVETILE_BINARY("__add__", "__radd__", +)
  WAVETILE_BINARY("__sub__", "__rsub__", -)
  WAVETILE_BINARY("__mul__", "__rmul__", *)
  WAVETILE_BINARY("__truediv__", "__rtruediv__", /)
  WAVETILE_BINARY("__mod__", "__rmod__", %)
  WAVETILE_BINARY("__and__", "__rand__", &)
  WAVETILE_BINARY("__or__", "__ror__", |)
  WAVETILE_BINARY("__xor__", "__rxor__", ^)
  WAVETILE_BINARY("__lshift__", "__rlshift__", <<)
  WAVETILE_BINARY("__rshift__", "__rrshift__", >>)
#undef WAVETILE_BINARY
  value.def("__lt__", [](const Value &a, const py::object &b) { return Operand(a) < operand(b); })
      .def("__le__", [](const Value &a, const py::object &b) { return Operand(a) <= operand(b); })
      .def("__gt__", [](const Value &a, const py::object &b) { return Operand(a) > operand(b); })
      .def("__ge__", [](const Value &a, const py::object &b) { return Operand(a) >= operand(b); })
      .def("__eq__", [](const Value &a, const py::object &b) { return Operand(a) == operand(b); })
      .def("__ne__", [](const Value &a, const py::object &b) { return Operand(a) != operand(b); })
      .def("__neg__", [](const Value &a) { return -Operand(a); })
      .def("__bool__", [](const Value &) -> bool {
        throw CompilationError("a tile value has no Python truth value; use it in `if` or `while` directly "
                               "(the front end turns those into kernel control flow)");
      });
  value.attr("__hash__") = py::none();

  py::class_<Pointer>(m, "Pointer").def_property_readonly("dtype", &Pointer::elementType);
  py::class_<Buffer>(m, "Buffer");

  // Locations: the front end pushes the AST node it is building.
  m.def("push_location", [](std::string file, unsigned line, unsigned column) {
    locationStack().push_back(std::make_unique<SourceOverride>(std::move(file), line, column));
  });
  m.def("pop_location", [] {
    if (!locationStack().empty())
      locationStack().pop_back();
  });

  py::class_<KernelBuild>(m, "KernelBuild")
      .def(py::init([](const std::string &name, int numWarps, int numStages, bool narrowRoundedSums) {
             auto build = std::make_unique<KernelBuild>();
             build->kernel.emplace(build->module->kernel(
                 name, {.numWarps = numWarps, .numStages = numStages, .narrowRoundedSums = narrowRoundedSums}));
             return build;
           }),
           py::arg("name"), py::arg("num_warps") = 4, py::arg("num_stages") = 1,
           py::arg("narrow_rounded_sums") = true)
      .def("pointer",
           [](KernelBuild &b, const std::string &name, DType d, bool within2GiB, int64_t alignment) {
             Pointer p = b.kernel->pointer(name, d, within2GiB ? Reach::within2GiB : Reach::unbounded);
             if (alignment > 1)
               b.kernel->assumeAligned(p, alignment);
             return p;
           },
           py::arg("name"), py::arg("dtype"), py::arg("within_2gib") = false, py::arg("alignment") = 0)
      .def("scalar",
           [](KernelBuild &b, const std::string &name, DType d, int64_t divisor) {
             Value v = b.kernel->scalar(name, d);
             if (divisor > 1)
               b.kernel->assumeDivisible(v, divisor);
             return v;
           },
           py::arg("name"), py::arg("dtype"), py::arg("divisibility") = 0)
      .def("param", [](KernelBuild &b, const std::string &name, int64_t v) { return b.kernel->param(name, v); })
      .def("finish", [](KernelBuild &b) {
        b.kernel.reset(); // closes the kernel
        std::string errors;
        std::unique_ptr<Module> module = b.module->finish(&errors);
        if (!module)
          throw CompilationError(errors);
        return std::shared_ptr<Module>(std::move(module));
      });

  // Operations (the C++ DSL's free functions).
  m.def("program_id", [](int axis) { return programId(axis); });
  m.def("num_programs", [](int axis) { return numPrograms(axis); });
  m.def("arange", [](int32_t start, int32_t end) { return arange(start, end); });
  m.def("full", [](const Shape &s, const py::object &v, DType d) { return full(s, operand(v), d); });
  m.def("zeros", [](const Shape &s, DType d) { return zeros(s, d); });
  m.def("constant", [](double v, DType d) { return constant(v, d); });
  m.def("load",
        [](const Pointer &p, const py::object &offsets, const py::object &mask, const py::object &other) {
          return load(p, operand(offsets), optionalOperand(mask), optionalOperand(other));
        },
        py::arg("pointer"), py::arg("offsets"), py::arg("mask") = py::none(), py::arg("other") = py::none());
  m.def("load",
        [](const Buffer &buf, const py::object &offsets, const py::object &mask) {
          return load(buf, operand(offsets), optionalOperand(mask));
        },
        py::arg("pointer"), py::arg("offsets"), py::arg("mask") = py::none());
  m.def("store",
        [](const Pointer &p, const py::object &offsets, const py::object &v, const py::object &mask) {
          store(p, operand(offsets), operand(v), optionalOperand(mask));
        },
        py::arg("pointer"), py::arg("offsets"), py::arg("value"), py::arg("mask") = py::none());
  m.def("store",
        [](const Buffer &buf, const py::object &offsets, const py::object &v, const py::object &mask) {
          store(buf, operand(offsets), operand(v), optionalOperand(mask));
        },
        py::arg("pointer"), py::arg("offsets"), py::arg("value"), py::arg("mask") = py::none());
  m.def("atomic_add",
        [](const Pointer &p, const py::object &offsets, const py::object &v, const py::object &mask) {
          return atomicAdd(p, operand(offsets), operand(v), optionalOperand(mask));
        },
        py::arg("pointer"), py::arg("offsets"), py::arg("value"), py::arg("mask") = py::none());
  m.def("make_buffer", [](const Pointer &p, const py::object &n) { return makeBuffer(p, operand(n)); });
  m.def("dot",
        [](const py::object &a, const py::object &b, const py::object &acc, const std::string &atom) {
          return dot(operand(a), operand(b), operand(acc), atom);
        },
        py::arg("a"), py::arg("b"), py::arg("acc"), py::arg("atom") = "");
  m.def("maximum", [](const py::object &a, const py::object &b) { return maximum(operand(a), operand(b)); });
  m.def("minimum", [](const py::object &a, const py::object &b) { return minimum(operand(a), operand(b)); });
  m.def("minimum_number",
        [](const py::object &a, const py::object &b) { return minimumNumber(operand(a), operand(b)); });
  m.def("sum_of_products", [](const py::object &a, const py::object &b, int axis) {
    return sumOfProducts(operand(a), operand(b), axis);
  });
  m.def("where", [](const py::object &c, const py::object &a, const py::object &b) {
    return where(operand(c), operand(a), operand(b));
  });
#define WAVETILE_UNARY(name, fn) m.def(name, [](const py::object &x) { return fn(operand(x)); });
  WAVETILE_UNARY("exp", exp)
  WAVETILE_UNARY("exp2", exp2)
  WAVETILE_UNARY("log", log)
  WAVETILE_UNARY("sqrt", sqrt)
  WAVETILE_UNARY("rsqrt", rsqrt)
  WAVETILE_UNARY("approximate_reciprocal", approximateReciprocal)
  WAVETILE_UNARY("approximate_exp", approximateExp)
  WAVETILE_UNARY("abs", abs)
  WAVETILE_UNARY("tanh", tanh)
  WAVETILE_UNARY("erf", erf)
  WAVETILE_UNARY("floor", floor)
#undef WAVETILE_UNARY
  // Python errors inside loop and branch bodies are held while the DSL finishes the region
  // (with values that keep the IR valid) and raised after it: they never unwind the DSL.
  m.def("for_range", [](const py::object &lo, const py::object &hi, const py::object &step,
                        const std::vector<Value> &carried,
                        const std::function<std::vector<Value>(Value, std::vector<Value>)> &body) {
    HeldError held;
    auto result = forRange(operand(lo), operand(hi), operand(step), carried,
                           [&](Value i, const std::vector<Value> &c) {
                             return held.call([&] { return body(i, c); }, [&] { return c; });
                           });
    held.rethrow();
    return result;
  });
  m.def("while_loop", [](const std::vector<Value> &carried, const std::function<Value(std::vector<Value>)> &condition,
                         const std::function<std::vector<Value>(std::vector<Value>)> &body) {
    HeldError held;
    auto result = whileLoop(
        carried,
        [&](const std::vector<Value> &c) { return held.call([&] { return condition(c); }, [] { return Value(); }); },
        [&](const std::vector<Value> &c) { return held.call([&] { return body(c); }, [&] { return c; }); });
    held.rethrow();
    return result;
  });
  m.def("if_then_else", [](const py::object &condition, const std::function<std::vector<Value>()> &then,
                           const std::function<std::vector<Value>()> &otherwise, const std::vector<Value> &fallback) {
    HeldError held;
    auto result = ifThenElse(
        operand(condition), [&] { return held.call(then, [&] { return fallback; }); },
        [&] { return held.call(otherwise, [&] { return fallback; }); });
    held.rethrow();
    return result;
  });

  // Compiled modules.
  py::class_<Module, std::shared_ptr<Module>>(m, "Module")
      .def_static("parse",
                  [](const std::string &text, const std::string &name) {
                    std::string error;
                    auto module = Module::parse(text, name, &error);
                    if (!module || !module->verify(&error))
                      throw CompilationError(error);
                    return std::shared_ptr<Module>(std::move(module));
                  })
      .def("str", &Module::str, py::arg("with_locations") = false)
      .def("canonical_str", &Module::canonicalStr)
      .def("kernel_names", [](const Module &mod) {
        std::vector<std::string> names;
        for (const auto &k : mod.kernels())
          names.push_back(k.name);
        return names;
      });

  py::class_<HostExecutable, std::shared_ptr<HostExecutable>>(m, "HostExecutable")
      .def_static("compile",
                  [](const Module &module, bool registerStaging) {
                    std::string error;
                    auto exe = HostExecutable::compile(module, &error,
                                                       registerStaging ? LoopPipelining::Registers
                                                                       : LoopPipelining::AsyncCopies);
                    if (!exe)
                      throw CompilationError(error);
                    return std::shared_ptr<HostExecutable>(std::move(exe));
                  },
                  py::arg("module"), py::arg("register_staging") = false)
      .def("launch", [](const HostExecutable &exe, const std::string &name, const py::sequence &grid,
                        const py::tuple &values) {
        const KernelSignature *signature = nullptr;
        for (const auto &k : exe.kernels())
          if (k.name == name)
            signature = &k;
        if (!signature)
          throw LaunchError("no kernel named '" + name + "'");
        KernelArg args[kMaxArguments];
        convertArguments(*signature, values, args);
        std::string error;
        if (!exe.launch(name, gridOf(grid), std::vector<KernelArg>(args, args + values.size()), &error))
          throw LaunchError(error);
      });

  // GPU: the JIT (with its cache) and the runtime.
  py::class_<Jit, std::shared_ptr<Jit>>(m, "Jit")
      .def(py::init([](const std::string &target) { return std::make_shared<Jit>(JitOptions::fromEnvironment(target)); }))
      .def("compile", [](Jit &jit, const Module &module) {
        std::string error;
        auto result = jit.compile(module, &error);
        if (!result)
          throw CompilationError(error);
        return py::make_tuple(py::bytes(result->binary->image), printManifest(result->binary->manifest),
                              jitSourceName(result->source), result->seconds);
      });

  py::class_<Device, std::shared_ptr<Device>>(m, "Device")
      .def_static("open",
                  [](int ordinal, const std::string &backend) {
                    std::string error;
                    std::unique_ptr<Device> device;
                    if (backend == "any")
                      device = Device::openAny(ordinal, &error);
                    else if (!emulatedGpuTarget(backend).empty())
                      device = openEmulatedDevice(emulatedGpuTarget(backend), &error);
                    else if (backend == "cuda" || backend == "hip" || backend == "host")
                      device = Device::open(backend == "cuda" ? Backend::CUDA
                                            : backend == "hip" ? Backend::HIP
                                                               : Backend::Host,
                                            ordinal, &error);
                    else
                      error = "unknown backend '" + backend + "'; use any, cuda, hip, host or emulate:<target>";
                    if (!device)
                      throw LaunchError(error);
                    return std::shared_ptr<Device>(std::move(device));
                  },
                  py::arg("ordinal") = 0, py::arg("backend") = "any")
      .def_property_readonly("name", &Device::name)
      .def_property_readonly("target", &Device::target)
      .def("load", [](std::shared_ptr<Device> device, const py::bytes &image, const std::string &manifestText,
                      const std::string &kernel) {
        ModuleManifest manifest;
        std::string error;
        if (!parseManifest(manifestText, &manifest, &error))
          throw LaunchError(error);
        std::shared_ptr<LoadedModule> module = device->load(std::string(image), std::move(manifest), &error);
        if (!module)
          throw LaunchError(error);
        const LoadedModule::Kernel *k = module->kernel(kernel, &error);
        if (!k)
          throw LaunchError(error);
        return LoadedKernel{device, module, k};
      });

  py::class_<Dispatcher>(m, "Dispatcher")
      .def(py::init<std::vector<size_t>, std::vector<size_t>, size_t, py::object>())
      .def("add", &Dispatcher::add)
      .def("entry", [](py::object self) { return self.cast<Dispatcher &>().entry(self); });

  py::class_<LoadedKernel>(m, "LoadedKernel")
      .def("launch", [](const LoadedKernel &k, const py::sequence &grid, const py::tuple &values, uintptr_t stream) {
        // Most kernels take few arguments: those stay in a small array on the stack.
        constexpr size_t kOnStack = 16;
        KernelArg small[kOnStack];
        std::vector<KernelArg> large(values.size() > kOnStack ? values.size() : 0);
        KernelArg *args = large.empty() ? small : large.data();
        convertArguments(k.kernel->manifest().signature, values, args);
        std::string error;
        if (!k.kernel->launch(gridOf(grid), args, values.size(), reinterpret_cast<void *>(stream), &error))
          throw LaunchError(error);
      });
  bindOps(m);
}
