//===- OpRuntime.h - where library ops compile, load and launch -*- C++ -*-===//
//
// Library ops are kernel generators in the C++ DSL, specialized per call on what changes
// code (dtypes, the hidden size, flags) but not on what changes with every batch (rows,
// strides, pointers). An OpRuntime ties them to one device: it JIT-compiles each
// specialization once (through the kernel cache), keeps it loaded, and launches it on the
// runtime's stream. The same path serves GPUs and the host device.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_OPS_OPRUNTIME_H
#define WAVETILE_OPS_OPRUNTIME_H

#include "wavetile/dsl/DSL.h"
#include "wavetile/ops/Tuning.h"
#include "wavetile/runtime/Device.h"

#include <array>
#include <functional>
#include <map>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace wavetile {
class Jit;
}

namespace wavetile::ops {

using dsl::DType;

/// A strided view of memory the runtime's device can access; strides in elements.
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape, strides;
  /// The memory must not be written (the Python binding marks read-only numpy arrays so);
  /// ops refuse such a tensor as an output.
  bool readOnly = false;

  /// A row-major tensor.
  static TensorRef contiguous(void *data, DType dtype, std::vector<int64_t> shape);
  int64_t rank() const { return int64_t(shape.size()); }
  int64_t numel() const;
  /// Row-major without gaps: each dimension of more than one element has the stride of the
  /// dimensions after it (a dimension of one element may have any stride, as in torch).
  bool isContiguous() const;
  /// Elements (and bytes) from `data` to one past the last element.
  uint64_t extentElements() const;
  uint64_t extentBytes() const;
};

/// Launch arguments by the names the DSL gives kernel parameters. Names must outlive the
/// launch (ops give string literals); tensors' sizes and strides are copied.
class NamedArgs {
public:
  /// The most dimensions of a tensor argument.
  static constexpr size_t kMaxRank = 6;
  NamedArgs();
  /// A tensor declared with `KernelBuilder::tensor(name, ...)`: its pointer, and the sizes
  /// and strides the kernel takes as parameters (static ones are ignored at launch).
  NamedArgs &tensor(std::string_view name, const TensorRef &t);
  NamedArgs &f32(std::string_view name, float v);
  NamedArgs &i32(std::string_view name, int32_t v);
  /// The arguments in the order of `kernel`'s parameters; an error names a missing one.
  bool inOrderOf(const KernelSignature &kernel, std::vector<KernelArg> *args, std::string *error) const;

  /// Where each of a kernel's parameters comes from, found by name once and reused while a
  /// launch gives the same names in the same order (matching names costs less than finding
  /// every parameter's source by name again).
  struct Plan {
    enum class From : uint8_t { Pointer, Size, Stride, Scalar };
    struct Source {
      From from;
      uint8_t index; // of the tensor or scalar
      uint8_t dim;   // sizes and strides
    };
    std::vector<std::string> tensorNames, scalarNames; // what the plan was made for
    std::vector<Source> sources;                        // one per parameter
    bool made = false;
  };
  /// Finds each parameter's source by name; an error names a missing one.
  bool plan(const KernelSignature &kernel, Plan *plan, std::string *error) const;
  /// Whether `plan` was made for arguments named as these are.
  bool fits(const Plan &plan) const;
  /// The arguments `plan` orders.
  void fill(const Plan &plan, std::vector<KernelArg> *args) const;

private:
  // A handful of each per launch: vectors searched in turn cost less than maps of names.
  struct NamedTensor {
    std::string_view name;
    KernelArg pointer;
    uint8_t rank;
    std::array<int64_t, kMaxRank> shape, strides;
  };
  std::vector<NamedTensor> tensors_;
  std::vector<std::pair<std::string_view, KernelArg>> scalars_;
  std::string error_; // a tensor of too many dimensions, reported when planning
};

class OpRuntime {
public:
  /// For `device`, with the kernel cache and IR dumps the environment asks for.
  static std::unique_ptr<OpRuntime> create(Device &device, std::string *error);
  ~OpRuntime();

  Device &device() const { return device_; }
  /// The target kernels are generated for: the device's, or for an emulated device the GPU
  /// it emulates ("gfx942" for "emulate:gfx942"), so ops build exactly the kernels that
  /// GPU would run and look up its tuned rows.
  const std::string &target() const { return target_; }
  /// Threads per warp on `target` (CDNA wavefronts: 64; NVIDIA and the host: 32), which
  /// kernel generators size their blocks with.
  static int64_t warpSizeOf(std::string_view target);
  int64_t warpSize() const { return warpSizeOf(target()); }
  /// Whether `target` computes on bf16 pairs, two elements an instruction (NVIDIA sm_90: add,
  /// mul, fma, min and max of bf16x2); library kernels that can stay in bf16 do there.
  static bool hasBf16PairArithmetic(std::string_view target);
  /// Whether the reciprocal estimate (dsl::approximateReciprocal) of every f32 in
  /// [2^-126, 2^126), refined by one Newton step, is the correctly rounded reciprocal: on
  /// NVIDIA that is the PTX compiler's own rcp.rn in that range (without its range test); the
  /// host's estimate is exact. CDNA's v_rcp_f32 (1 ulp) carries no such guarantee.
  static bool refinesReciprocalEstimate(std::string_view target);
  /// The stream the calling thread's launches go to (null, until set: the default stream).
  /// Each thread keeps its own, so threads sharing the runtime never launch on each other's.
  void *stream() const;
  void setStream(void *stream);

  using Builder = std::function<std::unique_ptr<Module>(std::string *error)>;
  /// Launches kernel `kernel` of the module `build` makes for `specialization` (a string
  /// that determines the module), compiling and loading it on first use.
  bool launch(const std::string &specialization, const Builder &build, std::string_view kernel,
              std::array<uint32_t, 3> grid, const NamedArgs &args, std::string *error);

  /// Compiles and loads ahead, on up to `threads` threads (0: one per hardware thread), the
  /// kernels that `calls` would launch and that are not loaded yet; returns how many it
  /// loaded. While `calls` runs, its launches only build their modules and nothing runs on
  /// the device, so what `calls` computes is meaningless (other threads' launches run as
  /// usual). A kernel that fails to compile here is left to its real launch to report.
  size_t precompile(const std::function<void()> &calls, unsigned threads = 0);

  /// Device memory of at least `bytes` for ops that pass data between their kernels, kept
  /// and reused by the ops of the calling thread's stream, which that stream orders; each
  /// stream has its own, so ops running at once on two streams never share one (on the host
  /// and emulated devices, where launches run on the calling thread, neither do two threads'
  /// ops). Asked for more, it grows to at least twice its size; the outgrown one stays
  /// allocated (with the runtime), for kernels still running on it and CUDA graphs captured
  /// with it.
  TensorRef workspace(size_t bytes, std::string *error);
  /// At least `count` i32 counters in device memory, one set a stream like the workspace,
  /// zero whenever no launch is using them: a kernel counts its programs' arrivals there and
  /// clears each count it completes (the splits of a GEMM tile). Zeroed when allocated;
  /// grown like the workspace.
  TensorRef arrivalCounters(int64_t count, std::string *error);
  /// Zeroes the calling thread's stream's counters again, after a launch that failed
  /// part-way may have left counts.
  bool resetArrivalCounters(std::string *error);

  /// The tuned-configuration table of `op` (docs/tuning.md), keyed by `keyColumns`: read
  /// once from $WAVETILE_TUNED_DIR/<op>.csv when that exists, else the table shipped inside
  /// the library (shippedTable), else empty; a malformed one is an error (null, *error
  /// says why).
  TunedDispatch *tuned(const std::string &op, const std::vector<std::string> &keyColumns, std::string *error);

  /// Specializations compiled and loaded so far.
  size_t loadedModules() const;

  /// The most local memory per thread (register spills, stack) among the kernels this
  /// thread launched since its previous call, as the driver reports it (0 on the host and
  /// emulated devices): what the tuner drops spilling candidates by.
  int64_t takeLaunchedLocalMemoryBytes();

private:
  OpRuntime(Device &device, std::unique_ptr<Jit> jit);
  std::unique_ptr<LoadedModule> compileAndLoad(const Module &module, std::string *error);
  /// Reallocates `buffer` (of `bytes`) to `wanted` bytes when smaller; callers hold mutex_.
  bool growBuffer(void *&buffer, size_t &bytes, size_t wanted, std::string *error);
  /// What one stream's ops pass between their kernels.
  struct StreamBuffers {
    void *workspace = nullptr;
    size_t workspaceBytes = 0;
    void *arrivalCounters = nullptr;
    size_t arrivalCounterBytes = 0;
  };
  bool zeroArrivalCounters(StreamBuffers &buffers, std::string *error); // callers hold mutex_
  /// The calling thread's stream's buffers (callers hold mutex_). On the host and emulated
  /// devices, which run each launch on the calling thread, each thread's own as well.
  StreamBuffers &streamBuffers();
  Device &device_;
  std::string target_;
  std::unique_ptr<Jit> jit_;
  /// Tells runtimes apart in each thread's streams, also one made where a released one was.
  const uint64_t id_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<LoadedModule>> loaded_; // by specialization (long keys)
  /// For each thread inside precompile's calls: the modules its launches would have
  /// compiled, by specialization.
  std::map<std::thread::id, std::map<std::string, std::unique_ptr<Module>> *> collecting_;
  std::map<std::pair<void *, const void *>, StreamBuffers> streamBuffers_; // by stream and, off GPUs, thread
  std::vector<void *> outgrownBuffers_;           // released with the runtime
  struct LaunchedKernel {
    int64_t localMemoryBytes = 0; // queried on its first launch
    NamedArgs::Plan arguments;
  };
  std::unordered_map<const LoadedModule::Kernel *, LaunchedKernel> launched_;
  std::map<std::thread::id, int64_t> launchedLocalMemoryBytes_;
  std::map<std::string, std::unique_ptr<TunedDispatch>> tuned_;
};

/// Fails with "<op>: <message>" (for argument checks).
bool opError(std::string *error, std::string_view op, const std::string &message);

} // namespace wavetile::ops

#endif
