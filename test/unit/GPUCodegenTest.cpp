//===- GPUCodegenTest.cpp - GPU targets, occupancy, in-process codegen ----===//
//
// The occupancy expectations are worked out by hand from the rules cited in
// compiler/lib/Target/GPU/GPUTargets.cpp, not from the implementation.
//
//===----------------------------------------------------------------------===//

#include "wavetile/Target/GPUCodegen.h"
#include "wavetile/Target/GPUTargets.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

using namespace wavetile;

namespace {

GpuTarget target(std::string_view name) {
  std::optional<GpuTarget> t = lookupGpuTarget(name);
  EXPECT_TRUE(t.has_value()) << name;
  return *t;
}

//===----------------------------------------------------------------------===//
// Target table
//===----------------------------------------------------------------------===//

TEST(GpuTargets, Table) {
  GpuTarget gfx942 = target("gfx942");
  EXPECT_EQ(gfx942.vendor, GpuVendor::AMD);
  EXPECT_EQ(gfx942.triple, "amdgcn-amd-amdhsa");
  EXPECT_EQ(gfx942.chip, "gfx942");
  EXPECT_EQ(gfx942.waveSize, 64);
  EXPECT_EQ(gfx942.sharedBytesPerCU, 65536);
  EXPECT_EQ(gfx942.vgprBudgetPerLane, 512);
  EXPECT_EQ(gfx942.simdsPerCU, 4);
  EXPECT_EQ(gfx942.maxWavesPerSimd, 8);
  EXPECT_EQ(target("gfx950").sharedBytesPerCU, 160 * 1024);
  EXPECT_EQ(target("gfx950").sharedAllocGranule, 1280);
  GpuTarget sm90 = target("sm_90");
  EXPECT_EQ(sm90.vendor, GpuVendor::NVIDIA);
  EXPECT_EQ(sm90.triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(sm90.waveSize, 32);
  EXPECT_EQ(sm90.features, "+ptx84"); // fp8 mma.sync
  EXPECT_EQ(sm90.maxStaticSharedBytes, 48 * 1024); // static .shared; more needs dynamic shared memory
  EXPECT_EQ(target("sm_90a").chip, "sm_90a");
  EXPECT_EQ(target("sm_90a").features, "+ptx84");
}

TEST(GpuTargets, UnknownNamesAreNotGuessed) {
  EXPECT_FALSE(lookupGpuTarget("gfx90a"));
  EXPECT_FALSE(lookupGpuTarget("GFX942"));
  EXPECT_FALSE(lookupGpuTarget("sm_80"));
  EXPECT_FALSE(lookupGpuTarget(""));
  EXPECT_FALSE(lookupGpuTarget("host"));
  EXPECT_EQ(gpuTargetNameList(), "gfx942, gfx950, sm_90, sm_90a");
  EXPECT_EQ(allGpuTargets().size(), 4u);
}

//===----------------------------------------------------------------------===//
// Occupancy
//===----------------------------------------------------------------------===//

TEST(Occupancy, UnifiedVgprCount) {
  EXPECT_EQ(unifiedVgprCount(0, 0), 0);
  EXPECT_EQ(unifiedVgprCount(8, 0), 8);
  EXPECT_EQ(unifiedVgprCount(9, 0), 9);     // no AGPRs: no ACCUM_OFFSET alignment
  EXPECT_EQ(unifiedVgprCount(9, 32), 44);   // AGPRs start at alignUp(9, 4) = 12
  EXPECT_EQ(unifiedVgprCount(12, 32), 44);
  EXPECT_EQ(unifiedVgprCount(128, 128), 256);
  EXPECT_EQ(unifiedVgprCount(130, 4), 136); // 132 + 4
  EXPECT_EQ(unifiedVgprCount(256, 256), 512);
}

TEST(Occupancy, WavesFromVgprsCdna3) {
  GpuTarget t = target("gfx942");
  // min(8, floor(512 / alignUp(v, 8)))
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 0), 8);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 1), 8);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 64), 8);  // 512 / 64 = 8
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 65), 7);  // 512 / 72 = 7.1
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 72), 7);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 73), 6);  // 512 / 80 = 6.4
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 96), 5);  // 512 / 96 = 5.3
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 128), 4);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 129), 3); // 512 / 136 = 3.8
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 168), 3); // 512 / 168 = 3.05
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 176), 2); // 512 / 176 = 2.9
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 256), 2);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 257), 1); // 512 / 264
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 512), 1);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 513), 0); // does not fit at all
  // The metadata's .vgpr_count of a kernel with 9 arch VGPRs and 32 AGPRs is 44:
  // 512 / 48 = 10.7 -> capped at 8. With 100 arch + 100 acc: 100 + 100 = 200 -> 2.
  EXPECT_EQ(wavesPerSimdFromVgprs(t, unifiedVgprCount(9, 32)), 8);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, unifiedVgprCount(100, 100)), 2);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, unifiedVgprCount(128, 128)), 2);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, unifiedVgprCount(64, 64)), 4);
}

TEST(Occupancy, WavesFromSgprs) {
  GpuTarget t = target("gfx942");
  EXPECT_EQ(wavesPerSimdFromSgprs(t, 16), 8);  // 10 on GFX9, capped at 8
  EXPECT_EQ(wavesPerSimdFromSgprs(t, 100), 8);
  EXPECT_EQ(wavesPerSimdFromSgprs(t, 102), 7);
  EXPECT_EQ(wavesPerSimdFromSgprs(target("sm_90"), 200), 16);
}

TEST(Occupancy, WavesFromLdsGfx942) {
  GpuTarget t = target("gfx942");
  // No LDS, 256 threads = 4 waves: 16 workgroups (barrier slots) * 4 / 4 SIMDs = 16 -> 8.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 0, 256), 16);
  EXPECT_EQ(wavesPerSimdFromLds(t, 0, 256), 8);
  // No LDS, single-wave workgroups: nothing limits them here.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 0, 64), -1);
  EXPECT_EQ(wavesPerSimdFromLds(t, 0, 64), 8);
  // 16 KiB, 256 threads: 4 workgroups * 4 waves / 4 SIMDs = 4.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 16384, 256), 4);
  EXPECT_EQ(wavesPerSimdFromLds(t, 16384, 256), 4);
  // 32 KiB + 1 byte rounds to 32768 + 512: one workgroup; 256 threads -> 1 wave per SIMD.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 32769, 256), 1);
  EXPECT_EQ(wavesPerSimdFromLds(t, 32769, 256), 1);
  // 32 KiB, 512 threads (8 waves): 2 workgroups * 8 / 4 = 4.
  EXPECT_EQ(wavesPerSimdFromLds(t, 32768, 512), 4);
  // 20 KiB, one wave per workgroup: 3 workgroups -> 3 waves over 4 SIMDs -> 1 on the busiest.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 20480, 64), 3);
  EXPECT_EQ(wavesPerSimdFromLds(t, 20480, 64), 1);
  // 1 byte rounds to 512: 128 workgroups of one wave -> 32 waves per SIMD -> capped at 8.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 1, 64), 128);
  EXPECT_EQ(wavesPerSimdFromLds(t, 1, 64), 8);
  // 64 KiB fits once; 64 KiB + 1 does not fit at all.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 65536, 1024), 1);
  EXPECT_EQ(wavesPerSimdFromLds(t, 65536, 1024), 4); // 16 waves / 4 SIMDs
  EXPECT_EQ(workgroupsPerCUFromLds(t, 65537, 64), 0);
  EXPECT_EQ(wavesPerSimdFromLds(t, 65537, 64), 0);
}

TEST(Occupancy, WavesFromLdsGfx950) {
  GpuTarget t = target("gfx950");
  // 160 KiB per CU in 1280-byte granules. 40 KiB, 512 threads: 4 workgroups * 8 waves / 4 = 8.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 40960, 512), 4);
  EXPECT_EQ(wavesPerSimdFromLds(t, 40960, 512), 8);
  // 64 KiB + 1 rounds to 52 granules = 66560 bytes: 163840 / 66560 = 2 workgroups.
  EXPECT_EQ(workgroupsPerCUFromLds(t, 65537, 256), 2);
  EXPECT_EQ(wavesPerSimdFromLds(t, 65537, 256), 2);
  // 128 KiB: one workgroup (the lit test's biglds kernel on gfx950).
  EXPECT_EQ(wavesPerSimdFromLds(t, 131072, 256), 1);
  EXPECT_EQ(workgroupsPerCUFromLds(t, 160 * 1024 + 1, 64), 0);
}

TEST(Occupancy, Combined) {
  GpuTarget t = target("gfx942");
  Occupancy a = computeOccupancy(t, 6, 14, 0, 256);
  EXPECT_EQ(a.wavesPerSimd, 8);
  EXPECT_EQ(a.limitedBy, "none");
  Occupancy b = computeOccupancy(t, 128, 40, 8192, 256); // vgprs 4, lds 8 workgroups -> 8
  EXPECT_EQ(b.byVgprs, 4);
  EXPECT_EQ(b.byLds, 8);
  EXPECT_EQ(b.wavesPerSimd, 4);
  EXPECT_EQ(b.limitedBy, "vgprs");
  Occupancy c = computeOccupancy(t, 64, 40, 32768, 256); // vgprs 8, lds 2 workgroups * 4 / 4 = 2
  EXPECT_EQ(c.byLds, 2);
  EXPECT_EQ(c.wavesPerSimd, 2);
  EXPECT_EQ(c.limitedBy, "lds");
  Occupancy d = computeOccupancy(t, 32, 104, 0, 64);
  EXPECT_EQ(d.bySgprs, 7);
  EXPECT_EQ(d.wavesPerSimd, 7);
  EXPECT_EQ(d.limitedBy, "sgprs");
}

TEST(Occupancy, Sm90Registers) {
  GpuTarget t = target("sm_90");
  // 64K registers per SM over 4 sub-partitions, 256 per warp granule:
  // warps per sub-partition = min(16, floor(512 / alignUp(regs, 8))).
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 18), 16);  // 512 / 24 = 21 -> 16
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 32), 16);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 40), 12);  // 512 / 40 = 12.8
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 128), 4);
  EXPECT_EQ(wavesPerSimdFromVgprs(t, 255), 2);  // 512 / 256
}

//===----------------------------------------------------------------------===//
// Code generation
//===----------------------------------------------------------------------===//

constexpr const char *kAmdModule = R"mlir(
gpu.module @k {
  llvm.func @copy(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {rocdl.kernel, rocdl.flat_work_group_size = "256,256"} {
    %tid = rocdl.workitem.id.x : i32
    %t = llvm.zext %tid : i32 to i64
    %p = llvm.getelementptr %in[%t] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xf32>
    %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %q = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, vector<4xf32>
    llvm.store %v, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

constexpr const char *kOcmlModule = R"mlir(
gpu.module @k {
  llvm.func @__ocml_exp_f32(f32) -> f32
  llvm.func @__ockl_get_local_size(i32) -> i64
  llvm.func @exp(%p: !llvm.ptr<1>) attributes {rocdl.kernel, rocdl.flat_work_group_size = "64,64"} {
    %v = llvm.load %p : !llvm.ptr<1> -> f32
    %e = llvm.call @__ocml_exp_f32(%v) : (f32) -> f32
    %z = llvm.mlir.constant(0 : i32) : i32
    %n = llvm.call @__ockl_get_local_size(%z) : (i32) -> i64
    %f = llvm.uitofp %n : i64 to f32
    %r = llvm.fadd %e, %f : f32
    llvm.store %r, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

constexpr const char *kNvModule = R"mlir(
gpu.module @k {
  llvm.func @copy(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %v = llvm.load %in {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    llvm.store %v, %out {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
    llvm.return
  }
}
)mlir";

class Codegen : public ::testing::Test {
protected:
  Codegen() {
    context.loadDialect<mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect,
                        mlir::NVVM::NVVMDialect>();
  }

  mlir::gpu::GPUModuleOp parse(const char *text) {
    modules.push_back(mlir::parseSourceString<mlir::ModuleOp>(text, &context));
    EXPECT_TRUE(modules.back());
    return *modules.back()->getOps<mlir::gpu::GPUModuleOp>().begin();
  }

  mlir::MLIRContext context;
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
};

bool isElf(const std::string &bytes) { return bytes.size() > 64 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

TEST_F(Codegen, RepeatedLldLinksInOneProcess) {
  mlir::gpu::GPUModuleOp module = parse(kAmdModule);
  for (int i = 0; i < 4; ++i) {
    std::string error;
    auto hsaco = compileGpuModules({module}, target("gfx942"), GpuEmit::Binary, &error);
    ASSERT_TRUE(mlir::succeeded(hsaco)) << "link " << i << ": " << error;
    EXPECT_TRUE(isElf(*hsaco));
    auto undefined = findUndefinedSymbols(*hsaco, &error);
    ASSERT_TRUE(mlir::succeeded(undefined)) << error;
    EXPECT_TRUE(undefined->empty());
  }
}

TEST_F(Codegen, LldErrorDoesNotPoisonLaterLinks) {
  std::string error;
  EXPECT_TRUE(mlir::failed(linkAmdgpuObject("this is not an object file", &error)));
  EXPECT_NE(error.find("lld failed to link"), std::string::npos) << error;
  mlir::gpu::GPUModuleOp module = parse(kAmdModule);
  error.clear();
  auto hsaco = compileGpuModules({module}, target("gfx950"), GpuEmit::Binary, &error);
  ASSERT_TRUE(mlir::succeeded(hsaco)) << error;
  EXPECT_TRUE(isElf(*hsaco));
}

TEST_F(Codegen, ConcurrentLinksAreSerialized) {
  // Each thread has its own MLIRContext: contexts are not shared across threads here.
  auto work = [](std::string *result) {
    mlir::MLIRContext ctx;
    ctx.loadDialect<mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect>();
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kAmdModule, &ctx);
    auto gpuModule = *module->getOps<mlir::gpu::GPUModuleOp>().begin();
    for (int i = 0; i < 3; ++i) {
      std::string error;
      auto hsaco = compileGpuModules({gpuModule}, *lookupGpuTarget("gfx942"), GpuEmit::Binary, &error);
      if (mlir::failed(hsaco) || !isElf(*hsaco)) {
        *result = "failed: " + error;
        return;
      }
    }
    *result = "ok";
  };
  std::string a, b;
  std::thread t1(work, &a), t2(work, &b);
  t1.join();
  t2.join();
  EXPECT_EQ(a, "ok");
  EXPECT_EQ(b, "ok");
}

TEST_F(Codegen, TemporaryFilesAreRemoved) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("wavetile-codegen-test", dir));
  const char *saved = std::getenv("TMPDIR");
  std::string savedValue = saved ? saved : "";
  setenv("TMPDIR", dir.c_str(), 1);
  mlir::gpu::GPUModuleOp good = parse(kAmdModule), bad = parse(kOcmlModule);
  std::string error;
  EXPECT_TRUE(mlir::succeeded(compileGpuModules({good}, target("gfx942"), GpuEmit::Binary, &error))) << error;
  EXPECT_TRUE(mlir::failed(compileGpuModules({bad}, target("gfx942"), GpuEmit::Binary, &error)));
  EXPECT_TRUE(mlir::failed(linkAmdgpuObject("garbage", &error)));
  if (saved)
    setenv("TMPDIR", savedValue.c_str(), 1);
  else
    unsetenv("TMPDIR");
  std::error_code ec;
  int leftovers = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    ++leftovers;
  EXPECT_EQ(leftovers, 0);
  llvm::sys::fs::remove(dir);
}

TEST_F(Codegen, UnresolvedDeviceLibraryCallsAreNamed) {
  mlir::gpu::GPUModuleOp module = parse(kOcmlModule);
  std::string error;
  EXPECT_TRUE(mlir::failed(compileGpuModules({module}, target("gfx942"), GpuEmit::Binary, &error)));
  EXPECT_NE(error.find("unresolved symbols: __ockl_get_local_size, __ocml_exp_f32"), std::string::npos) << error;
  // The object links (lld accepts undefined symbols in a shared object); the check is ours.
  auto object = compileGpuModulesToObject({module}, target("gfx942"), &error);
  ASSERT_TRUE(mlir::succeeded(object)) << error;
  auto undefined = findUndefinedSymbols(*object, &error);
  ASSERT_TRUE(mlir::succeeded(undefined)) << error;
  EXPECT_EQ(*undefined, (std::vector<std::string>{"__ockl_get_local_size", "__ocml_exp_f32"}));
}

TEST_F(Codegen, WrongVendorAndNotElf) {
  std::string error;
  EXPECT_TRUE(mlir::failed(compileGpuModules({parse(kAmdModule)}, target("sm_90"), GpuEmit::Binary, &error)));
  EXPECT_NE(error.find("cannot be compiled for sm_90"), std::string::npos) << error;
  EXPECT_TRUE(mlir::failed(findUndefinedSymbols("not an elf file", &error)));
  EXPECT_TRUE(mlir::failed(compileGpuModulesToObject({parse(kNvModule)}, target("sm_90"), &error)));
}

TEST_F(Codegen, PtxOutputAndChecks) {
  std::string error;
  auto ptx = compileGpuModules({parse(kNvModule)}, target("sm_90"), GpuEmit::Binary, &error);
  ASSERT_TRUE(mlir::succeeded(ptx)) << error;
  EXPECT_NE(ptx->find(".target sm_90"), std::string::npos);
  EXPECT_NE(ptx->find("ld.global.v4"), std::string::npos) << *ptx;
  EXPECT_TRUE(findUnresolvedPtxFunctions(*ptx).empty());

  const char *withExterns = ".version 7.8\n.target sm_90\n"
                            ".extern .func  (.param .b32 func_retval0) __nv_expf\n(\n.param .b32 p\n)\n;\n"
                            ".extern .func  (.param .b32 func_retval0) vprintf\n(\n.param .b64 a\n)\n;\n"
                            ".extern .func my_helper\n(\n)\n;\n"
                            ".extern .func  (.param .b32 func_retval0) __nv_expf\n;\n";
  EXPECT_EQ(findUnresolvedPtxFunctions(withExterns), (std::vector<std::string>{"__nv_expf", "my_helper"}));
}

TEST_F(Codegen, LLVMIRCarriesCodeObjectVersionAndBlockSize) {
  std::string error;
  auto ir = compileGpuModules({parse(kAmdModule)}, target("gfx942"), GpuEmit::LLVMIR, &error);
  ASSERT_TRUE(mlir::succeeded(ir)) << error;
  EXPECT_NE(ir->find("!\"amdhsa_code_object_version\", i32 500"), std::string::npos) << *ir;
  EXPECT_NE(ir->find("\"amdgpu-flat-work-group-size\"=\"256,256\""), std::string::npos) << *ir;
  EXPECT_NE(ir->find("target triple = \"amdgcn-amd-amdhsa\""), std::string::npos);
}

TEST(CodegenContext, KernelAttributeWithoutRocdlOpsIsHonoured) {
  // ROCDL only registered with the context, and no rocdl op in the module: only
  // the `rocdl.kernel` attribute says this is a kernel.
  mlir::DialectRegistry registry;
  registry.insert<mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect, mlir::ROCDL::ROCDLDialect>();
  mlir::MLIRContext ctx(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    gpu.module @k {
      llvm.func @plain(%p: !llvm.ptr<1>) attributes {rocdl.kernel, rocdl.flat_work_group_size = "128,128"} {
        %c = llvm.mlir.constant(1.0 : f32) : f32
        llvm.store %c, %p : f32, !llvm.ptr<1>
        llvm.return
      }
    })mlir",
                                                        &ctx);
  ASSERT_TRUE(module);
  std::string error;
  auto ir = compileGpuModules({*module->getOps<mlir::gpu::GPUModuleOp>().begin()}, target("gfx942"), GpuEmit::LLVMIR,
                              &error);
  ASSERT_TRUE(mlir::succeeded(ir)) << error;
  EXPECT_NE(ir->find("define amdgpu_kernel void @plain"), std::string::npos) << *ir;
  EXPECT_NE(ir->find("\"amdgpu-flat-work-group-size\"=\"128,128\""), std::string::npos) << *ir;
}

} // namespace
