//===- HostObject.cpp - host kernels as a shared object -------------------===//
//
// The host lowering, compiled ahead of time for this CPU and linked by lld in-process into a
// shared object. Each kernel gets `<kernel>__packed(void **args)`, which takes its arguments
// the way GPU drivers take kernel parameters (one pointer per argument, the grid size last),
// so the runtime's host device launches it like a GPU kernel, and host code objects go
// through the same kernel cache.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "wavetile/Conversion/Passes.h"
#include "wavetile/Target/GPUCodegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace wavetile;

namespace {

/// `name(void **args)`: loads each argument of `target` from args[i] and calls it.
void addPackedEntry(llvm::Module &module, llvm::Function &target, llvm::StringRef name) {
  llvm::LLVMContext &context = module.getContext();
  auto *pointer = llvm::PointerType::getUnqual(context);
  auto *entry = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer}, false),
                                       llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", entry));
  llvm::SmallVector<llvm::Value *> args;
  for (llvm::Argument &param : target.args()) {
    llvm::Value *slot = b.CreateConstGEP1_64(pointer, entry->getArg(0), param.getArgNo());
    args.push_back(b.CreateLoad(param.getType(), b.CreateLoad(pointer, slot)));
  }
  b.CreateCall(&target, args);
  b.CreateRetVoid();
}

/// __truncsfbf2, which LLVM calls when it narrows a bf16 value it carried in f32 registers:
/// round to nearest even; a NaN keeps its payload's top bits and stays NaN (quiet bit).
void defineTruncF32ToBF16(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getBFloatTy(context), {llvm::Type::getFloatTy(context)}, false),
      llvm::GlobalValue::WeakODRLinkage, "__truncsfbf2", module);
  fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value *bits = b.CreateBitCast(fn->getArg(0), b.getInt32Ty());
  llvm::Value *high = b.CreateLShr(bits, 16);
  llvm::Value *isNaN = b.CreateICmpUGT(b.CreateAnd(bits, 0x7fffffff), b.getInt32(0x7f800000));
  llvm::Value *quiet = b.CreateSelect(b.CreateICmpEQ(b.CreateAnd(high, 0x7f), b.getInt32(0)), b.CreateOr(high, 0x40),
                                      high);
  llvm::Value *rounded = b.CreateLShr(b.CreateAdd(b.CreateAdd(bits, b.getInt32(0x7fff)), b.CreateAnd(high, 1)), 16);
  llvm::Value *result = b.CreateTrunc(b.CreateSelect(isNaN, quiet, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(result, llvm::Type::getBFloatTy(context)));
}

} // namespace

std::optional<CodeObject> wavetile::compileKernelsForHost(const Module &module, std::string *error,
                                                         LoopPipelining pipelining) {
  detail::initializeHostTarget();
  auto fail = [&](std::string message) -> std::optional<CodeObject> {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  auto lowered = detail::lowerCopyForHost(module, error, pipelining);
  if (!lowered)
    return std::nullopt;
  mlir::registerBuiltinDialectTranslation(*lowered->getContext());
  mlir::registerLLVMDialectTranslation(*lowered->getContext());
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule = mlir::translateModuleToLLVMIR(*lowered, context, "wavetile-host");
  if (!llvmModule)
    return fail("translating the host kernels to LLVM IR failed\n");

  std::string triple = llvm::sys::getProcessTriple(), lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(llvm::Triple(triple), lookupError);
  if (!target)
    return fail("LLVM has no backend for this host (" + triple + "): " + lookupError + "\n");
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(llvm::Triple(triple), detail::hostCpu(), detail::hostFeatures(),
                                  llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
                                  llvm::CodeGenOptLevel::Default));
  if (!machine)
    return fail("cannot create an LLVM target machine for this host (" + triple + ")\n");
  llvmModule->setTargetTriple(llvm::Triple(triple));
  llvmModule->setDataLayout(machine->createDataLayout());
  for (llvm::Function &f : *llvmModule) {
    f.addFnAttr("target-cpu", detail::hostCpu());
    f.addFnAttr("target-features", detail::hostFeatures());
  }
  CodeObject binary;
  binary.manifest.target = "host";
  for (const KernelSignature &signature : module.kernels()) {
    llvm::Function *driver = llvmModule->getFunction(signature.name + kHostGridSuffix);
    if (!driver)
      return fail("kernel '" + signature.name + "' has no host driver after lowering\n");
    addPackedEntry(*llvmModule, *driver, signature.name + "__packed");
    binary.manifest.kernels.push_back(KernelManifest{signature}); // block 1x1x1, no shared memory
  }
  defineTruncF32ToBF16(*llvmModule);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(*llvmModule, mam);

  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return fail("this host's LLVM backend cannot emit object files\n");
  codegen.run(*llvmModule);
  auto linked = linkSharedObject(object.str(), "host shared object", error);
  if (mlir::failed(linked))
    return std::nullopt;
  binary.image = std::move(*linked);
  return binary;
}
