//===- LldLink.cpp - AMDGPU objects to an hsaco with lld as a library -----===//
//
// `ld.lld -shared kernel.o -o kernel.hsaco`, run in this process through
// lld::lldMain with only the ELF driver linked in (liblldELF, liblldCommon).
//
// lld as a library, what it takes:
//  - lld keeps its state in one global CommonLinkerContext. lldMain creates it,
//    runs the driver and destroys it (CommonLinkerContext::destroy) before
//    returning, so links must not overlap: they are serialized by a mutex.
//  - lldMain runs the driver inside an llvm::CrashRecoveryContext. lld's
//    fatal() ends in exitLld() -> sys::Process::Exit(), which jumps back to
//    that context only when crash recovery is enabled; otherwise it calls
//    llvm_shutdown() and _exit() and takes the whole process with it. So crash
//    recovery is enabled (once, process-wide) before the first link.
//  - lldMain returns {retCode, canRunAgain}. canRunAgain = false means the
//    driver crashed or lld's context could not be torn down, and lld's memory
//    may be corrupt: no further link is attempted in this process; later calls
//    fail with a message saying so.
//  - The driver reads inputs from and writes its output to files (there is no
//    in-memory API), so inputs and output go through temporary files that are
//    always removed (llvm::FileRemover).
//
//===----------------------------------------------------------------------===//

#include "wavetile/Target/GPUCodegen.h"

#include "lld/Common/Driver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

LLD_HAS_DRIVER(elf)

using namespace wavetile;

namespace {

std::mutex lldMutex;
bool lldBroken = false; // guarded by lldMutex

/// Writes `contents` to a new temporary file; its path goes to `path`.
bool writeTemporary(llvm::StringRef prefix, llvm::StringRef suffix, llvm::StringRef contents,
                    llvm::SmallVectorImpl<char> &path, std::string *error) {
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(prefix, suffix, fd, path)) {
    *error = "cannot create a temporary file: " + ec.message() + "\n";
    return false;
  }
  llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << contents;
  out.close();
  if (out.has_error()) {
    *error = "cannot write " + std::string(path.data(), path.size()) + ": " + out.error().message() + "\n";
    out.clear_error();
    return false;
  }
  return true;
}

} // namespace

mlir::FailureOr<std::string> wavetile::linkSharedObject(llvm::StringRef object, llvm::StringRef what,
                                                        std::string *error) {
  // Temporary files first (outside the lock); FileRemovers delete them on every path.
  llvm::SmallString<128> input, output;
  if (!writeTemporary("wavetile-kernel", "o", object, input, error))
    return mlir::failure();
  llvm::FileRemover removeInput(input);
  if (!writeTemporary("wavetile-kernel", "so", "", output, error))
    return mlir::failure();
  llvm::FileRemover removeOutput(output);

  const char *args[] = {"ld.lld", "-shared", "-o", output.c_str(), input.c_str()};

  std::string lldOutput;
  llvm::raw_string_ostream lldStdout(lldOutput), lldStderr(lldOutput);
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    if (lldBroken) {
      *error = "lld crashed earlier in this process and cannot be run again; restart the process\n";
      return mlir::failure();
    }
    static std::once_flag enableRecovery;
    std::call_once(enableRecovery, [] { llvm::CrashRecoveryContext::Enable(); });
    lld::Result result = lld::lldMain(args, lldStdout, lldStderr, {{lld::Gnu, &lld::elf::link}});
    if (!result.canRunAgain)
      lldBroken = true;
    if (result.retCode != 0) {
      *error = "lld failed to link the " + what.str() + " (exit code " + std::to_string(result.retCode) + ")" +
               (lldOutput.empty() ? std::string("\n") : ":\n" + lldOutput);
      if (!result.canRunAgain)
        *error += "lld cannot be run again in this process\n";
      return mlir::failure();
    }
  }

  auto buffer = llvm::MemoryBuffer::getFile(output, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    *error = "cannot read the linked " + what.str() + ": " + buffer.getError().message() + "\n";
    return mlir::failure();
  }
  return (*buffer)->getBuffer().str();
}

mlir::FailureOr<std::string> wavetile::linkAmdgpuObject(llvm::StringRef object, std::string *error) {
  auto linked = linkSharedObject(object, "AMDGPU code object", error);
  if (mlir::failed(linked))
    return mlir::failure();
  std::string hsaco = std::move(*linked);

  auto undefined = findUndefinedSymbols(hsaco, error);
  if (mlir::failed(undefined))
    return mlir::failure();
  if (!undefined->empty()) {
    bool deviceLib = llvm::any_of(*undefined, [](const std::string &name) {
      return llvm::StringRef(name).starts_with("__ocml_") || llvm::StringRef(name).starts_with("__ockl_");
    });
    *error = "the AMDGPU code object has unresolved symbols: " + llvm::join(*undefined, ", ") +
             (deviceLib ? " (ROCm device-library functions; they are not linked: lower to native intrinsics)" : "") +
             "; it links but would not load\n";
    return mlir::failure();
  }
  return hsaco;
}

mlir::FailureOr<std::vector<std::string>> wavetile::findUndefinedSymbols(llvm::StringRef elf, std::string *error) {
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(elf, "code object"));
  if (!object) {
    *error = "not a readable object file: " + llvm::toString(object.takeError()) + "\n";
    return mlir::failure();
  }
  auto *elfObject = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
  if (!elfObject) {
    *error = "not an ELF file\n";
    return mlir::failure();
  }
  std::vector<std::string> names;
  auto collect = [&](auto symbols) -> bool {
    for (const llvm::object::SymbolRef &symbol : symbols) {
      auto flags = symbol.getFlags();
      if (!flags) {
        *error = "corrupt symbol table: " + llvm::toString(flags.takeError()) + "\n";
        return false;
      }
      auto name = symbol.getName();
      if (!name) {
        *error = "corrupt symbol table: " + llvm::toString(name.takeError()) + "\n";
        return false;
      }
      if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty() &&
          !llvm::is_contained(names, name->str()))
        names.push_back(name->str());
    }
    return true;
  };
  if (!collect(elfObject->getDynamicSymbolIterators()) || !collect(elfObject->symbols()))
    return mlir::failure();
  llvm::sort(names);
  return names;
}
