//===- wavetile.cpp - the command-line driver -----------------------------===//
//
//   wavetile list
//   wavetile compile (FILE.mlir | --example NAME | --op SPEC) [--target host] [--emit tile|llvm|llvm-ir] [-o FILE]
//   wavetile compile FILE.mlir --target gfx942|gfx950|sm_90|sm_90a [--emit hsaco|asm|ptx|llvm] [-o FILE]
//   wavetile inspect FILE [--json]
//   wavetile run NAME [--shape 3,127] [--seed N]
//   wavetile demo
//
//===----------------------------------------------------------------------===//

#include "Examples.h"
#include "wavetile/ops/Catalog.h"

#include "wavetile/Compiler.h"
#include "wavetile/Emulator.h"
#include "wavetile/Jit.h"
#include "wavetile/Target/GPUTargets.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace wavetile;
using namespace wavetile::examples;

namespace wavetile::tool {
int inspectCommand(const std::vector<std::string> &files, bool json); // Inspect.cpp
int tuneCommand(const std::map<std::string, std::string> &values, bool bias); // Tune.cpp
/// One line of resources and wide-access/MMA counts for an in-memory hsaco or PTX text.
std::string summarizeCodeObject(const std::string &bytes, bool ptx); // Inspect.cpp
}

namespace {

/// Column width of example names in the list and demo tables.
constexpr int kNameWidth = 16;

const char *kUsage =
    "usage: wavetile <command> [options]\n"
    "  list                                   list the example kernels\n"
    "  compile FILE.mlir | --example NAME | --op SPEC\n"
    "                                         compile tile IR, an example, or a library op kernel\n"
    "                                         (SPEC: OP:DTYPE:HIDDEN[:FLAG...], e.g.\n"
    "                                         rmsnorm2d_fwd_with_add:bf16:7168:gemma)\n"
    "      --target T     host (default), gfx942, gfx950, sm_90, sm_90a. For GPU targets tile\n"
    "                     kernels are laid out, distributed and lowered; gpu.modules already in\n"
    "                     the LLVM dialect (+ rocdl / nvvm) compile as they are\n"
    "      --emit E       host: tile (verified tile IR) | llvm (MLIR LLVM dialect) | llvm-ir (default)\n"
    "                     GPU:  llvm / llvm-ir (LLVM IR after O3) | asm (AMDGPU assembly or PTX)\n"
    "                           | hsaco (AMD code object, default for gfx*) | ptx (default for sm_*)\n"
    "      -o FILE        write the output to FILE instead of stdout\n"
    "      --manifest FILE  with hsaco / ptx: also write the kernels' launch manifest (what the\n"
    "                     runtime loads the code object with)\n"
    "  jit FILE.mlir | --example NAME --target T [-o FILE] [--manifest FILE]\n"
    "                                         compile for host or a GPU target through the cache and\n"
    "                                         say where the code object came from and how long it\n"
    "                                         took (WAVETILE_CACHE_DIR, WAVETILE_CACHE=0,\n"
    "                                         WAVETILE_DUMP_IR=DIR)\n"
    "  tune --op gemm_a16w16|gemm_a8w8|gemm_a8w8_blockscale|gemm_a4w4 --shapes M:N:K[,..] [--dtype D]\n"
    "       [--out-dtype D] [--bias] [--device host|gpu] -o TABLE.csv\n"
    "                                         sweep configurations on this device, check each against a\n"
    "                                         reference, time the correct ones, write the fastest per shape\n"
    "  inspect FILE [--json]                  registers, LDS, spills, occupancy and an instruction\n"
    "                                         histogram of an hsaco or a PTX file\n"
    "  run NAME [--shape D0,D1,..] [--seed S] [--save DIR] [--target T --emulate]\n"
    "                                         run an example on the host against its reference;\n"
    "                                         --save writes the launch and its outputs to DIR\n"
    "                                         (the emulator's with --emulate);\n"
    "                                         --target T --emulate compiles it for GPU target T\n"
    "                                         (gfx942, gfx950, sm_90, sm_90a) and runs the\n"
    "                                         per-thread code lane by lane (docs/emulator.md)\n"
    "  demo                                   check every example on the host and compile it for\n"
    "                                         every GPU target, with its resources\n";

int usageError(const std::string &message) {
  std::cerr << "wavetile: error: " << message << "\n" << kUsage;
  return 2;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Options {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  std::set<std::string> flags;
};

std::optional<Options> parseOptions(int argc, char **argv, int first, std::string *error) {
  Options options;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--target" || arg == "--emit" || arg == "-o" || arg == "--example" || arg == "--op" ||
        arg == "--shape" || arg == "--seed" || arg == "--save" || arg == "--manifest" || arg == "--shapes" ||
        arg == "--dtype" || arg == "--out-dtype" || arg == "--device") {
      if (i + 1 >= argc) {
        *error = "option " + arg + " needs a value";
        return std::nullopt;
      }
      options.values[arg] = argv[++i];
    } else if (arg == "--json" || arg == "--bias" || arg == "--emulate") {
      options.flags.insert(arg);
    } else if (arg.rfind("-", 0) == 0) {
      *error = "unknown option " + arg;
      return std::nullopt;
    } else {
      options.positional.push_back(arg);
    }
  }
  return options;
}

std::unique_ptr<Module> loadModule(const Options &options, std::string *error) {
  if (options.values.count("--example")) {
    const Example *example = findExample(options.values.at("--example"));
    if (!example) {
      *error = "no example named '" + options.values.at("--example") + "' (see wavetile list)";
      return nullptr;
    }
    return example->build(error);
  }
  if (options.values.count("--op"))
    return ops::buildOpKernel(options.values.at("--op"),
                              options.values.count("--target") ? options.values.at("--target") : "host", error);
  if (options.positional.size() != 1) {
    *error = "compile needs exactly one input file, --example NAME or --op SPEC";
    return nullptr;
  }
  const std::string &path = options.positional[0];
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read '" + path + "'";
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto module = Module::parse(text.str(), path, error);
  if (module && !module->verify(error))
    return nullptr;
  return module;
}

/// Writes `text` to the file given as `option`.
bool writeFile(const Options &options, const std::string &option, const std::string &text) {
  std::ofstream out(options.values.at(option), std::ios::binary);
  out << text;
  if (!out)
    std::cerr << "wavetile: error: cannot write '" << options.values.at(option) << "'\n";
  return bool(out);
}

/// Writes `output` to -o FILE or stdout.
int writeOutput(const Options &options, const std::string &output) {
  if (options.values.count("-o")) {
    if (!writeFile(options, "-o", output))
      return 1;
  } else {
    std::cout << output;
  }
  return 0;
}

/// Prints a compiler message; messages without a "file:line:col: error:" prefix get "wavetile: error: ".
void printError(const std::string &error) {
  std::string firstLine = error.substr(0, error.find('\n'));
  if (firstLine.find(": error:") == std::string::npos)
    std::cerr << "wavetile: error: ";
  std::cerr << error;
  if (!error.empty() && error.back() != '\n')
    std::cerr << "\n";
}

/// compile --target <GPU>: tile kernels (and pre-lowered gpu.modules) to LLVM IR, assembly, hsaco or PTX.
int compileForGpu(const Options &options, const GpuTarget &target) {
  std::string emit = options.values.count("--emit") ? options.values.at("--emit") : (target.isAMD() ? "hsaco" : "ptx");
  GpuEmit kind;
  if (emit == "llvm" || emit == "llvm-ir")
    kind = GpuEmit::LLVMIR;
  else if (emit == "asm")
    kind = GpuEmit::Assembly;
  else if (emit == "hsaco" && target.isAMD())
    kind = GpuEmit::Binary;
  else if (emit == "ptx" && target.isNVIDIA())
    kind = GpuEmit::Binary;
  else if (emit == "tile")
    kind = GpuEmit::LLVMIR; // handled below, before any code generation
  else
    return usageError("--emit '" + emit + "' does not apply to target '" + std::string(target.name) + "'; use " +
                      (target.isAMD() ? "hsaco, asm or llvm" : "ptx, asm or llvm"));
  std::string error;
  auto module = loadModule(options, &error);
  if (!module) {
    printError(error);
    return 1;
  }
  if (emit == "tile")
    return writeOutput(options, module->str());
  if (options.values.count("--manifest")) {
    if (kind != GpuEmit::Binary)
      return usageError("--manifest goes with --emit hsaco or ptx");
    auto binary = wavetile::compileKernelsForGpu(*module, target, &error);
    if (!binary) {
      printError(error);
      return 1;
    }
    return writeFile(options, "--manifest", printManifest(binary->manifest)) ? writeOutput(options, binary->image) : 1;
  }
  auto output = wavetile::compileForGpu(*module, target, kind, &error);
  if (!output) {
    printError(error);
    return 1;
  }
  return writeOutput(options, *output);
}

/// jit: one compile through the cache, reporting its source and time.
int jitCommand(const Options &options) {
  if (!options.values.count("--target"))
    return usageError("jit needs --target");
  const std::string &target = options.values.at("--target");
  if (target != "host" && !lookupGpuTarget(target))
    return usageError("unknown target '" + target + "'; known targets: host, " + gpuTargetNameList());
  std::string error;
  auto module = loadModule(options, &error);
  if (!module) {
    printError(error);
    return 1;
  }
  Jit jit(JitOptions::fromEnvironment(target));
  auto result = jit.compile(*module, &error);
  if (!result) {
    printError(error);
    return 1;
  }
  std::string kernels;
  for (const KernelManifest &k : result->binary->manifest.kernels)
    kernels += (kernels.empty() ? "" : ",") + k.signature.name;
  std::printf("%s %s: %s in %.4f s (key %s)\n", kernels.c_str(), target.c_str(),
              result->source == Jit::Source::Compiled ? "compiled" : "read from the disk cache", result->seconds,
              result->key.substr(0, 16).c_str());
  if (options.values.count("--manifest") && !writeFile(options, "--manifest", printManifest(result->binary->manifest)))
    return 1;
  return options.values.count("-o") ? writeOutput(options, result->binary->image) : 0;
}

int compileCommand(const Options &options) {
  std::string target = options.values.count("--target") ? options.values.at("--target") : "host";
  if (target != "host") {
    std::optional<GpuTarget> gpu = lookupGpuTarget(target);
    if (!gpu)
      return usageError("unknown target '" + target + "'; known targets: host, " + gpuTargetNameList());
    return compileForGpu(options, *gpu);
  }
  std::string emit = options.values.count("--emit") ? options.values.at("--emit") : "llvm-ir";
  if (emit != "tile" && emit != "llvm" && emit != "llvm-ir")
    return usageError("unknown --emit '" + emit + "'; use tile, llvm or llvm-ir");
  std::string error;
  auto module = loadModule(options, &error);
  if (!module) {
    printError(error);
    return 1;
  }
  std::string output;
  if (emit == "tile") {
    output = module->str();
  } else {
    auto lowered = lowerForHost(*module, emit == "llvm" ? HostStage::LLVMDialect : HostStage::LLVMIR, &error);
    if (!lowered) {
      printError(error);
      return 1;
    }
    output = *lowered;
  }
  return writeOutput(options, output);
}

std::optional<std::vector<int64_t>> parseShape(const std::string &text, size_t rank) {
  std::vector<int64_t> shape;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    char *end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v <= 0 || v > (1ll << 30))
      return std::nullopt;
    shape.push_back(v);
  }
  if (shape.size() != rank)
    return std::nullopt;
  return shape;
}

std::string shapeText(const Example &example, const std::vector<int64_t> &shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? " " : "") + example.dims[i] + "=" + std::to_string(shape[i]);
  return text;
}

/// Builds, JIT-compiles and checks one example; prints one line per shape. With `saveDir`,
/// also writes each launch (inputs and outputs) there for runs on other machines. With
/// `emulated`, the kernels are compiled for that GPU target and run by the emulator (and
/// its outputs are the ones saved).
bool runExample(const Example &example, const std::vector<std::vector<int64_t>> &shapes, uint64_t seed,
                const std::string &saveDir = {}, const GpuTarget *emulated = nullptr) {
  std::string error;
  auto start = std::chrono::steady_clock::now();
  auto module = example.build(&error);
  std::unique_ptr<HostExecutable> exe;
  std::unique_ptr<EmulatedModule> emulator;
  if (module && emulated)
    emulator = EmulatedModule::compile(*module, *emulated, &error);
  else if (module)
    exe = HostExecutable::compile(*module, &error);
  double compileSeconds = secondsSince(start);
  const std::string where = emulated ? std::string(emulated->name) + "*" : "host";
  if (!exe && !emulator) {
    std::printf("%-*s %-6s FAILED to compile:\n%s\n", kNameWidth, example.name.c_str(), where.c_str(), error.c_str());
    return false;
  }
  // The emulator runs the plan the host would: same grid, same buffers.
  auto runEmulated = [&](LaunchPlan &plan, CheckReport &report) {
    auto args = argumentsOf(plan, &report.summary);
    auto begin = std::chrono::steady_clock::now();
    bool ok = args && emulator->launch(plan.kernel, plan.grid, *args, &report.summary);
    report.runSeconds = secondsSince(begin);
    if (!ok)
      report.summary = "launch failed: " + report.summary;
    return ok;
  };
  bool allPassed = true;
  for (const auto &shape : shapes) {
    LaunchPlan plan = example.prepare(shape, seed);
    const LaunchPlan initial = saveDir.empty() ? LaunchPlan{} : plan;
    CheckReport report;
    if (emulator ? runEmulated(plan, report) : runOnHost(*exe, plan, report)) {
      double seconds = report.runSeconds;
      report = example.verify(plan);
      report.runSeconds = seconds;
    }
    if (report.passed && !saveDir.empty() &&
        !saveLaunch(initial, plan, saveDir, &error, emulated ? "emulated " + std::string(emulated->name) : "host")) {
      std::printf("%s\n", error.c_str());
      report.passed = false;
    }
    allPassed &= report.passed;
    std::printf("%-*s %-6s %-22s compile %6.3f s  run %8.4f s  %-6s %s\n", kNameWidth, example.name.c_str(),
                where.c_str(), shapeText(example, shape).c_str(), compileSeconds, report.runSeconds,
                report.passed ? "PASS" : "FAIL", report.summary.c_str());
  }
  return allPassed;
}

uint64_t seedFrom(const Options &options) {
  if (options.values.count("--seed"))
    return std::stoull(options.values.at("--seed"));
  return std::random_device{}();
}

int runCommand(const Options &options) {
  if (options.positional.size() != 1)
    return usageError("run needs one example name (see wavetile list)");
  const Example *example = findExample(options.positional[0]);
  if (!example)
    return usageError("no example named '" + options.positional[0] + "' (see wavetile list)");
  std::vector<std::vector<int64_t>> shapes{example->testShapes.back()};
  if (options.values.count("--shape")) {
    auto shape = parseShape(options.values.at("--shape"), example->dims.size());
    if (!shape)
      return usageError("--shape for " + example->name + " needs " + std::to_string(example->dims.size()) +
                        " positive integers separated by commas");
    shapes = {*shape};
  }
  uint64_t seed = seedFrom(options);
  std::printf("seed %llu\n", (unsigned long long)seed);
  std::string saveDir = options.values.count("--save") ? options.values.at("--save") : "";
  std::optional<GpuTarget> emulated;
  const std::string target = options.values.count("--target") ? options.values.at("--target") : "host";
  if (options.flags.count("--emulate") && target == "host")
    return usageError("--emulate runs a GPU target's code: name it with --target gfx942|gfx950|sm_90|sm_90a");
  if (!options.flags.count("--emulate") && target != "host")
    return usageError("run executes on the host; a GPU target needs --emulate (or a GPU: see bench/h200)");
  if (target != "host") {
    emulated = lookupGpuTarget(target);
    if (!emulated)
      return usageError("unknown target '" + target + "'; known targets: " + gpuTargetNameList());
  }
  return runExample(*example, shapes, seed, saveDir, emulated ? &*emulated : nullptr) ? 0 : 1;
}

/// Compiles an example for every GPU target and prints its resources.
bool compileExampleForGpus(const Example &example) {
  std::string error;
  auto module = example.build(&error);
  bool ok = bool(module);
  for (const GpuTarget &target : allGpuTargets()) {
    if (!module)
      break;
    auto start = std::chrono::steady_clock::now();
    auto binary = wavetile::compileKernelsForGpu(*module, target, &error);
    double seconds = secondsSince(start);
    if (!binary) {
      std::printf("%-*s %-6s FAILED to compile:\n%s\n", kNameWidth, example.name.c_str(), std::string(target.name).c_str(),
                  error.c_str());
      ok = false;
      continue;
    }
    // Dynamic shared memory is not in the code object: the manifest says how much.
    std::string dynamicShared;
    for (const KernelManifest &k : binary->manifest.kernels)
      if (k.dynamicSharedBytes)
        dynamicShared += " dynamic_shared_bytes=" + std::to_string(k.dynamicSharedBytes);
    std::printf("%-*s %-6s compile %6.3f s  %s %6zu bytes  %s%s\n", kNameWidth, example.name.c_str(),
                std::string(target.name).c_str(), seconds, target.isAMD() ? "hsaco" : "ptx  ", binary->image.size(),
                tool::summarizeCodeObject(binary->image, target.isNVIDIA()).c_str(), dynamicShared.c_str());
  }
  return ok;
}

int demoCommand(const Options &options) {
  uint64_t seed = seedFrom(options);
  std::printf("Wavetile demo: every example kernel, written in the C++ DSL, compiled for every target.\n"
              "On the host each runs against an independent reference (seed %llu); for the GPU targets\n"
              "the code objects' resources are shown, and the per-thread code of gfx942, gfx950 and sm_90\n"
              "runs lane by lane in the emulator (target*) against the same reference (real GPU runs:\n"
              "bench/h200).\n\n",
              (unsigned long long)seed);
  int passed = 0, failed = 0;
  for (const Example &example : allExamples()) {
    bool ok = runExample(example, example.testShapes, seed);
    ok &= compileExampleForGpus(example);
    for (std::string_view name : {"gfx942", "gfx950", "sm_90"}) {
      const GpuTarget target = *lookupGpuTarget(name);
      ok &= runExample(example, {example.testShapes.back()}, seed, {}, &target);
    }
    (ok ? passed : failed)++;
    std::printf("\n");
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usageError("missing command");
  std::string command = argv[1];
  if (command == "-h" || command == "--help") {
    std::cout << kUsage;
    return 0;
  }
  std::string error;
  auto options = parseOptions(argc, argv, 2, &error);
  if (!options)
    return usageError(error);
  if (command == "list") {
    for (const Example &e : allExamples())
      std::printf("%-*s %s\n", kNameWidth, e.name.c_str(), e.summary.c_str());
    return 0;
  }
  if (command == "compile")
    return compileCommand(*options);
  if (command == "jit")
    return jitCommand(*options);
  if (command == "run")
    return runCommand(*options);
  if (command == "demo")
    return demoCommand(*options);
  if (command == "inspect")
    return tool::inspectCommand(options->positional, options->flags.count("--json") > 0);
  if (command == "tune")
    return tool::tuneCommand(options->values, options->flags.count("--bias") > 0);
  return usageError("unknown command '" + command + "'");
}
