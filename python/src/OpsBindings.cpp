//===- OpsBindings.cpp - the operator library for wavetile.ops ------------===//
//
// Tensors arrive from Python as torch tensors or numpy arrays, read here in place (a Python
// conversion per tensor cost more than the rest of a call), or as (address, dtype, shape,
// strides in elements[, read-only]) for byte tensors read as another dtype; wavetile/ops.py
// picks the device and stream.
//
//===----------------------------------------------------------------------===//

#include "wavetile/ops/Activations.h"
#include "wavetile/ops/Gemm.h"
#include "wavetile/ops/GemmTuner.h"
#include "wavetile/ops/Norms.h"
#include "wavetile/ops/Quant.h"
#include "wavetile/ops/Rope.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace wavetile;
using namespace wavetile::ops;

namespace {

struct OpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An OpRuntime with the device it runs on kept alive.
struct PyOpRuntime {
  std::shared_ptr<Device> device;
  std::unique_ptr<OpRuntime> runtime;
};

/// A new reference to a Python call or attribute's result; failures become C++ exceptions.
py::object checked(PyObject *result) {
  if (!result)
    throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

/// Integers of a tuple (torch.Size, stride()) or list.
std::vector<int64_t> integers(const py::handle &sequence) {
  py::object fast = checked(PySequence_Fast(sequence.ptr(), "expected a sequence of integers"));
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(fast.ptr());
  std::vector<int64_t> values(size);
  for (Py_ssize_t i = 0; i < size; ++i) {
    values[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast.ptr(), i));
    if (values[i] == -1 && PyErr_Occurred())
      throw py::error_already_set();
  }
  return values;
}

/// torch's dtype objects and ours, looked up once torch is loaded.
const std::vector<std::pair<py::object, dsl::DType>> &torchDTypes(const py::handle &torch) {
  static const auto *table = [&] {
    auto *t = new std::vector<std::pair<py::object, dsl::DType>>; // never released, as the interpreter's
    using dsl::DType;
    for (auto [name, dtype] : std::initializer_list<std::pair<const char *, DType>>{
             {"float32", DType::f32},        {"float16", DType::f16},           {"bfloat16", DType::bf16},
             {"float64", DType::f64},        {"int32", DType::i32},             {"int64", DType::i64},
             {"int8", DType::i8},            {"int16", DType::i16},             {"uint8", DType::i8},
             {"bool", DType::i1},            {"float8_e4m3fn", DType::f8E4M3FN}, {"float8_e5m2", DType::f8E5M2},
             {"float8_e4m3fnuz", DType::f8E4M3FNUZ}, {"float8_e5m2fnuz", DType::f8E5M2FNUZ},
             {"float4_e2m1fn_x2", DType::f4E2M1FN}, {"float8_e8m0fnu", DType::f8E8M0FNU}})
      if (py::hasattr(torch, name)) // the newer formats are missing from older torch
        t->emplace_back(torch.attr(name), dtype);
    return t;
  }();
  return *table;
}

/// numpy's element types by buffer format (bf16 travels as uint16).
std::optional<dsl::DType> numpyDType(std::string_view format, Py_ssize_t itemSize) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<'))
    format.remove_prefix(1);
  if (format.size() != 1)
    return std::nullopt;
  switch (format[0]) {
  case 'f':
    return dsl::DType::f32;
  case 'e':
    return dsl::DType::f16;
  case 'H':
    return dsl::DType::bf16;
  case 'b':
    return dsl::DType::i8;
  case 'i':
  case 'l':
  case 'q':
    if (itemSize == 4)
      return dsl::DType::i32;
    if (itemSize == 8)
      return dsl::DType::i64;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// A torch tensor or numpy array as the op sees it, or the tuple form.
TensorRef readTensor(const py::handle &h) {
  if (PyTuple_Check(h.ptr())) {
    auto fields = py::reinterpret_borrow<py::tuple>(h);
    if (fields.size() != 4 && fields.size() != 5)
      throw OpError("a tensor tuple is (address, dtype, shape, strides[, read_only]), got " +
                    std::to_string(fields.size()) + " elements");
    return {reinterpret_cast<void *>(fields[0].cast<uintptr_t>()), fields[1].cast<dsl::DType>(),
            fields[2].cast<std::vector<int64_t>>(), fields[3].cast<std::vector<int64_t>>(),
            fields.size() == 5 && fields[4].cast<bool>()};
  }
  static PyObject *dataPtr = PyUnicode_InternFromString("data_ptr"), *dtypeName = PyUnicode_InternFromString("dtype"),
                  *shapeName = PyUnicode_InternFromString("shape"), *strideName = PyUnicode_InternFromString("stride"),
                  *torchName = PyUnicode_InternFromString("torch");
  // torch.Tensor, once the caller has imported torch (never released, as the interpreter's).
  static PyObject *torch = nullptr, *tensorType = nullptr;
  if (!tensorType && (torch = PyDict_GetItemWithError(PyImport_GetModuleDict(), torchName)) &&
      !(tensorType = PyObject_GetAttrString(torch, "Tensor")))
    throw py::error_already_set();
  if (PyErr_Occurred())
    throw py::error_already_set();
  if (tensorType && PyObject_IsInstance(h.ptr(), tensorType) == 1) {
    py::object dtype = checked(PyObject_GetAttr(h.ptr(), dtypeName));
    TensorRef t;
    bool known = false;
    for (const auto &[object, ours] : torchDTypes(torch))
      if (object.ptr() == dtype.ptr()) {
        t.dtype = ours;
        known = true;
      }
    if (!known)
      throw OpError("tensors of " + py::str(dtype).cast<std::string>() + " are not supported");
    py::object address = checked(PyObject_CallMethodNoArgs(h.ptr(), dataPtr));
    t.data = PyLong_AsVoidPtr(address.ptr());
    if (PyErr_Occurred())
      throw py::error_already_set();
    t.shape = integers(checked(PyObject_GetAttr(h.ptr(), shapeName)));
    t.strides = integers(checked(PyObject_CallMethodNoArgs(h.ptr(), strideName)));
    return t;
  }
  if (PyObject_CheckBuffer(h.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_RECORDS_RO) != 0)
      throw py::error_already_set();
    const std::string format = view.format ? view.format : "B";
    std::optional<dsl::DType> dtype = numpyDType(format, view.itemsize);
    TensorRef t{view.buf, dtype.value_or(dsl::DType::i8), std::vector<int64_t>(view.shape, view.shape + view.ndim), {},
                view.readonly != 0};
    for (int d = 0; d < view.ndim; ++d)
      t.strides.push_back(view.strides[d] / view.itemsize);
    const bool aligned = std::all_of(view.strides, view.strides + view.ndim,
                                     [&](Py_ssize_t s) { return s % view.itemsize == 0; });
    PyBuffer_Release(&view);
    if (!dtype)
      throw OpError((py::hasattr(h, "dtype") ? "numpy arrays of " + py::str(h.attr("dtype")).cast<std::string>()
                                             : "buffers of format '" + format + "'") +
                    " are not supported (bf16 travels as uint16)");
    if (!aligned)
      throw OpError("array strides must be whole elements");
    return t;
  }
  throw OpError(std::string("expected a torch tensor or a numpy array, got ") + Py_TYPE(h.ptr())->tp_name);
}

/// Runs one op on `rt`'s stream; failures raise OpError with the op's message.
void run(PyOpRuntime &rt, uintptr_t stream, const std::function<bool(OpRuntime &, std::string *)> &op) {
  rt.runtime->setStream(reinterpret_cast<void *>(stream));
  std::string error;
  bool ok;
  {
    py::gil_scoped_release release; // compiling a new specialization takes a while
    ok = op(*rt.runtime, &error);
  }
  if (!ok)
    throw OpError(error);
}

/// A GEMM configuration given from Python: (block_m, block_n, block_k, stages, warps, split_k
/// [, skinny]); none leaves the choice to the tuned table or the default.
bool gemmConfigArgument(const char *op, const std::optional<std::vector<int64_t>> &values,
                        std::optional<GemmConfig> *config, std::string *error) {
  if (!values)
    return true;
  const std::vector<int64_t> &v = *values;
  if (v.size() != 6 && v.size() != 7) {
    *error = std::string(op) + ": config is (block_m, block_n, block_k, stages, warps, split_k[, skinny])";
    return false;
  }
  *config = GemmConfig{v[0], v[1], v[2], v[3], v[4], v[5]};
  (*config)->skinny = v.size() == 7 && v[6] != 0;
  return true;
}

/// Whether `round` is an MxScaleRound value (AITER's MxScaleRoundMode).
bool roundMode(int round, std::string *error) {
  if (round >= 0 && round <= 3)
    return true;
  *error = "round_mode must be 0 (RoundDown), 1 (RoundUp), 2 (Even) or 3 (Ceil), got " + std::to_string(round);
  return false;
}

} // namespace

namespace pybind11::detail {
/// An op's tensor argument (readTensor).
template <> struct type_caster<TensorRef> {
  PYBIND11_TYPE_CASTER(TensorRef, const_name("Tensor"));
  bool load(handle source, bool) {
    value = readTensor(source);
    return true;
  }
};
} // namespace pybind11::detail

void bindOps(py::module_ &m) {
  py::register_exception<OpError>(m, "OpError", PyExc_RuntimeError);
  py::class_<PyOpRuntime, std::shared_ptr<PyOpRuntime>>(m, "OpRuntime")
      .def(py::init([](std::shared_ptr<Device> device) {
        std::string error;
        auto runtime = OpRuntime::create(*device, &error);
        if (!runtime)
          throw OpError(error);
        return std::make_shared<PyOpRuntime>(PyOpRuntime{device, std::move(runtime)});
      }))
      .def_property_readonly("loaded_modules", [](const PyOpRuntime &rt) { return rt.runtime->loadedModules(); });

  m.def("rmsnorm2d_fwd", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input,
                            const TensorRef &weight, float epsilon, int modelSensitive, bool gemma) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      return rmsnorm2d_fwd(r, out, input, weight, epsilon, modelSensitive, e, gemma);
    });
  });
  m.def("gated_activation", [](PyOpRuntime &rt, uintptr_t stream, const std::string &name, const TensorRef &out,
                               const TensorRef &input, float limit, float alpha) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      if (name == "silu_and_mul")
        return silu_and_mul(r, out, input, e);
      if (name == "gelu_and_mul")
        return gelu_and_mul(r, out, input, e);
      if (name == "gelu_tanh_and_mul")
        return gelu_tanh_and_mul(r, out, input, e);
      if (name == "swiglu")
        return swiglu(r, out, input, limit, alpha, e);
      *e = "no gated activation named '" + name + "'";
      return false;
    });
  });
  m.def("layernorm2d_fwd",
        [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input, const TensorRef &weight,
           const TensorRef &bias, float epsilon, const std::optional<TensorRef> &xBias) {
          run(rt, stream, [&](OpRuntime &r, std::string *e) {
            return layernorm2d_fwd(r, out, input, weight, bias, epsilon, e, xBias ? &*xBias : nullptr);
          });
        });
  m.def("layernorm2d_fwd_with_add",
        [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input, const TensorRef &residualIn,
           const TensorRef &residualOut, const TensorRef &weight, const TensorRef &bias, float epsilon,
           const std::optional<TensorRef> &xBias) {
          run(rt, stream, [&](OpRuntime &r, std::string *e) {
            return layernorm2d_fwd_with_add(r, out, input, residualIn, residualOut, weight, bias, epsilon, e,
                                            xBias ? &*xBias : nullptr);
          });
        });
  m.def("rope_cached", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &outX, const TensorRef &x,
                          const std::optional<TensorRef> &outY, const std::optional<TensorRef> &y, const TensorRef &cos,
                          const TensorRef &sin, const std::optional<TensorRef> &positions,
                          const std::optional<TensorRef> &offsets, int rotateStyle, bool reuse, bool nopeFirst) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      if (rotateStyle != 0 && rotateStyle != 1) {
        *e = "rotate_style must be 0 (NeoX) or 1 (GPT-J), got " + std::to_string(rotateStyle);
        return false;
      }
      RopeOptions options{RotateStyle(rotateStyle), reuse, nopeFirst};
      if (y)
        return rope_cached_positions_2c_fwd(r, outX, *outY, x, *y, cos, sin, *positions, offsets ? &*offsets : nullptr,
                                            options, e);
      if (offsets)
        return rope_cached_positions_offsets_fwd(r, outX, x, cos, sin, *positions, *offsets, options, e);
      if (positions)
        return rope_cached_positions_fwd(r, outX, x, cos, sin, *positions, options, e);
      return rope_cached_fwd(r, outX, x, cos, sin, options, e);
    });
  });
  m.def("quant", [](PyOpRuntime &rt, uintptr_t stream, const std::string &name, const TensorRef &out,
                    const TensorRef &input, const TensorRef &scales, int64_t groupSize, int round, bool shuffle,
                    const std::optional<TensorRef> &numRows, int64_t numRowsFactor) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      const RowCount rows{numRows ? &*numRows : nullptr, numRowsFactor};
      if (name == "dynamic_per_token_scaled_quant")
        return dynamic_per_token_scaled_quant(r, out, input, scales, e, rows);
      if (name == "dynamic_per_group_scaled_quant")
        return roundMode(round, e) && dynamic_per_group_scaled_quant(r, out, input, scales, groupSize, e,
                                                                     MxScaleRound(round), shuffle, rows);
      if (name == "dynamic_per_tensor_quant")
        return dynamic_per_tensor_quant(r, out, input, scales, e);
      return static_per_tensor_quant(r, out, input, scales, e);
    });
  });
  m.def("gemm_a16w16", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &x,
                          const TensorRef &w, const std::optional<TensorRef> &bias,
                          const std::optional<std::vector<int64_t>> &config) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      std::optional<GemmConfig> c;
      if (!gemmConfigArgument("gemm_a16w16", config, &c, e))
        return false;
      return gemm_a16w16(r, out, x, w, bias ? &*bias : nullptr, e, c);
    });
  });
  // preshuffled: gemm_a8w8_bpreshuffle (W as AITER's shuffle_weight leaves it).
  m.def("gemm_a8w8", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                        const TensorRef &xScale, const TensorRef &wScale, const std::optional<TensorRef> &bias,
                        bool preshuffled, const std::optional<std::vector<int64_t>> &config) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      std::optional<GemmConfig> c;
      if (!gemmConfigArgument(preshuffled ? "gemm_a8w8_bpreshuffle" : "gemm_a8w8", config, &c, e))
        return false;
      return (preshuffled ? gemm_a8w8_bpreshuffle : gemm_a8w8)(r, out, x, w, xScale, wScale, bias ? &*bias : nullptr, e,
                                                               c);
    });
  });
  m.def("gemm_a8w8_blockscale", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &x,
                                   const TensorRef &w, const TensorRef &xScale, const TensorRef &wScale,
                                   const std::optional<std::vector<int64_t>> &config) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      std::optional<GemmConfig> c;
      if (!gemmConfigArgument("gemm_a8w8_blockscale", config, &c, e))
        return false;
      return gemm_a8w8_blockscale(r, out, x, w, xScale, wScale, e, c);
    });
  });
  m.def("gemm_a4w4", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &x, const TensorRef &w,
                        const TensorRef &xScale, const TensorRef &wScale, const std::optional<TensorRef> &bias,
                        const std::optional<std::vector<int64_t>> &config) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      std::optional<GemmConfig> c;
      if (!gemmConfigArgument("gemm_a4w4", config, &c, e))
        return false;
      return gemm_a4w4(r, out, x, w, xScale, wScale, bias ? &*bias : nullptr, e, c);
    });
  });
  m.def("tune_gemm", [](PyOpRuntime &rt, const std::string &op, const std::vector<std::array<int64_t, 3>> &shapes,
                        dsl::DType input, dsl::DType output, bool bias, const std::string &table) {
    GemmTuneOptions options;
    options.op = op;
    options.input = input;
    options.output = output;
    options.bias = bias;
    std::vector<GemmShape> gemmShapes;
    for (auto [m, n, k] : shapes)
      gemmShapes.push_back({m, n, k});
    std::vector<GemmTuneResult> results;
    std::string error;
    bool ok;
    {
      py::gil_scoped_release release; // every candidate compiles and runs
      ok = tuneGemm(*rt.runtime, gemmShapes, options, &results, &error) &&
           (table.empty() || writeGemmTable(table, *rt.runtime, options, results, &error));
    }
    if (!ok)
      throw OpError(error);
    py::list rows;
    for (const GemmTuneResult &r : results) {
      py::dict row;
      row["M"] = r.shape.m;
      row["N"] = r.shape.n;
      row["K"] = r.shape.k;
      row["config"] = r.best ? py::cast(r.best->key()) : py::none();
      row["us"] = r.microseconds;
      row["tried"] = r.tried;
      row["wrong"] = r.wrong;
      row["failed"] = r.failed;
      row["first_failure"] = r.firstFailure;
      row["compile_s"] = r.compileSeconds;
      rows.append(row);
    }
    return rows;
  });
  m.def("dequant",
        [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input, const TensorRef &scales) {
          run(rt, stream, [&](OpRuntime &r, std::string *e) { return dequant(r, out, input, scales, e); });
        });
  m.def("rmsnorm2d_fwd_dynamicquant",
        [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input,
           const std::optional<TensorRef> &residualIn, const std::optional<TensorRef> &residualOut,
           const TensorRef &yscale, const TensorRef &weight, float epsilon, int modelSensitive, int64_t groupSize,
           bool shuffle, int round) {
          run(rt, stream, [&](OpRuntime &r, std::string *e) {
            if (!roundMode(round, e))
              return false;
            if (residualIn)
              return rmsnorm2d_fwd_with_add_dynamicquant(r, out, input, *residualIn, *residualOut, yscale, weight,
                                                         epsilon, modelSensitive, groupSize, shuffle, e,
                                                         MxScaleRound(round));
            return rmsnorm2d_fwd_with_dynamicquant(r, out, input, yscale, weight, epsilon, modelSensitive, groupSize,
                                                   shuffle, e, MxScaleRound(round));
          });
        });
  m.def("rmsnorm2d_fwd_with_add", [](PyOpRuntime &rt, uintptr_t stream, const TensorRef &out, const TensorRef &input,
                                     const TensorRef &residualIn, const TensorRef &residualOut, const TensorRef &weight,
                                     float epsilon, bool gemma, int modelSensitive) {
    run(rt, stream, [&](OpRuntime &r, std::string *e) {
      return rmsnorm2d_fwd_with_add(r, out, input, residualIn, residualOut, weight, epsilon, gemma, modelSensitive, e);
    });
  });
}
