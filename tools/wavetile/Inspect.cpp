//===- Inspect.cpp - `wavetile inspect`: resources of a code object -------===//
//
//   wavetile inspect FILE [--json]
//
// FILE is an AMDGPU code object (hsaco) or a PTX file.
//
// hsaco: per kernel, from the AMDGPU HSA metadata note (msgpack map
// "amdhsa.kernels", read with LLVM's object and msgpack libraries): VGPRs,
// AGPRs, SGPRs, LDS, scratch, spills, wave size, maximum workgroup size; the
// occupancy in waves per SIMD (wavetile/Target/GPUTargets.h has the arithmetic
// and its sources); and a histogram of the instructions that matter for
// performance, from disassembling the kernel's code in-process with the MC
// disassembler for the code object's processor.
//
// PTX: per kernel, registers / shared memory / spills from `ptxas -v` when
// ptxas is installed (an optional checker, the one subprocess Wavetile runs;
// compilation never needs it), and a histogram of PTX instructions.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Target/GPUCodegen.h"
#include "wavetile/Target/GPUTargets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace wavetile;

namespace {

using Histogram = std::map<std::string, int64_t>;

struct KernelReport {
  std::string name;
  /// Resource fields in report order: (key, value). Keys are the metadata names
  /// without the leading dot (hsaco) or ptxas quantities (PTX).
  std::vector<std::pair<std::string, int64_t>> fields;
  std::optional<Occupancy> occupancy;
  std::optional<int64_t> totalInstructions;
  Histogram histogram;
  /// The histogram's instructions that lie in a loop: between a backward branch and its
  /// target (a GEMM's K loop holds its matrix instructions).
  Histogram loopHistogram;
};

/// Counts each of `names` (one per instruction, empty where the histogram skips it) that lies
/// in a loop, given the loops as [first, last] instruction indices.
void countInLoops(const std::vector<std::string> &names, const std::vector<std::pair<size_t, size_t>> &loops,
                  Histogram &loopHistogram) {
  std::vector<bool> inLoop(names.size(), false);
  for (auto [first, last] : loops)
    for (size_t i = first; i <= last && i < names.size(); ++i)
      inLoop[i] = true;
  for (size_t i = 0; i < names.size(); ++i)
    if (inLoop[i] && !names[i].empty())
      ++loopHistogram[names[i]];
}

struct FileReport {
  std::string path;
  std::string format; // "hsaco" or "ptx"
  std::string target; // amdhsa.target or the PTX .target
  std::string chip;
  std::optional<int64_t> codeObjectVersion;
  std::vector<KernelReport> kernels;
  std::vector<std::string> notes;
};

struct InspectError {
  std::string message;
};

//===----------------------------------------------------------------------===//
// AMDGPU code objects
//===----------------------------------------------------------------------===//

/// Instruction families the histogram keeps, by mnemonic prefix.
bool interestingAmdMnemonic(llvm::StringRef m) {
  static const char *kPrefixes[] = {"v_mfma",      "v_smfmac",     "buffer_load_", "buffer_store_", "global_load",
                                    "global_store", "flat_",        "ds_read",      "ds_write",      "ds_load",
                                    "ds_store",     "scratch_",     "s_waitcnt",    "s_barrier"};
  return llvm::any_of(kPrefixes, [&](const char *p) { return m.starts_with(p); });
}

std::optional<int64_t> integerOf(llvm::msgpack::DocNode &node) {
  if (node.getKind() == llvm::msgpack::Type::UInt)
    return int64_t(node.getUInt());
  if (node.getKind() == llvm::msgpack::Type::Int)
    return node.getInt();
  return std::nullopt;
}

/// Disassembles [begin, end) of `code` (loaded at `address`) and counts
/// mnemonics. Returns the total instruction count.
struct AmdDisassembler {
  llvm::Triple triple{"amdgcn-amd-amdhsa"};
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;

  std::optional<std::string> init(llvm::StringRef cpu) {
    initializeGpuLLVMTargets();
    std::string error;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return "no AMDGPU backend in this LLVM: " + error;
    llvm::MCTargetOptions options;
    registers.reset(target->createMCRegInfo(triple));
    asmInfo.reset(registers ? target->createMCAsmInfo(*registers, triple, options) : nullptr);
    subtarget.reset(target->createMCSubtargetInfo(triple, cpu, ""));
    instrInfo.reset(target->createMCInstrInfo());
    if (!registers || !asmInfo || !subtarget || !instrInfo)
      return "cannot set up the AMDGPU disassembler";
    if (!subtarget->isCPUStringValid(cpu))
      return "this LLVM does not know the processor '" + cpu.str() + "'";
    context = std::make_unique<llvm::MCContext>(triple, asmInfo.get(), registers.get(), subtarget.get());
    disassembler.reset(target->createMCDisassembler(*subtarget, *context));
    printer.reset(target->createMCInstPrinter(triple, asmInfo->getAssemblerDialect(), *asmInfo, *instrInfo,
                                              *registers));
    analysis.reset(target->createMCInstrAnalysis(instrInfo.get()));
    if (!disassembler || !printer || !analysis)
      return "cannot set up the AMDGPU disassembler";
    return std::nullopt;
  }

  int64_t count(llvm::ArrayRef<uint8_t> code, uint64_t address, Histogram &histogram, Histogram &loopHistogram) {
    int64_t total = 0;
    uint64_t offset = 0;
    std::vector<std::string> names;             // per instruction
    std::vector<uint64_t> addresses;            // per instruction
    std::vector<std::pair<uint64_t, uint64_t>> backward; // (target, branch) addresses
    while (offset < code.size()) {
      llvm::MCInst inst;
      uint64_t size = 0;
      auto status = disassembler->getInstruction(inst, size, code.slice(offset), address + offset, llvm::nulls());
      if (status != llvm::MCDisassembler::Success || size == 0) {
        offset += 4; // AMDGPU instructions are multiples of 4 bytes
        continue;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      printer->printInst(&inst, address + offset, "", *subtarget, os);
      llvm::StringRef mnemonic = llvm::StringRef(text).ltrim().split(' ').first.split('\t').first;
      ++total;
      // A buffer load with the lds modifier writes LDS directly (load-to-LDS): counted apart.
      bool toLds = mnemonic.starts_with("buffer_load") && llvm::StringRef(text).rtrim().ends_with(" lds");
      names.emplace_back(interestingAmdMnemonic(mnemonic) ? (toLds ? mnemonic.str() + "_lds" : mnemonic.str()) : "");
      if (!names.back().empty())
        ++histogram[names.back()];
      addresses.push_back(address + offset);
      uint64_t target;
      if (analysis->isBranch(inst) && analysis->evaluateBranch(inst, address + offset, size, target) &&
          target <= address + offset)
        backward.emplace_back(target, address + offset);
      offset += size;
    }
    std::vector<std::pair<size_t, size_t>> loops;
    for (auto [target, branch] : backward)
      loops.emplace_back(size_t(llvm::lower_bound(addresses, target) - addresses.begin()),
                         size_t(llvm::lower_bound(addresses, branch) - addresses.begin()));
    countInLoops(names, loops, loopHistogram);
    return total;
  }
};

/// Reads the first AMDGPU metadata note into `doc`; `count` is the number of
/// such notes (a code object should have one: loaders read one). Notes are
/// looked up through the PT_NOTE segments, or the SHT_NOTE sections when the
/// file has no program headers.
template <class ELFT>
std::optional<InspectError> readAmdMetadata(const llvm::object::ELFFile<ELFT> &elf, llvm::msgpack::Document &doc,
                                            int &count) {
  auto visit = [&](auto notes, uint64_t align) -> std::optional<InspectError> {
    for (const auto &note : notes) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      if (count++ == 0 && !doc.readFromBlob(note.getDescAsStringRef(align), /*Multi=*/false))
        return InspectError{"the AMDGPU metadata note is not valid msgpack"};
    }
    return std::nullopt;
  };
  auto headers = elf.program_headers();
  if (!headers)
    return InspectError{"corrupt program headers: " + llvm::toString(headers.takeError())};
  for (const auto &phdr : *headers) {
    if (phdr.p_type != llvm::ELF::PT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    auto notes = elf.notes(phdr, err);
    auto result = visit(notes, std::max<uint64_t>(phdr.p_align, 4));
    if (err)
      return InspectError{"corrupt note segment: " + llvm::toString(std::move(err))};
    if (result)
      return result;
  }
  if (!headers->empty())
    return std::nullopt;
  auto sections = elf.sections();
  if (!sections)
    return InspectError{"corrupt section headers: " + llvm::toString(sections.takeError())};
  for (const auto &shdr : *sections) {
    if (shdr.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    auto notes = elf.notes(shdr, err);
    auto result = visit(notes, std::max<uint64_t>(shdr.sh_addralign, 4));
    if (err)
      return InspectError{"corrupt note section: " + llvm::toString(std::move(err))};
    if (result)
      return result;
  }
  return std::nullopt;
}

std::optional<InspectError> inspectHsaco(llvm::MemoryBufferRef buffer, FileReport &report) {
  report.format = "hsaco";
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object)
    return InspectError{"not a readable ELF file: " + llvm::toString(object.takeError())};
  auto *elfObject = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  if (!elfObject || elfObject->getELFFile().getHeader().e_machine != llvm::ELF::EM_AMDGPU)
    return InspectError{"not an AMDGPU code object (expected a 64-bit little-endian ELF for EM_AMDGPU)"};
  const auto &elf = elfObject->getELFFile();
  if (elf.getHeader().e_ident[llvm::ELF::EI_OSABI] == llvm::ELF::ELFOSABI_AMDGPU_HSA) {
    uint8_t abi = elf.getHeader().e_ident[llvm::ELF::EI_ABIVERSION];
    if (abi >= llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V2)
      report.codeObjectVersion = int64_t(abi) + 2; // V2 is 0, ..., V5 is 3, V6 is 4
  }
  if (auto cpu = elfObject->tryGetCPUName())
    report.chip = cpu->str();

  llvm::msgpack::Document doc;
  int noteCount = 0;
  if (auto error = readAmdMetadata(elf, doc, noteCount))
    return error;
  if (noteCount == 0)
    return InspectError{"no AMDGPU HSA metadata note (NT_AMDGPU_METADATA) in the code object"};
  if (noteCount > 1)
    report.notes.push_back(std::to_string(noteCount) +
                           " AMDGPU metadata notes (loaders read one); only the first is reported");
  if (!doc.getRoot().isMap())
    return InspectError{"the AMDGPU metadata is not a map"};
  auto &root = doc.getRoot().getMap();
  if (auto it = root.find("amdhsa.target"); it != root.end() && it->second.isString())
    report.target = it->second.getString().str();
  auto kernelsIt = root.find("amdhsa.kernels");
  if (kernelsIt == root.end() || !kernelsIt->second.isArray())
    return InspectError{"the AMDGPU metadata has no amdhsa.kernels array"};

  std::optional<GpuTarget> target = lookupGpuTarget(report.chip);
  if (!target)
    report.notes.push_back("processor '" + report.chip + "' is not a Wavetile target (" + gpuTargetNameList() +
                           "); occupancy not computed");

  // Kernel code ranges from the symbol table.
  std::map<std::string, std::pair<uint64_t, uint64_t>> functionRanges;
  for (const llvm::object::ELFSymbolRef &symbol : elfObject->symbols()) {
    if (symbol.getELFType() != llvm::ELF::STT_FUNC)
      continue;
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    if (!name || !address) {
      if (!name)
        llvm::consumeError(name.takeError());
      if (!address)
        llvm::consumeError(address.takeError());
      continue;
    }
    functionRanges[name->str()] = {*address, symbol.getSize()};
  }
  std::optional<llvm::object::SectionRef> text;
  for (const llvm::object::SectionRef &section : elfObject->sections())
    if (auto name = section.getName(); name && *name == ".text")
      text = section;
    else if (!name)
      llvm::consumeError(name.takeError());
  llvm::ArrayRef<uint8_t> textBytes;
  uint64_t textAddress = 0;
  if (text) {
    auto contents = text->getContents();
    if (!contents)
      return InspectError{"cannot read .text: " + llvm::toString(contents.takeError())};
    textBytes = llvm::arrayRefFromStringRef(*contents);
    textAddress = text->getAddress();
  }
  AmdDisassembler disassembler;
  std::optional<std::string> disassemblerError =
      report.chip.empty() ? std::optional<std::string>("the code object names no processor")
                          : disassembler.init(report.chip);
  if (disassemblerError)
    report.notes.push_back("no instruction histogram: " + *disassemblerError);

  for (llvm::msgpack::DocNode &kernelNode : kernelsIt->second.getArray()) {
    if (!kernelNode.isMap())
      return InspectError{"an amdhsa.kernels entry is not a map"};
    auto &kernel = kernelNode.getMap();
    KernelReport k;
    auto str = [&](llvm::StringRef key) -> std::string {
      auto it = kernel.find(key);
      return it != kernel.end() && it->second.isString() ? it->second.getString().str() : std::string();
    };
    k.name = str(".name");
    std::string symbol = str(".symbol");
    auto get = [&](llvm::StringRef key) -> int64_t {
      auto it = kernel.find(key);
      if (it == kernel.end())
        return 0; // absent means 0 (e.g. .agpr_count on targets without AGPRs)
      return integerOf(it->second).value_or(0);
    };
    static const char *kFields[] = {".vgpr_count",        ".agpr_count",
                                    ".sgpr_count",        ".group_segment_fixed_size",
                                    ".private_segment_fixed_size", ".vgpr_spill_count",
                                    ".sgpr_spill_count",  ".wavefront_size",
                                    ".max_flat_workgroup_size", ".kernarg_segment_size"};
    std::map<std::string, int64_t> values;
    for (const char *key : kFields) {
      values[key] = get(key);
      k.fields.emplace_back(llvm::StringRef(key).drop_front().str(), values[key]);
    }
    if (auto it = kernel.find(".uses_dynamic_stack"); it != kernel.end() &&
                                                       it->second.getKind() == llvm::msgpack::Type::Boolean)
      k.fields.emplace_back("uses_dynamic_stack", it->second.getBool() ? 1 : 0);
    if (target)
      // .vgpr_count is already the unified arch+acc count on gfx90a and later
      // (alignUp(arch, 4) + agpr; see unifiedVgprCount), so it is used as is.
      k.occupancy = computeOccupancy(*target, int(values[".vgpr_count"]), int(values[".sgpr_count"]),
                                     int(values[".group_segment_fixed_size"]),
                                     int(values[".max_flat_workgroup_size"]));
    if (!disassemblerError && !textBytes.empty()) {
      auto range = functionRanges.find(symbol.empty() ? k.name : symbol);
      if (symbol.size() > 3 && range == functionRanges.end())
        range = functionRanges.find(llvm::StringRef(symbol).drop_back(3).str()); // "name.kd" -> "name"
      if (range != functionRanges.end() && range->second.first >= textAddress &&
          range->second.first + range->second.second <= textAddress + textBytes.size() && range->second.second > 0) {
        uint64_t begin = range->second.first - textAddress;
        k.totalInstructions = disassembler.count(textBytes.slice(begin, range->second.second), range->second.first,
                                                 k.histogram, k.loopHistogram);
      }
    }
    report.kernels.push_back(std::move(k));
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// PTX
//===----------------------------------------------------------------------===//

bool interestingPtxOpcode(llvm::StringRef op) {
  static const char *kPrefixes[] = {"mma.", "wgmma.", "ldmatrix", "stmatrix", "ld.global", "st.global",
                                    "ld.shared", "st.shared", "ld.local", "st.local", "cp.async", "bar.",
                                    "barrier.", "atom.", "red.", "shfl."};
  return llvm::any_of(kPrefixes, [&](const char *p) { return op.starts_with(p); });
}

/// A kernel's PTX statements as far as loops go: the histogram's name of each (empty where it
/// skips it), where each label points, and the loops (backward branches) found so far.
struct PtxBody {
  std::vector<std::string> names;
  std::map<std::string, size_t, std::less<>> labels;
  std::vector<std::pair<size_t, size_t>> loops;
};

/// Counts one PTX statement (an instruction, possibly predicated) of `kernel`; register
/// declarations and other directives do not count.
void countPtxStatement(llvm::StringRef line, KernelReport &kernel, PtxBody &body) {
  if (line.empty() || line.starts_with("."))
    return;
  if (line.starts_with("@")) // predicate guard
    line = line.split(' ').second.ltrim();
  llvm::StringRef op = line.take_until([](char c) { return c == ' ' || c == '\t' || c == ';'; });
  if (op.empty())
    return;
  ++*kernel.totalInstructions;
  body.names.emplace_back(interestingPtxOpcode(op) ? op.str() : "");
  if (!body.names.back().empty())
    ++kernel.histogram[op.str()];
  if (op == "bra" || op.starts_with("bra.")) {
    llvm::StringRef label = line.drop_front(op.size()).trim().rtrim(';').trim();
    if (auto it = body.labels.find(label); it != body.labels.end())
      body.loops.emplace_back(it->second, body.names.size() - 1);
  }
}

std::optional<std::string> findPtxas() {
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

/// Runs `ptxas -v` and fills per-kernel resources. Returns an error when ptxas
/// rejects the file.
std::optional<InspectError> runPtxas(const std::string &ptxas, const std::string &path, const std::string &arch,
                                     FileReport &report) {
  llvm::SmallString<128> log, cubin;
  int fd = -1;
  if (llvm::sys::fs::createTemporaryFile("wavetile-ptxas", "log", fd, log))
    return InspectError{"cannot create a temporary file for ptxas"};
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeLog(log);
  if (llvm::sys::fs::createTemporaryFile("wavetile-ptxas", "cubin", fd, cubin))
    return InspectError{"cannot create a temporary file for ptxas"};
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover removeCubin(cubin);
  std::string archArg = "-arch=" + arch;
  llvm::SmallVector<llvm::StringRef> args = {ptxas, "-v", archArg, "-o", cubin, path};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, /*SecondsToWait=*/120, 0, &execError);
  auto logBuffer = llvm::MemoryBuffer::getFile(log);
  std::string output = logBuffer ? (*logBuffer)->getBuffer().str() : std::string();
  if (rc != 0)
    return InspectError{"ptxas -arch=" + arch + " rejected the file" + (execError.empty() ? "" : " (" + execError + ")") +
                        ":\n" + output};

  llvm::Regex entry("Compiling entry function '([^']+)'");
  llvm::Regex properties("Function properties for ([^ ]+)");
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex used("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  std::map<std::string, std::map<std::string, int64_t>> byKernel;
  std::string current, propertiesOf;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(output).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (entry.match(line, &m)) {
      current = m[1].str();
      byKernel[current];
    } else if (properties.match(line, &m)) {
      propertiesOf = m[1].str();
    } else if (frame.match(line, &m) && byKernel.count(propertiesOf)) {
      auto &k = byKernel[propertiesOf];
      k["stack_frame_bytes"] = std::stoll(m[1].str());
      k["spill_store_bytes"] = std::stoll(m[2].str());
      k["spill_load_bytes"] = std::stoll(m[3].str());
    } else if (used.match(line, &m) && !current.empty()) {
      auto &k = byKernel[current];
      k["registers"] = std::stoll(m[1].str());
      llvm::SmallVector<llvm::StringRef> s;
      k["shared_bytes"] = smem.match(line, &s) ? std::stoll(s[1].str()) : 0;
    }
  }
  std::optional<GpuTarget> target = lookupGpuTarget(arch);
  for (KernelReport &k : report.kernels) {
    auto it = byKernel.find(k.name);
    if (it == byKernel.end())
      continue;
    for (const char *key : {"registers", "shared_bytes", "spill_store_bytes", "spill_load_bytes", "stack_frame_bytes"})
      k.fields.emplace_back(key, it->second.count(key) ? it->second[key] : 0);
    if (target) {
      // Registers only: 512 per lane of a warp slot per SM sub-partition, like a
      // CDNA SIMD (GPUTargets.cpp). Shared memory needs the launch's block size,
      // which PTX does not always carry, so it is not modelled (-1: omitted).
      Occupancy o;
      o.byVgprs = wavesPerSimdFromVgprs(*target, int(it->second["registers"]));
      o.bySgprs = -1;
      o.byLds = -1;
      o.wavesPerSimd = o.byVgprs;
      o.limitedBy = o.byVgprs == target->maxWavesPerSimd ? "none" : "vgprs";
      k.occupancy = o;
    }
  }
  return std::nullopt;
}

std::optional<InspectError> inspectPtx(llvm::StringRef text, const std::string &path, FileReport &report) {
  report.format = "ptx";
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  KernelReport *current = nullptr;
  KernelReport helpers; // .func bodies: counted, not reported
  helpers.totalInstructions = 0;
  std::map<size_t, PtxBody> bodies; // by kernel index (map nodes stay put)
  PtxBody helperBody, *body = nullptr;
  llvm::Regex entry("\\.entry[ \t]+([A-Za-z_$.][A-Za-z0-9_$.]*)");
  llvm::Regex func("\\.func[ \t]+(\\([^)]*\\)[ \t]*)?([A-Za-z_$.][A-Za-z0-9_$.]*)");
  for (llvm::StringRef raw : lines) {
    llvm::StringRef line = raw.trim();
    if (line.starts_with(".target")) {
      report.target = line.drop_front(7).trim().split(',').first.trim().rtrim(';').str();
      report.chip = report.target;
      continue;
    }
    llvm::SmallVector<llvm::StringRef> m;
    if (!line.starts_with(".extern") && entry.match(line, &m)) {
      report.kernels.push_back(KernelReport{m[1].str(), {}, std::nullopt, 0, {}, {}});
      current = &report.kernels.back();
      body = &bodies[report.kernels.size() - 1];
      continue;
    }
    if (!line.starts_with(".extern") && func.match(line, &m)) {
      current = &helpers;
      body = &helperBody;
      continue;
    }
    // Inline assembly puts a whole { ...; ...; } block on one line: count each statement.
    if (current && line.starts_with("{") && line.ends_with("}")) {
      llvm::SmallVector<llvm::StringRef> statements;
      line.drop_front().drop_back().split(statements, ';', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef statement : statements)
        countPtxStatement(statement.trim(), *current, *body);
      continue;
    }
    if (current && line.ends_with(":") && !line.starts_with("//")) { // a label: the next statement's
      body->labels[line.drop_back().trim().str()] = body->names.size();
      continue;
    }
    if (!current || line.empty() || line.starts_with("//") || line.starts_with(".") ||
        line.starts_with("{") || line.starts_with("}") || line.starts_with("(") || line.starts_with(")") ||
        line.starts_with(","))
      continue;
    countPtxStatement(line, *current, *body);
  }
  for (auto &[index, kernelBody] : bodies)
    countInLoops(kernelBody.names, kernelBody.loops, report.kernels[index].loopHistogram);
  if (report.target.empty() || !text.contains(".version"))
    return InspectError{"not a PTX file (no .version / .target directives)"};
  if (auto ptxas = findPtxas()) {
    if (auto error = runPtxas(*ptxas, path, report.target, report))
      return error;
  } else {
    report.notes.push_back("ptxas not found (PATH, /usr/local/cuda/bin); no register or shared-memory report");
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// JSON with the keys in report order (json::OStream keeps attribute order;
/// a json::Object would sort them): each kernel object starts with "name".
void printJson(const FileReport &report, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, /*IndentSize=*/2);
  j.object([&] {
    j.attribute("file", report.path);
    j.attribute("format", report.format);
    j.attribute("target", report.target);
    j.attribute("chip", report.chip);
    if (report.codeObjectVersion)
      j.attribute("code_object_version", *report.codeObjectVersion);
    j.attributeArray("notes", [&] {
      for (const std::string &note : report.notes)
        j.value(note);
    });
    j.attributeArray("kernels", [&] {
      for (const KernelReport &k : report.kernels) {
        j.object([&] {
          j.attribute("name", k.name);
          for (const auto &[key, value] : k.fields)
            j.attribute(key, value);
          if (k.occupancy && report.format == "hsaco")
            j.attributeObject("occupancy", [&] {
              j.attribute("waves_per_simd", k.occupancy->wavesPerSimd);
              j.attribute("by_vgprs", k.occupancy->byVgprs);
              j.attribute("by_sgprs", k.occupancy->bySgprs);
              j.attribute("by_lds", k.occupancy->byLds);
              j.attribute("limited_by", k.occupancy->limitedBy);
            });
          else if (k.occupancy)
            j.attributeObject("occupancy", [&] {
              j.attribute("warps_per_sm_subpartition_by_registers", k.occupancy->byVgprs);
            });
          if (k.totalInstructions)
            j.attributeObject("instructions", [&] {
              j.attribute("total", *k.totalInstructions);
              j.attributeObject("histogram", [&] {
                for (const auto &[name, count] : k.histogram)
                  j.attribute(name, count);
              });
              j.attributeObject("in_loops", [&] {
                for (const auto &[name, count] : k.loopHistogram)
                  j.attribute(name, count);
              });
            });
        });
      }
    });
  });
  os << "\n";
}

void printText(const FileReport &report, llvm::raw_ostream &os) {
  os << report.path << ": " << (report.format == "hsaco" ? "AMDGPU code object" : "PTX");
  if (!report.target.empty())
    os << ", target " << report.target;
  if (report.codeObjectVersion)
    os << ", code object v" << *report.codeObjectVersion;
  os << "\n";
  for (const std::string &note : report.notes)
    os << "note: " << note << "\n";
  for (const KernelReport &k : report.kernels) {
    os << "kernel " << k.name << "\n";
    if (!k.fields.empty()) {
      os << " ";
      for (const auto &[key, value] : k.fields)
        os << " " << key << "=" << value;
      os << "\n";
    }
    if (k.occupancy && report.format == "hsaco")
      os << "  occupancy " << k.occupancy->wavesPerSimd << " waves/SIMD (vgprs " << k.occupancy->byVgprs << ", sgprs "
         << k.occupancy->bySgprs << ", lds " << k.occupancy->byLds << "; limited by " << k.occupancy->limitedBy << ")\n";
    else if (k.occupancy)
      os << "  occupancy by registers " << k.occupancy->byVgprs << " warps per SM sub-partition\n";
    if (k.totalInstructions) {
      os << "  instructions " << *k.totalInstructions;
      for (const auto &[name, count] : k.histogram)
        os << "  " << name << "=" << count;
      os << "\n";
    }
    if (!k.loopHistogram.empty()) {
      os << "  in loops";
      for (const auto &[name, count] : k.loopHistogram)
        os << "  " << name << "=" << count;
      os << "\n";
    }
  }
}

} // namespace

namespace wavetile::tool {

std::string summarizeCodeObject(const std::string &bytes, bool ptx) {
  FileReport report;
  std::optional<InspectError> error;
  std::string path;
  if (ptx) {
    // ptxas reads files: the text goes through a temporary one.
    llvm::SmallString<128> temp;
    int fd;
    if (llvm::sys::fs::createTemporaryFile("wavetile-demo", "ptx", fd, temp))
      return "cannot write a temporary file for ptxas";
    llvm::FileRemover remover(temp);
    {
      llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
      out << bytes;
    }
    error = inspectPtx(bytes, std::string(temp), report);
  } else {
    error = inspectHsaco(llvm::MemoryBufferRef(bytes, "code object"), report);
  }
  if (error)
    return "inspect failed: " + error->message;
  std::string line;
  for (const KernelReport &k : report.kernels) {
    for (const auto &[key, value] : k.fields)
      if (llvm::is_contained({"vgpr_count", "agpr_count", "sgpr_count", "group_segment_fixed_size",
                              "private_segment_fixed_size", "vgpr_spill_count", "registers", "shared_bytes",
                              "spill_store_bytes"},
                             key))
        line += key + "=" + std::to_string(value) + " ";
    if (k.occupancy && !ptx)
      line += "waves/SIMD=" + std::to_string(k.occupancy->wavesPerSimd) + " ";
    int64_t wide = 0, mfma = 0;
    for (const auto &[name, count] : k.histogram) {
      wide += llvm::StringRef(name).contains("x4") || llvm::StringRef(name).contains(".v4") ? count : 0;
      mfma += llvm::StringRef(name).starts_with("v_mfma") || llvm::StringRef(name).starts_with("mma") ? count : 0;
    }
    line += "128-bit-global=" + std::to_string(wide) + " mma=" + std::to_string(mfma);
  }
  return line;
}

int inspectCommand(const std::vector<std::string> &files, bool json) {
  if (files.size() != 1) {
    std::fprintf(stderr, "wavetile: error: inspect needs exactly one file (an hsaco or a .ptx)\n");
    return 2;
  }
  const std::string &path = files[0];
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::fprintf(stderr, "wavetile: error: cannot read '%s': %s\n", path.c_str(), buffer.getError().message().c_str());
    return 1;
  }
  FileReport report;
  report.path = path;
  llvm::StringRef contents = (*buffer)->getBuffer();
  std::optional<InspectError> error;
  if (contents.starts_with("\x7f"
                           "ELF"))
    error = inspectHsaco((*buffer)->getMemBufferRef(), report);
  else if (contents.contains(".version") && contents.contains(".target"))
    error = inspectPtx(contents, path, report);
  else
    error = InspectError{"neither an AMDGPU code object (ELF) nor a PTX file"};
  if (error) {
    std::fprintf(stderr, "wavetile: error: %s: %s\n", path.c_str(), error->message.c_str());
    return 1;
  }
  if (json)
    printJson(report, llvm::outs());
  else
    printText(report, llvm::outs());
  llvm::outs().flush();
  return 0;
}

} // namespace wavetile::tool
