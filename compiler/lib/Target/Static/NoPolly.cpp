//===- NoPolly.cpp - static builds without Polly --------------------------===//
//
// Debian's LLVM registers Polly as a static pass-builder extension (LLVMExtensions refers to
// getPollyPluginInfo), but ships no libPolly.a. Wavetile never runs Polly; a static build
// provides this empty plugin instead. Dynamic builds get the real one from libLLVM.so.
//
//===----------------------------------------------------------------------===//

#include "llvm/Config/llvm-config.h"
#include "llvm/Plugins/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (not in this build)", LLVM_VERSION_STRING, [](llvm::PassBuilder &) {}};
}
