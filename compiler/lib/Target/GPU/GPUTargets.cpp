//===- GPUTargets.cpp - the GPU target table and occupancy arithmetic -----===//
//
// Sources for the numbers (checked, not remembered):
//  - CDNA3 (MI300, gfx942) and CDNA4 (MI350, gfx950) have one unified vector
//    register file of 512 registers per lane of a wave slot; at most 256 of
//    them architectural VGPRs and 256 AGPRs ("AMD Instinct MI300 ISA reference
//    guide", section 3.6.4 for gfx90a and later; LLVM AMDGPUBaseInfo.cpp
//    getTotalNumVGPRs() = 512 and getAddressableNumVGPRs() = 512 for
//    FeatureGFX90AInsts). Registers are allocated in granules of 8
//    (getVGPRAllocGranule() = 8 for FeatureGFX90AInsts), AGPRs start at
//    ACCUM_OFFSET = alignUp(arch VGPRs, 4) (AMDGPUUsage, kernel descriptor,
//    GFX90A/GFX942 ACCUM_OFFSET; LLVM getTotalNumVGPRs(has90AInsts, agpr,
//    vgpr) = alignTo(vgpr, 4) + agpr), and a SIMD holds at most 8 waves
//    (getMaxWavesPerEU() = 8 for gfx90a and later; 4 SIMDs per CU,
//    getEUsPerCU() = 4). Waves per SIMD from VGPRs =
//    min(8, max(1, 512 / alignUp(vgprs, 8))) (getNumWavesPerEUWithNumVGPRs).
//  - SGPRs on GFX8/GFX9: <= 80 -> 10 waves, <= 88 -> 9, <= 100 -> 8, else 7
//    (getOccupancyWithNumSGPRs), then capped by the 8-wave maximum.
//  - LDS: 64 KiB per CU on gfx942, 160 KiB on gfx950 (LLVM features
//    AddressableLocalMemorySize65536 / ...163840). Allocation granule: 128
//    dwords on GFX7..gfx942, 320 dwords on gfx950 (AMDGPUUsage,
//    COMPUTE_PGM_RSRC2.LDS_SIZE: "GFX950: roundup(lds-size / (320 * 4))").
//    A CU holds at most 16 workgroups of more than one wave (barrier slots;
//    getMaxWorkGroupsPerCU()).
//  - sm_90 (H100/H200): 64K 32-bit registers per SM in 4 sub-partitions, i.e.
//    512 per lane of a warp slot per sub-partition, allocated 256 per warp
//    (8 per lane); 64 warps per SM (16 per sub-partition); 228 KiB shared
//    memory per SM, 227 KiB per block, allocated in 128-byte units; at most 32
//    blocks per SM (CUDA C++ Programming Guide, "Compute Capabilities",
//    table "Technical Specifications per Compute Capability", 9.0).
//
//===----------------------------------------------------------------------===//

#include "wavetile/Target/GPUTargets.h"

#include <algorithm>

using namespace wavetile;

const std::vector<GpuTarget> &wavetile::allGpuTargets() {
  // name, vendor, triple, chip, features, wave,
  // shared/CU, shared/WG, shared granule,
  // vgpr budget, vgpr granule, simds, waves/simd, max WG size, multi-wave WGs/CU
  static const std::vector<GpuTarget> targets = {
      {"gfx942", GpuVendor::AMD, "amdgcn-amd-amdhsa", "gfx942", "", 64, //
       64 * 1024, 64 * 1024, 64 * 1024, 128 * 4,                        //
       512, 8, 4, 8, 1024, 16},
      {"gfx950", GpuVendor::AMD, "amdgcn-amd-amdhsa", "gfx950", "", 64, //
       160 * 1024, 160 * 1024, 160 * 1024, 320 * 4,                     //
       512, 8, 4, 8, 1024, 16},
      // PTX ISA 8.4: the first with fp8 (e4m3/e5m2) mma.sync; drivers of CUDA 12.4 on load it.
      {"sm_90", GpuVendor::NVIDIA, "nvptx64-nvidia-cuda", "sm_90", "+ptx84", 32, //
       228 * 1024, 227 * 1024, 48 * 1024, 128,                             //
       512, 8, 4, 16, 1024, 32},
      // wgmma / setmaxnreg need sm_90a; the same PTX ISA as sm_90.
      {"sm_90a", GpuVendor::NVIDIA, "nvptx64-nvidia-cuda", "sm_90a", "+ptx84", 32, //
       228 * 1024, 227 * 1024, 48 * 1024, 128,                                     //
       512, 8, 4, 16, 1024, 32},
  };
  return targets;
}

std::optional<GpuTarget> wavetile::lookupGpuTarget(std::string_view name) {
  for (const GpuTarget &target : allGpuTargets())
    if (target.name == name)
      return target;
  return std::nullopt;
}

std::string wavetile::gpuTargetNameList() {
  std::string list;
  for (const GpuTarget &target : allGpuTargets())
    list += (list.empty() ? "" : ", ") + std::string(target.name);
  return list;
}

static int alignUp(int value, int granule) { return (value + granule - 1) / granule * granule; }
static int ceilDiv(int a, int b) { return (a + b - 1) / b; }

int wavetile::unifiedVgprCount(int archVgprs, int accVgprs) {
  if (accVgprs <= 0)
    return std::max(archVgprs, 0);
  return alignUp(std::max(archVgprs, 0), 4) + accVgprs;
}

int wavetile::wavesPerSimdFromVgprs(const GpuTarget &target, int vgprs) {
  if (vgprs > target.vgprBudgetPerLane)
    return 0;
  if (vgprs < target.vgprAllocGranule)
    return target.maxWavesPerSimd;
  int allocated = alignUp(vgprs, target.vgprAllocGranule);
  return std::min(std::max(target.vgprBudgetPerLane / allocated, 1), target.maxWavesPerSimd);
}

int wavetile::wavesPerSimdFromSgprs(const GpuTarget &target, int sgprs) {
  if (!target.isAMD())
    return target.maxWavesPerSimd;
  int waves = sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
  return std::min(waves, target.maxWavesPerSimd);
}

int wavetile::workgroupsPerCUFromLds(const GpuTarget &target, int ldsBytes, int workgroupSize) {
  if (ldsBytes > target.maxSharedBytesPerWorkgroup)
    return 0;
  int wavesPerWorkgroup = ceilDiv(std::max(workgroupSize, 1), target.waveSize);
  int limit = -1;
  if (ldsBytes > 0)
    limit = target.sharedBytesPerCU / alignUp(ldsBytes, target.sharedAllocGranule);
  bool slotLimited = target.maxMultiWaveWorkgroupsPerCU > 0 && (wavesPerWorkgroup > 1 || target.isNVIDIA());
  if (slotLimited)
    limit = limit < 0 ? target.maxMultiWaveWorkgroupsPerCU : std::min(limit, target.maxMultiWaveWorkgroupsPerCU);
  return limit;
}

int wavetile::wavesPerSimdFromLds(const GpuTarget &target, int ldsBytes, int workgroupSize) {
  int workgroups = workgroupsPerCUFromLds(target, ldsBytes, workgroupSize);
  if (workgroups < 0)
    return target.maxWavesPerSimd;
  int wavesPerWorkgroup = ceilDiv(std::max(workgroupSize, 1), target.waveSize);
  return std::min(ceilDiv(workgroups * wavesPerWorkgroup, target.simdsPerCU), target.maxWavesPerSimd);
}

Occupancy wavetile::computeOccupancy(const GpuTarget &target, int vgprs, int sgprs, int ldsBytes,
                                     int workgroupSize) {
  Occupancy o;
  o.byVgprs = wavesPerSimdFromVgprs(target, vgprs);
  o.bySgprs = wavesPerSimdFromSgprs(target, sgprs);
  o.byLds = wavesPerSimdFromLds(target, ldsBytes, workgroupSize);
  o.wavesPerSimd = std::min({o.byVgprs, o.bySgprs, o.byLds});
  if (o.wavesPerSimd == target.maxWavesPerSimd)
    o.limitedBy = "none";
  else if (o.wavesPerSimd == o.byVgprs)
    o.limitedBy = "vgprs";
  else if (o.wavesPerSimd == o.byLds)
    o.limitedBy = "lds";
  else
    o.limitedBy = "sgprs";
  return o;
}
