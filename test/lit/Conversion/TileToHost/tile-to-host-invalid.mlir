// convert-tile-to-host failures: program queries outside a kernel have nothing to lower to.
// RUN: %wavetile-opt %s -split-input-file -convert-tile-to-host -verify-diagnostics

// Only tile.kernel functions get program-id arguments; elsewhere the query cannot be lowered.
func.func @helper_with_program_id() -> i32 {
  // expected-error @+1 {{failed to legalize operation 'tile.program_id'}}
  %0 = tile.program_id 0
  return %0 : i32
}

// -----

func.func @helper_with_num_programs(%p: !tile.ptr<i32>) {
  // expected-error @+1 {{failed to legalize operation 'tile.num_programs'}}
  %0 = tile.num_programs 1
  %o = tile.arange 0 to 1 : tensor<1xi32>
  %v = tile.splat %0 : i32 -> tensor<1xi32>
  tile.store %v, %p[%o] : tensor<1xi32>, !tile.ptr<i32>[tensor<1xi32>]
  return
}
