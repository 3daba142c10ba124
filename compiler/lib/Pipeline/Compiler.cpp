//===- Compiler.cpp - the public compiler API -----------------------------===//

#include "wavetile/Compiler.h"

#include "HostLowering.h"

#include "wavetile/Conversion/Passes.h"
#include "wavetile/Dialect/Tile/IR/TileDialect.h"
#include "wavetile/Pipeline/ModuleImpl.h"
#include "wavetile/Pipeline/Pipelines.h"
#include "wavetile/Target/GPUCodegen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace wavetile;

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

std::string wavetile::formatLocation(mlir::Location loc) {
  std::string found;
  loc->walk([&](mlir::Location inner) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(inner)) {
      found = (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
               std::to_string(file.getColumn()));
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found.empty() ? "<unknown>" : found;
}

static const char *severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

DiagnosticCapture::DiagnosticCapture(mlir::MLIRContext *context) : context(context) {
  handlerId = context->getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
    text += formatLocation(diag.getLocation()) + ": " + severityName(diag.getSeverity()) + ": " +
            diag.str() + "\n";
    for (mlir::Diagnostic &note : diag.getNotes())
      text += formatLocation(note.getLocation()) + ": note: " + note.str() + "\n";
    return mlir::success();
  });
}

DiagnosticCapture::~DiagnosticCapture() { context->getDiagEngine().eraseHandler(handlerId); }

std::string DiagnosticCapture::take() { return std::exchange(text, {}); }

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module::Impl::Impl() {
  mlir::DialectRegistry registry;
  registerDialects(registry);
  context = std::make_unique<mlir::MLIRContext>(registry);
  // Errors name the op's source location; a printout of the whole kernel after each one
  // buries the message.
  context->printOpOnDiagnostic(false);
  context->loadDialect<tile::TileDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                       mlir::math::MathDialect, mlir::scf::SCFDialect>();
}

Module::Module(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Module::~Module() = default;
Module::Module(Module &&) noexcept = default;
Module &Module::operator=(Module &&) noexcept = default;

std::unique_ptr<Module> Module::parse(std::string_view text, std::string_view bufferName, std::string *error) {
  auto impl = std::make_unique<Impl>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(text.data(), text.size()),
                                           llvm::StringRef(bufferName.data(), bufferName.size())),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, impl->context.get(), os);
  impl->module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, impl->context.get());
  if (!impl->module) {
    if (error)
      *error = diagnostics.empty() ? "failed to parse module" : diagnostics;
    return nullptr;
  }
  return std::make_unique<Module>(std::move(impl));
}

bool Module::verify(std::string *error) const {
  DiagnosticCapture capture(impl_->context.get());
  if (mlir::succeeded(mlir::verify(impl_->module.get())))
    return true;
  if (error)
    *error = capture.take();
  return false;
}

std::string Module::str(bool withLocations) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  impl_->module.get().print(os, flags);
  return text;
}

static std::optional<KernelParam> paramOf(mlir::Type type, std::string name) {
  auto print = [](mlir::Type t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    return s;
  };
  if (auto ptr = mlir::dyn_cast<tile::PtrType>(type))
    return KernelParam{name, ArgKind::Pointer, print(ptr.getElementType())};
  if (type.isInteger(32))
    return KernelParam{name, ArgKind::I32, "i32"};
  if (type.isInteger(64))
    return KernelParam{name, ArgKind::I64, "i64"};
  if (type.isF32())
    return KernelParam{name, ArgKind::F32, "f32"};
  if (type.isF64())
    return KernelParam{name, ArgKind::F64, "f64"};
  return std::nullopt;
}

std::vector<KernelSignature> Module::kernels() const {
  std::vector<KernelSignature> result;
  impl_->module.get().walk([&](mlir::func::FuncOp f) {
    if (!f->hasAttr(tile::TileDialect::kKernelAttrName))
      return;
    KernelSignature signature{f.getName().str(), {}};
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      auto nameAttr = f.getArgAttrOfType<mlir::StringAttr>(i, "tile.name");
      std::string name = nameAttr ? nameAttr.str() : "arg" + std::to_string(i);
      if (auto param = paramOf(f.getArgumentTypes()[i], name)) {
        param->within2GiB = bool(f.getArgAttr(i, tile::TileDialect::kWithin2GiBAttrName));
        signature.params.push_back(*param);
      }
    }
    result.push_back(std::move(signature));
  });
  return result;
}

//===----------------------------------------------------------------------===//
// Host lowering and execution
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp> wavetile::detail::lowerCopyForHost(const Module &module, std::string *error,
                                                                     LoopPipelining pipelining) {
  mlir::MLIRContext *context = module.impl().context.get();
  DiagnosticCapture capture(context);
  auto fail = [&](std::string message) -> mlir::OwningOpRef<mlir::ModuleOp> {
    if (error)
      *error = message.empty() ? capture.take() : message;
    return nullptr;
  };
  if (mlir::failed(mlir::verify(module.impl().module.get())))
    return fail("");
  for (auto f : module.impl().module.get().getOps<mlir::func::FuncOp>()) {
    if (!f->hasAttr(tile::TileDialect::kKernelAttrName))
      continue;
    for (auto [i, type] : llvm::enumerate(f.getArgumentTypes()))
      if (!paramOf(type, ""))
        return fail(formatLocation(f.getLoc()) + ": error: kernel '" + f.getName().str() + "' argument " +
                    std::to_string(i) + " has a type no launcher can pass (pointers, i32, i64, f32, f64)");
  }
  registerPasses();
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.impl().module.get().clone());
  mlir::PassManager pm(context);
  if (mlir::failed(buildHostPipeline(pm, pipelining == LoopPipelining::Registers ? "registers" : "async-copies")) ||
      mlir::failed(pm.run(*copy)))
    return fail("");
  return copy;
}

std::optional<std::string> wavetile::lowerForHost(const Module &module, HostStage stage, std::string *error) {
  auto lowered = detail::lowerCopyForHost(module, error);
  if (!lowered)
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream os(text);
  if (stage == HostStage::LLVMDialect) {
    lowered->print(os);
    return text;
  }
  llvm::LLVMContext llvmContext;
  auto llvmModule = mlir::translateModuleToLLVMIR(*lowered, llvmContext);
  if (!llvmModule) {
    if (error)
      *error = "translation to LLVM IR failed";
    return std::nullopt;
  }
  llvmModule->print(os, nullptr);
  return text;
}

namespace {
/// A module lowered for a GPU target: the gpu.modules of the target's vendor.
struct LoweredForGpu {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<mlir::gpu::GPUModuleOp> gpuModules;
};
} // namespace

/// Writes `text` to `path`; false with the reason in *error when it cannot.
static bool writeDumpFile(const std::string &path, llvm::StringRef text, std::string *error) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (!ec)
    out << text;
  if (ec && error)
    *error = "cannot write '" + path + "': " + ec.message() + "\n";
  return !ec;
}

static std::optional<LoweredForGpu> lowerForGpu(const Module &module, const GpuTarget &target, std::string *error,
                                                const std::optional<std::string> &dumpDirectory = std::nullopt) {
  mlir::MLIRContext *context = module.impl().context.get();
  DiagnosticCapture capture(context);
  auto fail = [&]() -> std::optional<LoweredForGpu> {
    if (error && error->empty())
      *error = capture.take();
    return std::nullopt;
  };
  if (mlir::failed(mlir::verify(module.impl().module.get())))
    return fail();
  registerPasses();
  LoweredForGpu lowered{mlir::OwningOpRef<mlir::ModuleOp>(module.impl().module.get().clone()), {}};
  mlir::PassManager pm(context);
  if (dumpDirectory) {
    if (std::error_code ec = llvm::sys::fs::create_directories(*dumpDirectory)) {
      if (error)
        *error = "cannot create the dump directory '" + *dumpDirectory + "': " + ec.message() + "\n";
      return std::nullopt;
    }
    if (!writeDumpFile(*dumpDirectory + "/0-tile.mlir", module.str(/*withLocations=*/true), error))
      return std::nullopt;
    // One file per pass that changed the IR, in pipeline order (IR printing needs the
    // passes to run one at a time).
    context->disableMultithreading();
    pm.enableIRPrintingToFileTree([](mlir::Pass *, mlir::Operation *) { return false; },
                                  [](mlir::Pass *, mlir::Operation *) { return true; },
                                  /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/true,
                                  /*printAfterOnlyOnFailure=*/false, *dumpDirectory + "/passes");
  }
  bool loweredOk = mlir::succeeded(buildGpuPipeline(pm, llvm::StringRef(target.name.data(), target.name.size()))) &&
                    mlir::succeeded(pm.run(*lowered.module));
  if (dumpDirectory)
    context->enableMultithreading();
  if (!loweredOk)
    return fail();
  for (auto gpuModule : lowered.module->getOps<mlir::gpu::GPUModuleOp>()) {
    auto vendor = gpuModuleVendor(gpuModule, error);
    if (mlir::failed(vendor))
      return fail();
    if (*vendor == target.vendor)
      lowered.gpuModules.push_back(gpuModule);
  }
  if (lowered.gpuModules.empty()) {
    if (error)
      *error = std::string("no tile kernel and no gpu.module with ") +
               (target.isAMD() ? "rocdl.kernel" : "nvvm.kernel") + " kernels to compile for " +
               std::string(target.name) + "\n";
    return std::nullopt;
  }
  return lowered;
}

std::optional<std::string> wavetile::compileForGpu(const Module &module, const GpuTarget &target, GpuEmit emit,
                                                   std::string *error) {
  auto lowered = lowerForGpu(module, target, error);
  if (!lowered)
    return std::nullopt;
  auto out = compileGpuModules(lowered->gpuModules, target, emit, error);
  if (mlir::failed(out))
    return std::nullopt;
  return std::move(*out);
}

/// The manifest of `module`'s tile kernels once lowered for `target`.
static std::optional<ModuleManifest> manifestOf(const Module &module, const LoweredForGpu &lowered,
                                                const GpuTarget &target, std::string *error) {
  ModuleManifest manifest;
  manifest.target = std::string(target.name);
  // The manifest describes the tile kernels: their signatures from the tile IR, block and
  // shared sizes from the LLVM functions made of them (the workgroup globals they address).
  for (const KernelSignature &signature : module.kernels()) {
    KernelManifest kernel{signature};
    bool found = false;
    for (auto gpuModule : lowered.gpuModules) {
      auto func = gpuModule.lookupSymbol<mlir::LLVM::LLVMFuncOp>(signature.name);
      if (!func)
        continue;
      found = true;
      if (auto dynamic = func->getAttrOfType<mlir::IntegerAttr>(kDynamicSharedBytesAttrName))
        kernel.dynamicSharedBytes = uint32_t(dynamic.getInt());
      if (auto block = func->getAttrOfType<mlir::DenseI32ArrayAttr>("gpu.known_block_size"))
        for (int i = 0; i < 3 && i < int(block.size()); ++i)
          kernel.block[i] = uint32_t(block[i]);
      llvm::SmallPtrSet<mlir::Operation *, 4> counted;
      func.walk([&](mlir::LLVM::AddressOfOp address) {
        auto global = mlir::dyn_cast_or_null<mlir::LLVM::GlobalOp>(
            mlir::SymbolTable::lookupSymbolIn(gpuModule, address.getGlobalNameAttr()));
        if (global && global.getAddrSpace() == 3 && counted.insert(global).second)
          if (auto array = mlir::dyn_cast<mlir::LLVM::LLVMArrayType>(global.getGlobalType()))
            kernel.sharedBytes += uint32_t(array.getNumElements());
      });
    }
    if (!found) {
      if (error)
        *error = "kernel '" + signature.name + "' has no GPU function after lowering\n";
      return std::nullopt;
    }
    manifest.kernels.push_back(std::move(kernel));
  }
  return manifest;
}

namespace {
/// A module lowered for a GPU target with its code object and manifest.
struct CompiledForGpu {
  LoweredForGpu lowered;
  CodeObject binary;
};
} // namespace

static std::optional<CompiledForGpu> lowerAndCompile(const Module &module, const GpuTarget &target, std::string *error,
                                                     const std::optional<std::string> &dumpDirectory) {
  auto lowered = lowerForGpu(module, target, error, dumpDirectory);
  if (!lowered)
    return std::nullopt;
  auto manifest = manifestOf(module, *lowered, target, error);
  if (!manifest)
    return std::nullopt;
  auto image = compileGpuModules(lowered->gpuModules, target, GpuEmit::Binary, error);
  if (mlir::failed(image))
    return std::nullopt;
  return CompiledForGpu{std::move(*lowered), CodeObject{std::move(*image), std::move(*manifest)}};
}

std::optional<CodeObject> wavetile::lowerKernelsForEmulation(const Module &module, const GpuTarget &target,
                                                             std::string *error,
                                                             const std::optional<std::string> &dumpDirectory) {
  // The code object is built too (and dropped): a kernel the GPU could not be given must not
  // pass in the emulator.
  auto compiled = lowerAndCompile(module, target, error, dumpDirectory);
  if (!compiled)
    return std::nullopt;
  CodeObject object{std::string(), std::move(compiled->binary.manifest)};
  llvm::raw_string_ostream os(object.image);
  // With locations: the emulator names the kernel source line of a failing operation.
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  compiled->lowered.module->print(os, flags);
  return object;
}

std::optional<CodeObject> wavetile::compileKernelsForGpu(const Module &module, const GpuTarget &target,
                                                         std::string *error,
                                                         const std::optional<std::string> &dumpDirectory) {
  auto compiled = lowerAndCompile(module, target, error, dumpDirectory);
  if (!compiled)
    return std::nullopt;
  LoweredForGpu &lowered = compiled->lowered;
  CodeObject &binary = compiled->binary;
  if (dumpDirectory) {
    const std::string &dir = *dumpDirectory;
    std::string extension = target.isAMD() ? ".hsaco" : ".ptx";
    auto llvmIR = compileGpuModules(lowered.gpuModules, target, GpuEmit::LLVMIR, error);
    auto assembly = target.isAMD() ? compileGpuModules(lowered.gpuModules, target, GpuEmit::Assembly, error)
                                   : mlir::FailureOr<std::string>(binary.image);
    if (mlir::failed(llvmIR) || mlir::failed(assembly))
      return std::nullopt;
    std::string loweredText;
    llvm::raw_string_ostream os(loweredText);
    lowered.module->print(os);
    if (!writeDumpFile(dir + "/1-lowered.mlir", loweredText, error) ||
        !writeDumpFile(dir + "/2-optimized.ll", *llvmIR, error) ||
        !writeDumpFile(dir + "/3-isa.s", *assembly, error) ||
        !writeDumpFile(dir + "/kernel" + extension, binary.image, error) ||
        !writeDumpFile(dir + "/kernel.manifest", printManifest(binary.manifest), error))
      return std::nullopt;
  }
  return std::move(binary);
}

_Float16 wavetile::detail::wavetileTruncF32ToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t result;
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    result = uint16_t(bits >> 16);
    if ((result & 0x7f) == 0)
      result |= 0x40;
  } else {
    result = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1)) >> 16);
  }
  _Float16 half;
  std::memcpy(&half, &result, sizeof half); // bf16 travels in the same register as _Float16
  return half;
}

void wavetile::detail::initializeHostTarget() {
  static bool ready = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)ready;
}

const std::string &wavetile::detail::hostCpu() {
  static const std::string cpu = llvm::sys::getHostCPUName().str();
  return cpu;
}

const std::string &wavetile::detail::hostFeatures() {
  static const std::string features = [] {
    std::string list;
    for (const auto &feature : llvm::sys::getHostCPUFeatures()) {
      bool enabled = feature.getValue() && feature.getKey() != "avx512bf16" && feature.getKey() != "avxneconvert";
      list += (list.empty() ? "" : ",") + std::string(enabled ? "+" : "-") + feature.getKey().str();
    }
    return list;
  }();
  return features;
}

struct HostExecutable::Impl {
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::vector<KernelSignature> kernels;
};

HostExecutable::HostExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostExecutable::~HostExecutable() = default;

std::unique_ptr<HostExecutable> HostExecutable::compile(const Module &module, std::string *error,
                                                        LoopPipelining pipelining) {
  detail::initializeHostTarget();
  auto lowered = detail::lowerCopyForHost(module, error, pipelining);
  if (!lowered)
    return nullptr;
  mlir::ExecutionEngineOptions options;
  auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/2, /*sizeLevel=*/0, nullptr);
  options.transformer = [optimize](llvm::Module *m) -> llvm::Error {
    for (llvm::Function &f : *m) {
      f.addFnAttr("target-cpu", detail::hostCpu());
      f.addFnAttr("target-features", detail::hostFeatures());
    }
    return optimize(m);
  };
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Default;
  auto engine = mlir::ExecutionEngine::create(*lowered, options);
  if (!engine) {
    if (error)
      *error = "host JIT failed: " + llvm::toString(engine.takeError());
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&detail::wavetileTruncF32ToBF16),
                                         llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  // ORC compiles on first lookup; do it now so compile errors and time belong to compile().
  for (const KernelSignature &kernel : module.kernels())
    if (auto entry = impl->engine->lookupPacked(kernel.name + kHostGridSuffix); !entry) {
      if (error)
        *error = "host JIT failed for '" + kernel.name + "': " + llvm::toString(entry.takeError());
      return nullptr;
    }
  impl->kernels = module.kernels();
  return std::unique_ptr<HostExecutable>(new HostExecutable(std::move(impl)));
}

const std::vector<KernelSignature> &HostExecutable::kernels() const { return impl_->kernels; }

bool HostExecutable::launch(std::string_view kernel, std::array<uint32_t, 3> grid,
                            const std::vector<KernelArg> &args, std::string *error) const {
  auto fail = [&](std::string message) {
    if (error)
      *error = std::move(message);
    return false;
  };
  const KernelSignature *signature = nullptr;
  for (const auto &k : impl_->kernels)
    if (k.name == kernel)
      signature = &k;
  if (!signature)
    return fail("no kernel named '" + std::string(kernel) + "' in this module");
  if (!checkLaunch(*signature, grid, args.data(), args.size(), error))
    return false;
  std::vector<void *> packed;
  for (const KernelArg &arg : args)
    packed.push_back(const_cast<void *>(static_cast<const void *>(&arg.pointer)));
  int32_t gridValues[3] = {int32_t(grid[0]), int32_t(grid[1]), int32_t(grid[2])};
  for (int32_t &g : gridValues)
    packed.push_back(&g);
  std::string driver = std::string(kernel) + kHostGridSuffix;
  if (auto err = impl_->engine->invokePacked(driver, packed))
    return fail("launch of '" + std::string(kernel) + "' failed: " + llvm::toString(std::move(err)));
  return true;
}
