//===- GPUToLLVM.cpp - kernels to LLVM + ROCDL/NVVM, no device libraries ---===//

#include "wavetile/Conversion/Passes.h"

#include "mlir/Conversion/AMDGPUToROCDL/AMDGPUToROCDL.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

namespace wavetile {
#define GEN_PASS_DEF_CONVERTGPUKERNELSTOLLVM
#include "wavetile/Conversion/Passes.h.inc"
} // namespace wavetile

using namespace mlir;

namespace {
/// An arith min/max that LLVM lowers natively on both backends, as its LLVM intrinsic.
template <typename From, typename To>
struct NativeMinMax : ConvertOpToLLVMPattern<From> {
  using ConvertOpToLLVMPattern<From>::ConvertOpToLLVMPattern;
  LogicalResult matchAndRewrite(From op, typename From::Adaptor adaptor,
                                ConversionPatternRewriter &rw) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return failure();
    rw.replaceOpWithNewOp<To>(op, type, adaptor.getLhs(), adaptor.getRhs());
    return success();
  }
};

/// NVIDIA: an f32 1/x that may approximate ('afn': dsl::approximateReciprocal) as
/// rcp.approx.ftz.f32, one MUFU.RCP an element. Without .ftz ptxas scales operands outside
/// [2^-126, 2^126] around it (two compares, two selects, two products), for subnormal inputs
/// and results that the estimate's users flush anyway or never have. 1/sqrt(x) is left to
/// NVPTX, which selects rsqrt.approx for it.
struct ReciprocalEstimateFlushingSubnormals : ConvertOpToLLVMPattern<arith::DivFOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult matchAndRewrite(arith::DivFOp op, OpAdaptor adaptor, ConversionPatternRewriter &rw) const override {
    auto vector = dyn_cast<VectorType>(op.getType());
    if (!getElementTypeOrSelf(op.getType()).isF32() || (vector && vector.getRank() != 1) ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn) ||
        !matchPattern(op.getLhs(), m_OneFloat()) || op.getRhs().getDefiningOp<math::SqrtOp>())
      return failure();
    Location loc = op.getLoc();
    Value x = adaptor.getRhs();
    if (!vector) {
      rw.replaceOpWithNewOp<NVVM::RcpApproxFtzF32Op>(op, rw.getF32Type(), x);
      return success();
    }
    Value result = LLVM::PoisonOp::create(rw, loc, vector);
    for (int64_t i = 0; i < vector.getNumElements(); ++i) {
      Value index = LLVM::ConstantOp::create(rw, loc, rw.getI32Type(), rw.getI32IntegerAttr(int32_t(i)));
      Value element = LLVM::ExtractElementOp::create(rw, loc, x, index);
      Value estimate = NVVM::RcpApproxFtzF32Op::create(rw, loc, rw.getF32Type(), element);
      result = LLVM::InsertElementOp::create(rw, loc, result, estimate, index);
    }
    rw.replaceOp(op, result);
    return success();
  }
};

/// Load-to-LDS instructions write LDS asynchronously; the backend would make every later
/// LDS access wait for all of them (vmcnt(0)), including reads of the stage being computed
/// while the next one is copied. Async copies are complete only after async_wait and a
/// barrier, which wait for them explicitly, so the copies get an alias scope that the
/// kernel's LDS loads and stores are declared not to alias.
void separateDirectCopiesFromLdsAccesses(gpu::GPUModuleOp module) {
  MLIRContext *context = module.getContext();
  module.walk([&](LLVM::LLVMFuncOp func) {
    SmallVector<LLVM::AliasAnalysisOpInterface> copies;
    func.walk([&](Operation *op) {
      if (isa<ROCDL::GlobalLoadLDSOp, ROCDL::RawPtrBufferLoadLdsOp>(op))
        copies.push_back(cast<LLVM::AliasAnalysisOpInterface>(op));
    });
    if (copies.empty())
      return;
    auto domain = LLVM::AliasScopeDomainAttr::get(context, StringAttr::get(context, "wavetile.lds"));
    auto scope = ArrayAttr::get(
        context, {LLVM::AliasScopeAttr::get(domain, StringAttr::get(context, "load-to-lds copies"))});
    for (LLVM::AliasAnalysisOpInterface copy : copies)
      copy.setAliasScopes(scope);
    auto isLds = [](Value address) { return cast<LLVM::LLVMPointerType>(address.getType()).getAddressSpace() == 3; };
    func.walk([&](Operation *op) {
      if ((isa<LLVM::LoadOp>(op) && isLds(cast<LLVM::LoadOp>(op).getAddr())) ||
          (isa<LLVM::StoreOp>(op) && isLds(cast<LLVM::StoreOp>(op).getAddr())))
        cast<LLVM::AliasAnalysisOpInterface>(op).setNoAliasScopes(scope);
    });
  });
}

struct ConvertGPUKernelsToLLVM : wavetile::impl::ConvertGPUKernelsToLLVMBase<ConvertGPUKernelsToLLVM> {
  using ConvertGPUKernelsToLLVMBase::ConvertGPUKernelsToLLVMBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    gpu::GPUModuleOp module = getOperation();
    bool amd = StringRef(target).starts_with("gfx"), nvidia = StringRef(target).starts_with("sm_");
    FailureOr<amdgpu::Chipset> chipset = amd ? amdgpu::Chipset::parse(target) : FailureOr<amdgpu::Chipset>(failure());
    if ((!amd && !nvidia) || (amd && failed(chipset))) {
      module.emitError() << "wavetile-gpu-to-llvm needs target=gfx942|gfx950|sm_90|sm_90a, got '" << target << "'";
      return signalPassFailure();
    }
    LLVMTypeConverter converter(context);
    // Address spaces of both vendors: global 1, shared/LDS 3, private 5 (AMD) or 0 (NVPTX).
    populateGpuMemorySpaceAttributeConversions(converter, [amd](gpu::AddressSpace space) -> unsigned {
      switch (space) {
      case gpu::AddressSpace::Global:
        return 1;
      case gpu::AddressSpace::Workgroup:
        return 3;
      case gpu::AddressSpace::Private:
        return amd ? 5 : 0;
      }
      llvm_unreachable("unknown address space");
    });

    RewritePatternSet patterns(context);
    // Native intrinsics outrank any library-call lowering the vendor patterns carry.
    populateMathToLLVMConversionPatterns(converter, patterns, /*approximateLog1p=*/true, /*benefit=*/10);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    if (amd) {
      populateGpuToROCDLConversionPatterns(converter, patterns, gpu::amd::Runtime::HIP, *chipset);
      populateAMDGPUToROCDLConversionPatterns(converter, patterns, *chipset); // amdgpu.mfma and friends
    }
    else {
      populateGpuToNVVMConversionPatterns(converter, patterns);
      // Those patterns turn minnum/maxnum into libdevice calls; PTX has them (min/max.f32).
      patterns.add<NativeMinMax<arith::MinNumFOp, LLVM::MinNumOp>, NativeMinMax<arith::MaxNumFOp, LLVM::MaxNumOp>,
                   ReciprocalEstimateFlushingSubnormals>(converter, /*benefit=*/10);
    }

    LLVMConversionTarget conversionTarget(*context);
    conversionTarget.addLegalDialect<ROCDL::ROCDLDialect, NVVM::NVVMDialect>();
    conversionTarget.addIllegalDialect<gpu::GPUDialect, amdgpu::AMDGPUDialect, arith::ArithDialect, math::MathDialect,
                                       vector::VectorDialect, memref::MemRefDialect, cf::ControlFlowDialect>();
    conversionTarget.addLegalOp<gpu::GPUModuleOp>();
    if (failed(applyPartialConversion(module, conversionTarget, std::move(patterns))))
      return signalPassFailure();
    if (amd)
      separateDirectCopiesFromLdsAccesses(module);
    // Dynamic shared memory is a zero-length array the launch sizes. Upstream gives it
    // internal linkage, which lets NVPTX demote it to a one-byte static variable; external
    // linkage makes it `.extern .shared`.
    // wgmma swizzles by shared address bits, so its buffers (1024-byte aligned offsets,
    // see TileToGPU) need the dynamic buffer itself aligned as much.
    bool wgmma = module.walk([](NVVM::WgmmaMmaAsyncOp) { return WalkResult::interrupt(); }).wasInterrupted();
    module.walk([wgmma](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() == 3 && array && array.getNumElements() == 0) {
        global.setLinkage(LLVM::Linkage::External);
        if (wgmma)
          global.setAlignment(1024);
      }
    });
  }
};
} // namespace
