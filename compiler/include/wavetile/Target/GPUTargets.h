//===- GPUTargets.h - GPU targets, occupancy, GPU compilation ---*- C++ -*-===//
//
// The GPU targets Wavetile knows (design brief, decision 8: targets are
// explicit, an unknown name is an error, never a silent default), the
// resource limits the occupancy arithmetic needs, and the plain-C++ entry point
// that compiles the pre-lowered `gpu.module`s of a Module for one target.
//
// Plain C++: no MLIR or LLVM headers. The MLIR/LLVM side is
// wavetile/Target/GPUCodegen.h.
//
//===----------------------------------------------------------------------===//
#ifndef WAVETILE_TARGET_GPUTARGETS_H
#define WAVETILE_TARGET_GPUTARGETS_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wavetile {

class Module;

enum class GpuVendor { AMD, NVIDIA };

/// One GPU target. Register and shared-memory numbers are per SIMD / per CU on
/// AMD and per SM sub-partition / per SM on NVIDIA ("SIMD" and "CU" below).
struct GpuTarget {
  std::string_view name;     // what users write: "gfx942", "sm_90a"
  GpuVendor vendor;
  std::string_view triple;   // LLVM target triple
  std::string_view chip;     // LLVM CPU name (mcpu)
  std::string_view features; // LLVM feature string ("" = the CPU's defaults)
  int waveSize;              // threads per wave / warp

  // Shared memory (LDS).
  int sharedBytesPerCU;          // LDS per CU / shared memory per SM
  int maxSharedBytesPerWorkgroup; // the most one workgroup / block may allocate
  int maxStaticSharedBytes;       // the most a kernel may declare statically (NVIDIA: 48 KiB;
                                  // more needs dynamic shared memory, which we do not emit)
  int sharedAllocGranule;        // bytes a workgroup's allocation is rounded up to

  // Vector registers, per lane of a wave resident on one SIMD. On CDNA3/4 the
  // architectural VGPRs and the accumulation VGPRs (AGPRs) share this budget.
  int vgprBudgetPerLane;
  int vgprAllocGranule;
  int simdsPerCU;
  int maxWavesPerSimd;
  int maxWorkgroupSize;
  /// Workgroups of more than one wave a CU can hold at once (barrier slots);
  /// 0 on targets where we model no such limit.
  int maxMultiWaveWorkgroupsPerCU;

  bool isAMD() const { return vendor == GpuVendor::AMD; }
  bool isNVIDIA() const { return vendor == GpuVendor::NVIDIA; }
};

/// The target named `name`, or nullopt when Wavetile does not know it.
std::optional<GpuTarget> lookupGpuTarget(std::string_view name);
/// Every GPU target, in table order.
const std::vector<GpuTarget> &allGpuTargets();
/// "gfx942, gfx950, sm_90, sm_90a": for error messages.
std::string gpuTargetNameList();

//===----------------------------------------------------------------------===//
// Occupancy (waves resident per SIMD)
//===----------------------------------------------------------------------===//

/// VGPRs one lane of a wave holds on CDNA3/4, where the architectural VGPRs and
/// the AGPRs are one register file: AGPRs start at the first multiple of 4
/// after the architectural VGPRs (the kernel descriptor's ACCUM_OFFSET), so the
/// total is alignUp(arch, 4) + acc when any AGPR is used, else `arch`. This is
/// the number the HSA metadata reports as `.vgpr_count` on these targets.
int unifiedVgprCount(int archVgprs, int accVgprs);

/// Waves per SIMD that the registers allow: min(maxWavesPerSimd,
/// floor(vgprBudgetPerLane / alignUp(vgprs, vgprAllocGranule))), where `vgprs`
/// is the unified count (see above). 0 when `vgprs` exceeds the budget.
int wavesPerSimdFromVgprs(const GpuTarget &target, int vgprs);

/// Waves per SIMD that the SGPRs allow (AMD GFX9: 800 SGPRs per SIMD; more than
/// 100 per wave leaves room for 7). NVIDIA: maxWavesPerSimd.
int wavesPerSimdFromSgprs(const GpuTarget &target, int sgprs);

/// Workgroups of `workgroupSize` threads that fit on one CU given the LDS each
/// allocates (rounded up to the allocation granule) and the barrier slots.
/// -1 when nothing limits it (no LDS, single-wave workgroups); 0 when one
/// workgroup's LDS exceeds the per-workgroup maximum.
int workgroupsPerCUFromLds(const GpuTarget &target, int ldsBytes, int workgroupSize);

/// Waves per SIMD that the LDS allows: ceil(workgroupsPerCU * wavesPerWorkgroup
/// / simdsPerCU), capped at maxWavesPerSimd (the busiest SIMD when workgroups
/// spread their waves evenly over the CU's SIMDs).
int wavesPerSimdFromLds(const GpuTarget &target, int ldsBytes, int workgroupSize);

struct Occupancy {
  int byVgprs = 0;
  int bySgprs = 0;
  int byLds = 0;
  int wavesPerSimd = 0;   // the minimum of the three
  std::string limitedBy;  // "vgprs", "sgprs", "lds" or "none" (hardware maximum)
};

/// Every limit together. `vgprs` is the unified VGPR count (`.vgpr_count`).
Occupancy computeOccupancy(const GpuTarget &target, int vgprs, int sgprs, int ldsBytes, int workgroupSize);

//===----------------------------------------------------------------------===//
// Compiling pre-lowered gpu.modules (the driver's entry point)
//===----------------------------------------------------------------------===//

/// What `compileGpuModules` produces.
enum class GpuEmit {
  LLVMIR,   // LLVM IR text after the O3 pipeline
  Assembly, // AMDGPU assembly text / PTX text
  Binary,   // AMD: an hsaco code object (COV5), linked in-process by lld; NVIDIA: PTX text
};

/// Compiles every `gpu.module` of `module` whose kernels belong to `target`'s
/// vendor (llvm.func with `rocdl.kernel` for AMD, `nvvm.kernel` for NVIDIA);
/// gpu.modules of the other vendor are skipped. The modules must already be in
/// the LLVM dialect (plus rocdl / nvvm ops and attributes). Text outputs of
/// several modules are concatenated; AMD binaries of several modules are linked
/// into one code object. Tile kernels are not handled here.
/// On failure returns nullopt and a message naming the problem in *error.
std::optional<std::string> compileGpuModules(const Module &module, const GpuTarget &target, GpuEmit emit,
                                             std::string *error);

/// True when `module` holds at least one gpu.module.
bool hasGpuModules(const Module &module);

} // namespace wavetile

#endif
