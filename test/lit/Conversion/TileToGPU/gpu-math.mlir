// wavetile-gpu-math: transcendental math becomes arithmetic (no device library calls later);
// ops with native instructions stay. f32 exp goes through the hardware's exp2 with the
// product's rounding error carried along; rsqrt is the hardware's (an approximate 1/sqrt);
// erf is two polynomials and one exp2, selected without a division or a branch.
// RUN: %wavetile-opt %s -split-input-file -wavetile-gpu-math -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @approximated
// CHECK-NOT:     math.exp {{.*}}
// CHECK-NOT:     math.log
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.rsqrt
// CHECK:         %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK:         %[[ROOT:.*]] = math.sqrt %{{.*}} fastmath<afn> : vector<4xf32>
// CHECK:         arith.divf %[[ONE]], %[[ROOT]] fastmath<afn> : vector<4xf32>
// CHECK:         math.sqrt %{{.*}} : vector<4xf32>
// CHECK:         math.floor
// CHECK:         return
func.func @approximated(%x: vector<4xf32>, %h: bf16) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, bf16) {
  %e = math.exp %x : vector<4xf32>
  %l = math.log %x : vector<4xf32>
  %t = math.tanh %x : vector<4xf32>
  %r = math.erf %x : vector<4xf32>
  %q = math.rsqrt %x : vector<4xf32>
  %s = math.sqrt %x : vector<4xf32>
  %f = math.floor %x : vector<4xf32>
  %b = math.exp %h : bf16
  return %e, %l, %t, %r, %q, %s, %f, %b : vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, bf16
}

// -----

// CHECK-LABEL: func.func @exp_through_exp2
// CHECK-SAME:    (%[[X:.*]]: vector<4xf32>)
// CHECK:         %[[HI:.*]] = arith.mulf %[[X]], %[[LOG2E:.*]] : vector<4xf32>
// CHECK:         %[[E:.*]] = math.exp2 %[[HI]] : vector<4xf32>
// CHECK:         %[[NEG:.*]] = arith.negf %[[HI]]
// CHECK:         %[[ERR:.*]] = math.fma %[[X]], %[[LOG2E]], %[[NEG]]
// CHECK:         %[[LO:.*]] = math.fma %[[X]], %{{.*}}, %[[ERR]]
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[LO]]
// CHECK:         %[[FIXED:.*]] = math.fma %[[E]], %[[SCALED]], %[[E]]
// CHECK:         %[[FINITE:.*]] = arith.cmpf olt
// CHECK:         arith.select %[[FINITE]], %[[FIXED]], %[[E]]
func.func @exp_through_exp2(%x: vector<4xf32>) -> vector<4xf32> {
  %e = math.exp %x : vector<4xf32>
  return %e : vector<4xf32>
}

// -----

// An exp that allows approximation (afn) is the exp2 of the rounded product alone.
// CHECK-LABEL: func.func @approximate_exp
// CHECK-SAME:    (%[[X:.*]]: vector<4xf32>)
// CHECK:         %[[HI:.*]] = arith.mulf %[[X]], %{{.*}} : vector<4xf32>
// CHECK-NEXT:    %[[E:.*]] = math.exp2 %[[HI]] : vector<4xf32>
// CHECK-NEXT:    return %[[E]]
func.func @approximate_exp(%x: vector<4xf32>) -> vector<4xf32> {
  %e = math.exp %x fastmath<afn> : vector<4xf32>
  return %e : vector<4xf32>
}

// -----

// A 16-bit exp goes through f32 keeping its 'afn': no correction there either.
// CHECK-LABEL: func.func @approximate_exp_bf16
// CHECK:         %[[WIDE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[HI:.*]] = arith.mulf %[[WIDE]], %{{.*}} : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp2 %[[HI]] : f32
// CHECK-NOT:     math.fma
// CHECK:         arith.truncf %[[E]] : f32 to bf16
func.func @approximate_exp_bf16(%x: bf16) -> bf16 {
  %e = math.exp %x fastmath<afn> : bf16
  return %e : bf16
}

// -----

// A kernel's fma stays one op (exact remainders rely on its single rounding): it is not
// expanded into a product and a sum.
// CHECK-LABEL: func.func @fma_is_native
// CHECK:         math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT:     arith.addf
func.func @fma_is_native(%a: vector<4xf32>, %b: vector<4xf32>, %c: vector<4xf32>) -> vector<4xf32> {
  %r = math.fma %a, %b, %c : vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// roundeven stays one op (v_rndne_f32, cvt.rni.f32.f32). Expanded through math.round, x + 0.5
// rounds up for the float just below 0.5, which the software fp8/fp4 encodings scale onto.
// CHECK-LABEL: func.func @roundeven_is_native
// CHECK:         math.roundeven %{{.*}} : vector<4xf32>
// CHECK-NOT:     math.trunc
// CHECK-NOT:     arith.addf
func.func @roundeven_is_native(%x: vector<4xf32>) -> vector<4xf32> {
  %r = math.roundeven %x : vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// round stays too: LLVM's lowerings are exact, while MLIR's expansion (x + 0.5, truncated)
// rounds the float just below 0.5 up to 1.
// CHECK-LABEL: func.func @round_is_native
// CHECK:         math.round %{{.*}} : vector<4xf32>
// CHECK-NOT:     math.trunc
// CHECK-NOT:     arith.addf
func.func @round_is_native(%x: vector<4xf32>) -> vector<4xf32> {
  %r = math.round %x : vector<4xf32>
  return %r : vector<4xf32>
}

// -----

// erf: x + x·P(x²) below the split, copysign(1 - 2^Q(min(|x|, 4)), x) above, one selected.
// bf16 goes through f32 first.
// CHECK-LABEL: func.func @erf_without_division
// CHECK-SAME:    (%[[X:.*]]: vector<4xf32>, %[[H:.*]]: bf16)
// CHECK-NOT:     arith.divf
// CHECK:         %[[A:.*]] = math.absf %[[X]]
// CHECK:         %[[T:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK-COUNT-5: math.fma {{.*}} %[[T]]
// CHECK:         %[[BELOW:.*]] = math.fma %[[X]], %{{.*}}, %[[X]]
// CHECK:         %[[CLAMPED:.*]] = arith.minimumf %[[A]], %{{.*}}
// CHECK-COUNT-6: math.fma {{.*}} %[[CLAMPED]]
// CHECK:         %[[TAIL:.*]] = math.exp2
// CHECK:         %[[ONE_MINUS:.*]] = arith.subf %{{.*}}, %[[TAIL]]
// CHECK:         %[[ABOVE:.*]] = math.copysign %[[ONE_MINUS]], %[[X]]
// CHECK:         %[[IS_BELOW:.*]] = arith.cmpf olt, %[[A]]
// CHECK:         arith.select %[[IS_BELOW]], %[[BELOW]], %[[ABOVE]]
// CHECK:         arith.extf %[[H]]
// CHECK-NOT:     arith.divf
// CHECK:         math.exp2
// CHECK-NOT:     arith.divf
// CHECK:         arith.truncf
func.func @erf_without_division(%x: vector<4xf32>, %h: bf16) -> (vector<4xf32>, bf16) {
  %r = math.erf %x : vector<4xf32>
  %b = math.erf %h : bf16
  return %r, %b : vector<4xf32>, bf16
}
