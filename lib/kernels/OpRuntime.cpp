//===- OpRuntime.cpp - compile, load and launch library kernels -----------===//

#include "wavetile/ops/OpRuntime.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "wavetile/Jit.h"

using namespace wavetile;
using namespace wavetile::ops;
using dsl::bitWidth;
using dsl::dtypeName;

namespace {
std::atomic<uint64_t> nextRuntimeId{0};
/// Each thread's stream in each runtime, by the runtime's id.
thread_local std::unordered_map<uint64_t, void *> threadStreams;
} // namespace

TensorRef TensorRef::contiguous(void *data, DType dtype, std::vector<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return {data, dtype, std::move(shape), std::move(strides)};
}

int64_t TensorRef::numel() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

bool TensorRef::isContiguous() const {
  int64_t expected = 1;
  for (int64_t d = rank() - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

uint64_t TensorRef::extentElements() const {
  if (numel() == 0)
    return 0;
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    last += (shape[d] - 1) * strides[d];
  return uint64_t(last + 1);
}

uint64_t TensorRef::extentBytes() const { return extentElements() * uint64_t(std::max(1, bitWidth(dtype) / 8)); }

/// The index in `entries` of the last one whose `nameOf` is `name`, or -1.
template <typename Entries, typename NameOf> int named(const Entries &entries, std::string_view name, NameOf nameOf) {
  for (int i = int(entries.size()) - 1; i >= 0; --i)
    if (nameOf(entries[i]) == name)
      return i;
  return -1;
}

NamedArgs::NamedArgs() {
  tensors_.reserve(8); // what the ops give, so that a launch allocates each vector once
  scalars_.reserve(4);
}

NamedArgs &NamedArgs::tensor(std::string_view name, const TensorRef &t) {
  if (t.shape.size() > kMaxRank || t.strides.size() != t.shape.size()) {
    error_ = "tensor '" + std::string(name) + "' has " + std::to_string(t.shape.size()) + " sizes and " +
             std::to_string(t.strides.size()) + " strides; launches take at most " + std::to_string(kMaxRank) +
             " dimensions, a stride for each";
    return *this;
  }
  NamedTensor &named = tensors_.emplace_back();
  named.name = name;
  named.pointer = KernelArg::ptr(t.data, dtypeName(t.dtype), t.extentBytes());
  named.rank = uint8_t(t.shape.size());
  std::copy(t.shape.begin(), t.shape.end(), named.shape.begin());
  std::copy(t.strides.begin(), t.strides.end(), named.strides.begin());
  return *this;
}

NamedArgs &NamedArgs::f32(std::string_view name, float v) {
  scalars_.emplace_back(name, KernelArg::fromF32(v));
  return *this;
}

NamedArgs &NamedArgs::i32(std::string_view name, int32_t v) {
  scalars_.emplace_back(name, KernelArg::fromI32(v));
  return *this;
}

bool NamedArgs::plan(const KernelSignature &kernel, Plan *plan, std::string *error) const {
  if (!error_.empty()) {
    *error = error_;
    return false;
  }
  using From = Plan::From;
  *plan = Plan();
  auto tensor = [&](std::string_view name) {
    return named(tensors_, name, [](const NamedTensor &t) { return t.name; });
  };
  // A tensor `t` gives the parameters t, t_size<d> and t_stride<d> (KernelBuilder::tensor).
  auto dimension = [&](std::string_view param) -> std::optional<Plan::Source> {
    for (auto [suffix, from] : {std::pair{std::string_view("_size"), From::Size}, {std::string_view("_stride"), From::Stride}}) {
      size_t at = param.rfind(suffix);
      std::string_view digits = at == std::string_view::npos ? "" : param.substr(at + suffix.size());
      if (digits.empty() || digits.size() > 2 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
        continue;
      size_t d = 0;
      for (char c : digits)
        d = d * 10 + size_t(c - '0');
      if (int t = tensor(param.substr(0, at)); t >= 0 && d < tensors_[t].rank)
        return Plan::Source{from, uint8_t(t), uint8_t(d)};
    }
    return std::nullopt;
  };
  for (const KernelParam &param : kernel.params) {
    if (int t = tensor(param.name); t >= 0) {
      plan->sources.push_back({From::Pointer, uint8_t(t), 0});
    } else if (std::optional<Plan::Source> source = dimension(param.name)) {
      plan->sources.push_back(*source);
    } else if (int s = named(scalars_, param.name, [](const auto &s) { return s.first; }); s >= 0) {
      plan->sources.push_back({From::Scalar, uint8_t(s), 0});
    } else {
      *error = "kernel '" + kernel.name + "' takes '" + param.name + "', which the op did not provide";
      plan->sources.clear();
      return false;
    }
  }
  for (const NamedTensor &t : tensors_)
    plan->tensorNames.emplace_back(t.name);
  for (const auto &[name, value] : scalars_)
    plan->scalarNames.emplace_back(name);
  plan->made = true;
  return true;
}

bool NamedArgs::fits(const Plan &plan) const {
  if (!plan.made || !error_.empty() || plan.tensorNames.size() != tensors_.size() || plan.scalarNames.size() != scalars_.size())
    return false;
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (plan.tensorNames[i] != tensors_[i].name)
      return false;
  for (size_t i = 0; i < scalars_.size(); ++i)
    if (plan.scalarNames[i] != scalars_[i].first)
      return false;
  return true;
}

void NamedArgs::fill(const Plan &plan, std::vector<KernelArg> *args) const {
  using From = Plan::From;
  args->clear();
  args->reserve(plan.sources.size());
  for (const Plan::Source &source : plan.sources) {
    switch (source.from) {
    case From::Pointer:
      args->push_back(tensors_[source.index].pointer);
      break;
    case From::Size:
      args->push_back(KernelArg::fromI32(int32_t(tensors_[source.index].shape[source.dim])));
      break;
    case From::Stride:
      args->push_back(KernelArg::fromI32(int32_t(tensors_[source.index].strides[source.dim])));
      break;
    case From::Scalar:
      args->push_back(scalars_[source.index].second);
      break;
    }
  }
}

bool NamedArgs::inOrderOf(const KernelSignature &kernel, std::vector<KernelArg> *args, std::string *error) const {
  Plan found;
  if (!plan(kernel, &found, error))
    return false;
  fill(found, args);
  return true;
}

OpRuntime::OpRuntime(Device &device, std::unique_ptr<Jit> jit)
    : device_(device),
      target_(emulatedGpuTarget(device.target()).empty() ? device.target()
                                                         : std::string(emulatedGpuTarget(device.target()))),
      jit_(std::move(jit)), id_(nextRuntimeId.fetch_add(1)) {}
OpRuntime::~OpRuntime() {
  std::string ignored;
  for (auto &[owner, buffers] : streamBuffers_)
    for (void *buffer : {buffers.workspace, buffers.arrivalCounters})
      if (buffer)
        device_.release(buffer, &ignored);
  for (void *buffer : outgrownBuffers_)
    device_.release(buffer, &ignored);
}

void *OpRuntime::stream() const {
  auto it = threadStreams.find(id_);
  return it == threadStreams.end() ? nullptr : it->second;
}

void OpRuntime::setStream(void *stream) { threadStreams[id_] = stream; }

TunedDispatch *OpRuntime::tuned(const std::string &op, const std::vector<std::string> &keyColumns,
                                std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tuned_.find(op);
  if (it != tuned_.end())
    return it->second.get();
  // $WAVETILE_TUNED_DIR/<op>.csv replaces the table shipped inside the library.
  const char *dir = std::getenv("WAVETILE_TUNED_DIR");
  const std::string path = dir ? std::string(dir) + "/" + op + ".csv" : std::string();
  std::optional<TunedConfigs> configs = TunedConfigs(keyColumns); // no table: every shape untuned
  if (!path.empty() && std::filesystem::exists(path)) {
    configs = TunedConfigs::load(path, keyColumns, error);
  } else if (const char *shipped = shippedTable(op)) {
    std::istringstream in(shipped);
    configs = TunedConfigs::parse(in, "shipped " + op + ".csv", keyColumns, error);
  }
  if (!configs)
    return nullptr;
  auto dispatch = std::make_unique<TunedDispatch>(op, std::move(*configs), TunedDispatch::Options::fromEnvironment());
  return tuned_.emplace(op, std::move(dispatch)).first->second.get();
}

bool OpRuntime::growBuffer(void *&buffer, size_t &bytes, size_t wanted, std::string *error) {
  if (wanted <= bytes)
    return true;
  // At least twice the old size, so the buffers outgrown add up to less than the last one.
  const size_t grown = std::max(wanted, 2 * bytes);
  void *larger = device_.allocate(grown, error);
  if (!larger)
    return false;
  // The smaller one stays allocated until the runtime goes: kernels in flight, and CUDA
  // graphs captured with it, still use it.
  if (buffer)
    outgrownBuffers_.push_back(buffer);
  buffer = larger;
  bytes = grown;
  return true;
}

OpRuntime::StreamBuffers &OpRuntime::streamBuffers() {
  static thread_local const char thisThread = 0;
  const bool launchesOnCaller = device_.backend() == Backend::Host || device_.backend() == Backend::Emulated;
  return streamBuffers_[{stream(), launchesOnCaller ? &thisThread : nullptr}];
}

TensorRef OpRuntime::workspace(size_t bytes, std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamBuffers &buffers = streamBuffers();
  if (!growBuffer(buffers.workspace, buffers.workspaceBytes, bytes, error))
    return {};
  return {buffers.workspace, DType::i8, {int64_t(bytes)}, {1}};
}

TensorRef OpRuntime::arrivalCounters(int64_t count, std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamBuffers &buffers = streamBuffers();
  const size_t bytes = size_t(count) * sizeof(int32_t);
  if (bytes > buffers.arrivalCounterBytes) {
    if (!growBuffer(buffers.arrivalCounters, buffers.arrivalCounterBytes, bytes, error))
      return {};
    if (!zeroArrivalCounters(buffers, error))
      return {};
  }
  return {buffers.arrivalCounters, DType::i32, {count}, {1}};
}

bool OpRuntime::resetArrivalCounters(std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  return zeroArrivalCounters(streamBuffers(), error);
}

bool OpRuntime::zeroArrivalCounters(StreamBuffers &buffers, std::string *error) {
  if (!buffers.arrivalCounters)
    return true;
  const std::vector<uint8_t> zeros(buffers.arrivalCounterBytes);
  // A copy from pageable memory may return before its DMA lands: wait, so that no launch
  // on another stream sees the old counts.
  return device_.copyToDevice(buffers.arrivalCounters, zeros.data(), zeros.size(), error) &&
         device_.synchronize(error);
}

std::unique_ptr<OpRuntime> OpRuntime::create(Device &device, std::string *error) {
  if (device.target().empty()) {
    *error = "device '" + device.name() + "' has no compile target";
    return nullptr;
  }
  return std::unique_ptr<OpRuntime>(
      new OpRuntime(device, std::make_unique<Jit>(JitOptions::fromEnvironment(device.target()))));
}

int64_t OpRuntime::warpSizeOf(std::string_view target) { return target.substr(0, 3) == "gfx" ? 64 : 32; }

bool OpRuntime::hasBf16PairArithmetic(std::string_view target) { return target.starts_with("sm_"); }

bool OpRuntime::refinesReciprocalEstimate(std::string_view target) {
  return target.starts_with("sm_") || target == "host";
}

size_t OpRuntime::loadedModules() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loaded_.size();
}

std::unique_ptr<LoadedModule> OpRuntime::compileAndLoad(const Module &module, std::string *error) {
  std::optional<Jit::Result> compiled = jit_->compile(module, error);
  if (!compiled)
    return nullptr;
  return device_.load(compiled->binary->image, compiled->binary->manifest, error);
}

bool OpRuntime::launch(const std::string &specialization, const Builder &build, std::string_view kernel,
                       std::array<uint32_t, 3> grid, const NamedArgs &args, std::string *error) {
  const LoadedModule *module = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = loaded_.find(specialization);
    if (auto collecting = collecting_.find(std::this_thread::get_id()); collecting != collecting_.end()) {
      if (it == loaded_.end() && !collecting->second->count(specialization)) {
        std::unique_ptr<Module> ir = build(error);
        if (!ir)
          return false;
        collecting->second->emplace(specialization, std::move(ir));
      }
      return true;
    }
    if (it == loaded_.end()) {
      std::unique_ptr<Module> ir = build(error);
      if (!ir)
        return false;
      std::unique_ptr<LoadedModule> loadedModule = compileAndLoad(*ir, error);
      if (!loadedModule)
        return false;
      it = loaded_.emplace(specialization, std::move(loadedModule)).first;
    }
    module = it->second.get();
  }
  const LoadedModule::Kernel *k = module->kernel(kernel, error);
  if (!k)
    return false;
  std::vector<KernelArg> ordered;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [state, first] = launched_.try_emplace(k);
    if (first) {
      std::optional<int64_t> queried = k->localMemoryBytes(error);
      if (!queried) {
        launched_.erase(state);
        return false;
      }
      state->second.localMemoryBytes = *queried;
    }
    int64_t &launched = launchedLocalMemoryBytes_[std::this_thread::get_id()];
    launched = std::max(launched, state->second.localMemoryBytes);
    if (!args.fits(state->second.arguments) && !args.plan(k->manifest().signature, &state->second.arguments, error))
      return false;
    args.fill(state->second.arguments, &ordered);
  }
  return k->launch(grid, ordered.data(), ordered.size(), stream(), error);
}

int64_t OpRuntime::takeLaunchedLocalMemoryBytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(launchedLocalMemoryBytes_[std::this_thread::get_id()], 0);
}

size_t OpRuntime::precompile(const std::function<void()> &calls, unsigned threads) {
  // Each thread collects its own launches (another thread may be inside precompile too); a
  // precompile inside `calls` collects into its own map and then restores the outer one.
  std::map<std::string, std::unique_ptr<Module>> collected;
  const std::thread::id self = std::this_thread::get_id();
  std::map<std::string, std::unique_ptr<Module>> *outer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outer = std::exchange(collecting_[self], &collected); // null unless nested
  }
  struct StopCollecting {
    OpRuntime &rt;
    std::thread::id self;
    std::map<std::string, std::unique_ptr<Module>> *outer;
    ~StopCollecting() {
      std::lock_guard<std::mutex> lock(rt.mutex_);
      if (outer)
        rt.collecting_[self] = outer;
      else
        rt.collecting_.erase(self);
    }
  };
  {
    StopCollecting stop{*this, self, outer};
    calls();
  }
  std::vector<std::pair<const std::string, std::unique_ptr<Module>> *> pending;
  for (auto &entry : collected)
    pending.push_back(&entry);
  std::atomic<size_t> next = 0, loaded = 0;
  auto work = [&] {
    for (size_t i; (i = next++) < pending.size();) {
      std::string ignored; // the real launch compiles it again and reports why it fails
      std::unique_ptr<LoadedModule> module = compileAndLoad(*pending[i]->second, &ignored);
      std::lock_guard<std::mutex> lock(mutex_);
      if (module && loaded_.emplace(pending[i]->first, std::move(module)).second)
        ++loaded;
    }
  };
  const size_t workers =
      std::min<size_t>(pending.size(), threads ? threads : std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> running;
  for (size_t t = 1; t < workers; ++t)
    running.emplace_back(work);
  work();
  for (std::thread &thread : running)
    thread.join();
  return loaded;
}

bool wavetile::ops::opError(std::string *error, std::string_view op, const std::string &message) {
  *error = std::string(op) + ": " + message;
  return false;
}
