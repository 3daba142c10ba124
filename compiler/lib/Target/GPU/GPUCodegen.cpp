//===- GPUCodegen.cpp - gpu.module (LLVM dialect) to hsaco / PTX ----------===//
//
// In-process: translateModuleToLLVMIR -> O3 (PassBuilder) -> TargetMachine ->
// AMDGPU asm / object (+ lld, LldLink.cpp) or PTX. See GPUCodegen.h.
//
// LLVM failure modes handled here, so that a bad kernel never ends the process:
//  - Errors the backend reports through the LLVMContext (e.g. "local memory
//    limit exceeded") would, with the default handler, print and exit(1). A
//    collecting DiagnosticHandler turns them into an error string.
//  - report_fatal_error (e.g. "Cannot select" for an intrinsic the chip lacks)
//    calls exit(1) after the fatal-error handler returns. Code generation runs
//    inside an llvm::CrashRecoveryContext, and a process-wide fatal-error
//    handler (installed once) jumps back to it; outside such a region the
//    handler only prints, as LLVM's default does.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Target/GPUCodegen.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Scalar/Scalarizer.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <map>
#include <mutex>

using namespace wavetile;

namespace {

constexpr llvm::StringLiteral kRocdlKernel = "rocdl.kernel";
constexpr llvm::StringLiteral kRocdlFlatWorkGroupSize = "rocdl.flat_work_group_size";
constexpr llvm::StringLiteral kRocdlMaxFlatWorkGroupSize = "rocdl.max_flat_work_group_size";
constexpr llvm::StringLiteral kRocdlReqdWorkGroupSize = "rocdl.reqd_work_group_size";
constexpr llvm::StringLiteral kNvvmKernel = "nvvm.kernel";

/// Code object version 5: the module flag the AMDGPU backend reads
/// (AMDGPU::getAMDHSACodeObjectVersion(Module) = flag / 100). Upstream's ROCDL
/// serializer (mlir/lib/Target/LLVM/ROCDL/Target.cpp) never sets this flag: it
/// only defines `__oclc_ABI_version` for the device libraries from the
/// #rocdl.target `abi` option, and otherwise relies on the backend's default
/// version. We set the flag so the version never depends on that default.
constexpr int kCodeObjectVersion = 500;

std::string formatLoc(mlir::Location loc) {
  std::string found;
  loc->walk([&](mlir::Location inner) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(inner)) {
      found = file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" + std::to_string(file.getColumn());
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return found.empty() ? "<unknown>" : found;
}

std::string moduleLabel(mlir::gpu::GPUModuleOp module) { return "gpu.module @" + module.getName().str(); }

//===----------------------------------------------------------------------===//
// Fatal errors and LLVM diagnostics
//===----------------------------------------------------------------------===//

thread_local std::string *fatalMessage = nullptr;

void onFatalError(void *, const char *reason, bool) {
  if (llvm::CrashRecoveryContext *crc = llvm::CrashRecoveryContext::GetCurrent()) {
    if (fatalMessage)
      *fatalMessage = reason;
    crc->HandleExit(1); // jumps back into runGuarded; does not return
  }
  llvm::errs() << "LLVM ERROR: " << reason << "\n"; // what LLVM prints without a handler
}

/// Runs `fn` so that a fatal LLVM error or a crash inside it returns false
/// with a message instead of ending the process.
bool runGuarded(llvm::function_ref<void()> fn, std::string *message) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::CrashRecoveryContext::Enable();
    llvm::install_fatal_error_handler(onFatalError, nullptr);
  });
  std::string reason;
  std::string *saved = fatalMessage;
  fatalMessage = &reason;
  llvm::CrashRecoveryContext crc;
  bool ok = crc.RunSafely(fn);
  fatalMessage = saved;
  if (!ok)
    *message = reason.empty() ? "LLVM crashed (signal or abort)" : reason;
  return ok;
}

/// Collects LLVM's errors and warnings instead of printing them (and exiting,
/// for errors).
struct CollectingDiagnosticHandler : llvm::DiagnosticHandler {
  std::string errors;
  std::string warnings;
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    if (info.getSeverity() != llvm::DS_Error && info.getSeverity() != llvm::DS_Warning)
      return true;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    llvm::StringRef message(text);
    message.consume_front("<unknown>:0:0: "); // resource diagnostics carry no location
    (info.getSeverity() == llvm::DS_Error ? errors : warnings) += message.str() + "\n";
    return true;
  }
};

CollectingDiagnosticHandler &installCollector(llvm::LLVMContext &context) {
  auto handler = std::make_unique<CollectingDiagnosticHandler>();
  CollectingDiagnosticHandler &ref = *handler;
  context.setDiagnosticHandler(std::move(handler));
  return ref;
}

const CollectingDiagnosticHandler *collectorOf(llvm::LLVMContext &context) {
  return static_cast<const CollectingDiagnosticHandler *>(context.getDiagHandlerPtr());
}

//===----------------------------------------------------------------------===//
// Checks on the MLIR side
//===----------------------------------------------------------------------===//

bool isKernel(mlir::LLVM::LLVMFuncOp fn, GpuVendor vendor) {
  return fn->hasAttr(vendor == GpuVendor::AMD ? kRocdlKernel : kNvvmKernel);
}

/// Parses "min,max".
std::optional<std::pair<int64_t, int64_t>> parseRange(llvm::StringRef text) {
  auto [lo, hi] = text.split(',');
  int64_t a = 0, b = 0;
  if (lo.trim().getAsInteger(10, a) || hi.trim().getAsInteger(10, b))
    return std::nullopt;
  return std::make_pair(a, b);
}

/// Block sizes of AMD kernels (see GPUCodegen.h). Returns, per kernel that only
/// has reqd_work_group_size, the flat size to set after translation.
mlir::FailureOr<std::map<std::string, int64_t>> checkAmdBlockSizes(mlir::gpu::GPUModuleOp module,
                                                                   const GpuTarget &target, std::string *error) {
  std::map<std::string, int64_t> fixups;
  std::string problems;
  for (auto fn : module.getOps<mlir::LLVM::LLVMFuncOp>()) {
    if (!isKernel(fn, GpuVendor::AMD))
      continue;
    std::string where = formatLoc(fn.getLoc()) + ": error: kernel @" + fn.getName().str() + ": ";
    std::optional<std::pair<int64_t, int64_t>> flat;
    if (auto attr = fn->getAttr(kRocdlFlatWorkGroupSize)) {
      auto text = mlir::dyn_cast<mlir::StringAttr>(attr);
      flat = text ? parseRange(text.getValue()) : std::nullopt;
      if (!flat || flat->first < 1 || flat->first > flat->second) {
        problems += where + "rocdl.flat_work_group_size must be a string \"min,max\" with 1 <= min <= max\n";
        continue;
      }
    } else if (auto attr = fn->getAttr(kRocdlMaxFlatWorkGroupSize)) {
      auto value = mlir::dyn_cast<mlir::IntegerAttr>(attr);
      if (!value || value.getInt() < 1) {
        problems += where + "rocdl.max_flat_work_group_size must be a positive integer\n";
        continue;
      }
      flat = std::make_pair(int64_t(1), value.getInt());
    }
    std::optional<int64_t> reqd;
    if (auto attr = fn->getAttr(kRocdlReqdWorkGroupSize)) {
      auto dims = mlir::dyn_cast<mlir::DenseI32ArrayAttr>(attr);
      if (!dims || dims.size() != 3 || llvm::any_of(dims.asArrayRef(), [](int32_t d) { return d < 1; })) {
        problems += where + "rocdl.reqd_work_group_size must be array<i32: x, y, z> with positive sizes\n";
        continue;
      }
      reqd = int64_t(dims[0]) * dims[1] * dims[2];
    }
    if (!flat && !reqd) {
      problems += where +
                  "no block size declared; set rocdl.flat_work_group_size = \"min,max\" or "
                  "rocdl.reqd_work_group_size (without one ROCDL caps the kernel at 256 threads)\n";
      continue;
    }
    int64_t largest = reqd ? *reqd : flat->second;
    if (largest > target.maxWorkgroupSize || (flat && flat->second > target.maxWorkgroupSize)) {
      problems += where + "block size exceeds " + std::to_string(target.maxWorkgroupSize) + " threads on " +
                  std::string(target.name) + "\n";
      continue;
    }
    if (reqd && flat && (*reqd < flat->first || *reqd > flat->second)) {
      problems += where + "rocdl.reqd_work_group_size (" + std::to_string(*reqd) +
                  " threads) lies outside rocdl.flat_work_group_size (" + std::to_string(flat->first) + "," +
                  std::to_string(flat->second) + ")\n";
      continue;
    }
    if (reqd && !flat)
      fixups[fn.getName().str()] = *reqd;
  }
  if (!problems.empty()) {
    *error = problems;
    return mlir::failure();
  }
  return fixups;
}

/// A #rocdl.target / #nvvm.target on the gpu.module must agree with the target
/// asked for (decision 8: never compile for a chip other than the one named).
mlir::LogicalResult checkDeclaredTargets(mlir::gpu::GPUModuleOp module, const GpuTarget &target,
                                         std::string *error) {
  mlir::ArrayAttr targets = module.getTargetsAttr();
  if (!targets)
    return mlir::success();
  for (mlir::Attribute attr : targets) {
    std::string chip;
    if (auto rocdl = mlir::dyn_cast<mlir::ROCDL::ROCDLTargetAttr>(attr))
      chip = rocdl.getChip().str();
    else if (auto nvvm = mlir::dyn_cast<mlir::NVVM::NVVMTargetAttr>(attr))
      chip = nvvm.getChip().str();
    else
      continue;
    if (chip != target.chip) {
      *error = formatLoc(module.getLoc()) + ": error: " + moduleLabel(module) + " declares target chip '" + chip +
               "' but code is being generated for '" + std::string(target.name) + "'\n";
      return mlir::failure();
    }
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// LLVM side
//===----------------------------------------------------------------------===//

mlir::FailureOr<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const GpuTarget &target,
                                                                          std::string *error) {
  initializeGpuLLVMTargets();
  llvm::Triple triple(llvm::StringRef(target.triple));
  std::string lookupError;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget) {
    *error = "LLVM has no backend for " + std::string(target.triple) + ": " + lookupError + "\n";
    return mlir::failure();
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.chip, target.features, options,
      target.isAMD() ? std::optional(llvm::Reloc::PIC_) : std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    *error = "cannot create an LLVM target machine for " + std::string(target.name) + "\n";
    return mlir::failure();
  }
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(target.chip)) {
    *error = "this LLVM does not know the processor '" + std::string(target.chip) + "'\n";
    return mlir::failure();
  }
  return machine;
}

mlir::LogicalResult optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  if (machine.getTargetTriple().isAMDGPU()) {
    // Per-thread tiles are LLVM vectors, but CDNA has no vector ALU: left whole, a uniform
    // operand splatted across a vector occupies one SGPR per lane of it. Split into scalars
    // (after the vectorizers, which would regroup them), every element reads the one SGPR.
    // Loads and stores stay vectors (one wide access).
    builder.registerOptimizerLastEPCallback(
        [](llvm::ModulePassManager &passes, llvm::OptimizationLevel, llvm::ThinOrFullLTOPhase) {
          passes.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::ScalarizerPass()));
        });
  }
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
  return mlir::success();
}

struct Prepared {
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
};

/// Fails with the collected LLVM errors, if any.
mlir::LogicalResult checkLLVMErrors(llvm::LLVMContext &context, llvm::StringRef stage, std::string *error) {
  const CollectingDiagnosticHandler *collector = collectorOf(context);
  if (!collector || collector->errors.empty())
    return mlir::success();
  *error = stage.str() + " failed:\n" + collector->errors;
  return mlir::failure();
}

/// One gpu.module to unoptimized LLVM IR in `context`, after the checks, with
/// the block-size fix-ups applied.
mlir::FailureOr<std::unique_ptr<llvm::Module>> translate(mlir::gpu::GPUModuleOp module, const GpuTarget &target,
                                                         llvm::LLVMContext &context, std::string *error) {
  auto vendor = gpuModuleVendor(module, error);
  if (mlir::failed(vendor))
    return mlir::failure();
  if (*vendor != target.vendor) {
    *error = formatLoc(module.getLoc()) + ": error: " + moduleLabel(module) + " holds " +
             (*vendor == GpuVendor::AMD ? "AMD (rocdl.kernel)" : "NVIDIA (nvvm.kernel)") +
             " kernels; they cannot be compiled for " + std::string(target.name) + "\n";
    return mlir::failure();
  }
  if (mlir::failed(checkDeclaredTargets(module, target, error)))
    return mlir::failure();
  std::map<std::string, int64_t> flatFixups;
  if (target.isAMD()) {
    auto fixups = checkAmdBlockSizes(module, target, error);
    if (mlir::failed(fixups))
      return mlir::failure();
    flatFixups = std::move(*fixups);
  }

  // Translation interfaces for the dialects, and the dialects loaded: a
  // discardable attribute such as `rocdl.kernel` reaches its dialect's
  // translation (amendOperation) only through a loaded dialect; otherwise the
  // kernel would silently become an ordinary function.
  mlir::MLIRContext *mlirContext = module->getContext();
  mlir::DialectRegistry registry;
  registerGpuTranslations(registry);
  mlirContext->appendDialectRegistry(registry);
  mlirContext->loadDialect<mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect, mlir::NVVM::NVVMDialect,
                           mlir::gpu::GPUDialect>();

  // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline PTX, in a copy: the
  // caller's module stays as lowered (the emulator interprets those ops).
  mlir::OwningOpRef<mlir::gpu::GPUModuleOp> withInlinePtx;
  bool needsPtx =
      module.walk([](mlir::NVVM::BasicPtxBuilderInterface) { return mlir::WalkResult::interrupt(); }).wasInterrupted();
  if (needsPtx) {
    withInlinePtx = module.clone();
    mlir::RewritePatternSet ptx(mlirContext);
    mlir::populateNVVMToLLVMConversionPatterns(ptx);
    if (mlir::failed(mlir::applyPatternsGreedily(withInlinePtx->getOperation(), std::move(ptx)))) {
      *error = "lowering the NVVM operations of " + moduleLabel(module) + " to inline PTX did not converge\n";
      return mlir::failure();
    }
    module = *withInlinePtx;
  }

  std::string diagnostics;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    mlir::ScopedDiagnosticHandler handler(module->getContext(), [&](mlir::Diagnostic &diag) {
      if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
        diagnostics += formatLoc(diag.getLocation()) + ": error: " + diag.str() + "\n";
      return mlir::success();
    });
    llvmModule = mlir::translateModuleToLLVMIR(module.getOperation(), context, module.getName());
  }
  if (!llvmModule) {
    *error = "translation of " + moduleLabel(module) + " to LLVM IR failed" +
             (diagnostics.empty() ? std::string("\n") : ":\n" + diagnostics);
    return mlir::failure();
  }
  for (const auto &[name, size] : flatFixups)
    if (llvm::Function *fn = llvmModule->getFunction(name))
      fn->addFnAttr("amdgpu-flat-work-group-size", std::to_string(size) + "," + std::to_string(size));
  return llvmModule;
}

std::string modulesLabel(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules) {
  std::string label;
  for (auto module : modules)
    label += (label.empty() ? "" : ", ") + moduleLabel(module);
  return label;
}

/// The gpu.modules translated, linked into one LLVM module (one code object
/// holds one HSA metadata note, so AMD modules are merged here rather than by
/// linking several objects), given the target's triple, data layout and
/// (AMD) code object version, verified and optimized at O3.
mlir::FailureOr<Prepared> prepare(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules, const GpuTarget &target,
                                  llvm::LLVMContext &context, std::string *error) {
  if (modules.empty()) {
    *error = "no gpu.module to compile\n";
    return mlir::failure();
  }
  installCollector(context);
  std::string label = modulesLabel(modules);
  auto first = translate(modules.front(), target, context, error);
  if (mlir::failed(first))
    return mlir::failure();
  std::unique_ptr<llvm::Module> llvmModule = std::move(*first);
  for (auto module : modules.drop_front()) {
    auto next = translate(module, target, context, error);
    if (mlir::failed(next))
      return mlir::failure();
    if (llvm::Linker::linkModules(*llvmModule, std::move(*next)) ||
        mlir::failed(checkLLVMErrors(context, "linking " + label, error))) {
      if (error->empty())
        *error = "linking " + label + " failed\n";
      return mlir::failure();
    }
  }

  auto machine = createTargetMachine(target, error);
  if (mlir::failed(machine))
    return mlir::failure();
  llvmModule->setTargetTriple(llvm::Triple(llvm::StringRef(target.triple)));
  llvmModule->setDataLayout((*machine)->createDataLayout());
  if (target.isAMD()) {
    if (auto *existing =
            llvm::mdconst::extract_or_null<llvm::ConstantInt>(llvmModule->getModuleFlag("amdhsa_code_object_version"))) {
      if (existing->getZExtValue() != kCodeObjectVersion) {
        *error = label + " asks for code object version " + std::to_string(existing->getZExtValue()) +
                 "; Wavetile emits " + std::to_string(kCodeObjectVersion) + "\n";
        return mlir::failure();
      }
    } else {
      llvmModule->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", kCodeObjectVersion);
    }
  }

  std::string verifierOutput;
  llvm::raw_string_ostream verifierStream(verifierOutput);
  if (llvm::verifyModule(*llvmModule, &verifierStream)) {
    *error = "LLVM IR of " + label + " does not verify:\n" + verifierOutput;
    return mlir::failure();
  }

  std::string fatal;
  if (!runGuarded([&] { (void)optimize(*llvmModule, **machine); }, &fatal)) {
    *error = "LLVM optimization of " + label + " failed: " + fatal + "\n";
    return mlir::failure();
  }
  if (mlir::failed(checkLLVMErrors(context, "LLVM optimization of " + label, error)))
    return mlir::failure();
  return Prepared{std::move(llvmModule), std::move(*machine)};
}

mlir::FailureOr<std::string> emitFile(Prepared &prepared, llvm::CodeGenFileType type, llvm::StringRef label,
                                      std::string *error) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (prepared.machine->addPassesToEmitFile(passes, stream, nullptr, type)) {
    *error = "the " + std::string(prepared.machine->getTargetTriple().str()) + " backend cannot emit this file type\n";
    return mlir::failure();
  }
  std::string fatal;
  if (!runGuarded([&] { passes.run(*prepared.module); }, &fatal)) {
    *error = "code generation for " + label.str() + " failed: " + fatal + "\n";
    return mlir::failure();
  }
  if (mlir::failed(checkLLVMErrors(prepared.module->getContext(), "code generation for " + label.str(), error)))
    return mlir::failure();
  return std::string(buffer.str());
}

mlir::LogicalResult checkPtx(llvm::StringRef ptx, llvm::StringRef label, std::string *error) {
  std::vector<std::string> unresolved = findUnresolvedPtxFunctions(ptx);
  if (unresolved.empty())
    return mlir::success();
  bool libdevice = llvm::any_of(unresolved, [](const std::string &n) { return llvm::StringRef(n).starts_with("__nv_"); });
  *error = "PTX of " + label.str() + " calls functions nothing defines: " + llvm::join(unresolved, ", ") +
           (libdevice ? " (libdevice is not linked; lower math to native NVVM intrinsics)" : "") +
           "; the module would not load\n";
  return mlir::failure();
}

} // namespace

//===----------------------------------------------------------------------===//
// Public functions
//===----------------------------------------------------------------------===//

void wavetile::registerGpuTranslations(mlir::DialectRegistry &registry) {
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
}

void wavetile::initializeGpuLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeAMDGPUDisassembler();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

mlir::FailureOr<GpuVendor> wavetile::gpuModuleVendor(mlir::gpu::GPUModuleOp module, std::string *error) {
  bool amd = false, nvidia = false;
  for (auto fn : module.getOps<mlir::LLVM::LLVMFuncOp>()) {
    amd |= isKernel(fn, GpuVendor::AMD);
    nvidia |= isKernel(fn, GpuVendor::NVIDIA);
  }
  if (amd && nvidia) {
    *error = formatLoc(module.getLoc()) + ": error: " + moduleLabel(module) +
             " mixes rocdl.kernel and nvvm.kernel functions; use one gpu.module per vendor\n";
    return mlir::failure();
  }
  if (!amd && !nvidia) {
    *error = formatLoc(module.getLoc()) + ": error: " + moduleLabel(module) +
             " has no kernel (an llvm.func with rocdl.kernel or nvvm.kernel); lower it to the LLVM dialect first\n";
    return mlir::failure();
  }
  return amd ? GpuVendor::AMD : GpuVendor::NVIDIA;
}

mlir::FailureOr<std::unique_ptr<llvm::Module>>
wavetile::translateAndOptimizeGpuModules(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules, const GpuTarget &target,
                                         llvm::LLVMContext &context, std::string *error) {
  auto prepared = prepare(modules, target, context, error);
  if (mlir::failed(prepared))
    return mlir::failure();
  return std::move(prepared->module);
}

mlir::FailureOr<std::string> wavetile::compileGpuModulesToObject(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules,
                                                                 const GpuTarget &target, std::string *error) {
  if (!target.isAMD()) {
    *error = "object files are only produced for AMD targets; " + std::string(target.name) + " produces PTX\n";
    return mlir::failure();
  }
  llvm::LLVMContext context;
  auto prepared = prepare(modules, target, context, error);
  if (mlir::failed(prepared))
    return mlir::failure();
  return emitFile(*prepared, llvm::CodeGenFileType::ObjectFile, modulesLabel(modules), error);
}

mlir::FailureOr<std::string> wavetile::compileGpuModules(llvm::ArrayRef<mlir::gpu::GPUModuleOp> modules,
                                                         const GpuTarget &target, GpuEmit emit, std::string *error) {
  if (emit == GpuEmit::Binary && target.isAMD()) {
    auto object = compileGpuModulesToObject(modules, target, error);
    if (mlir::failed(object))
      return mlir::failure();
    return linkAmdgpuObject(*object, error);
  }
  llvm::LLVMContext context;
  auto prepared = prepare(modules, target, context, error);
  if (mlir::failed(prepared))
    return mlir::failure();
  if (emit == GpuEmit::LLVMIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    prepared->module->print(os, nullptr);
    return text;
  }
  auto text = emitFile(*prepared, llvm::CodeGenFileType::AssemblyFile, modulesLabel(modules), error);
  if (mlir::failed(text))
    return mlir::failure();
  if (target.isNVIDIA() && mlir::failed(checkPtx(*text, modulesLabel(modules), error)))
    return mlir::failure();
  return text;
}

std::vector<std::string> wavetile::findUnresolvedPtxFunctions(llvm::StringRef ptx) {
  static const llvm::StringRef kDriverProvided[] = {"vprintf", "malloc", "free", "__assertfail"};
  std::vector<std::string> names;
  llvm::SmallVector<llvm::StringRef> lines;
  ptx.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front(".extern"))
      continue;
    line = line.ltrim();
    if (!line.consume_front(".func"))
      continue;
    line = line.ltrim();
    if (line.starts_with("(")) { // return parameter list
      size_t close = line.find(')');
      if (close == llvm::StringRef::npos)
        continue;
      line = line.drop_front(close + 1).ltrim();
    }
    llvm::StringRef name = line.take_while([](char c) { return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.'; });
    if (name.empty() || llvm::is_contained(kDriverProvided, name))
      continue;
    if (!llvm::is_contained(names, name.str()))
      names.push_back(name.str());
  }
  return names;
}
