// Verifier and parser errors of tile.program_id / tile.num_programs.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

func.func @axis_too_large() {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 2}}
  %0 = tile.program_id 3
  return
}

// -----

func.func @negative_axis() {
  // expected-error @+1 {{'tile.num_programs' op attribute 'axis' failed to satisfy constraint}}
  %0 = tile.num_programs -1
  return
}

// -----

func.func @i64_axis() {
  // expected-error @+1 {{'tile.program_id' op attribute 'axis' failed to satisfy constraint}}
  %0 = "tile.program_id"() {axis = 0 : i64} : () -> i32
  return
}

// -----

func.func @i64_result() {
  // expected-error @+1 {{'tile.num_programs' op result #0 must be 32-bit signless integer, but got 'i64'}}
  %0 = "tile.num_programs"() {axis = 0 : i32} : () -> i64
  return
}

// -----

func.func @missing_axis() {
  // expected-error @+1 {{expected attribute value}}
  %0 = tile.program_id
  return
}
