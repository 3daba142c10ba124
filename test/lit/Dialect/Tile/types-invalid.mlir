// Verifier and parser errors of the tile dialect types.
// RUN: %wavetile-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{pointer element type must be an integer or float scalar, got 'tensor<4xf32>'}}
func.func private @ptr_to_tensor(!tile.ptr<tensor<4xf32>>)

// -----

// expected-error @+1 {{pointer element type must be an integer or float scalar, got 'index'}}
func.func private @ptr_to_index(!tile.ptr<index>)

// -----

// expected-error @+1 {{pointer element type must be an integer or float scalar, got '!tile.ptr<f32>'}}
func.func private @ptr_to_ptr(!tile.ptr<!tile.ptr<f32>>)

// -----

// expected-error @+1 {{buffer element type must be an integer or float scalar, got '!tile.ptr<f32>'}}
func.func private @buffer_of_ptr(!tile.buffer<!tile.ptr<f32>>)

// -----

// expected-error @+1 {{buffer element type must be an integer or float scalar, got 'vector<4xf32>'}}
func.func private @buffer_of_vector(!tile.buffer<vector<4xf32>>)

// -----

// expected-error @+1 {{shared buffer must have rank >= 1}}
func.func private @shared_rank0(!tile.shared<f16>)

// -----

// expected-error @+1 {{shared buffer dimensions must be static and positive}}
func.func private @shared_zero_dim(!tile.shared<0x4xf16>)

// -----

// expected-error @+1 {{expected static shape}}
func.func private @shared_dynamic_dim(!tile.shared<?x4xf16>)

// -----

// expected-error @+1 {{shared buffer element type must be an integer or float scalar}}
func.func private @shared_of_index(!tile.shared<4xindex>)

// -----

// expected-error @+1 {{shared buffer encoding must be #tile.shared_layout}}
func.func private @shared_blocked(!tile.shared<4x32xf16, #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerBlock = [1, 1], order = [1, 0]>>)

// -----

// expected-error @+1 {{shared buffer encoding must be #tile.shared_layout}}
func.func private @shared_integer_encoding(!tile.shared<4x4xf16, 3>)

// -----

// expected-error @+1 {{shared layout order has 1 entries but the buffer has rank 2}}
func.func private @shared_order_rank(!tile.shared<4x4xf16, #tile.shared_layout<vec = 1, perPhase = 1, maxPhase = 1, order = [0], padding = 0>>)

// -----

// expected-error @+1 {{unknown  type `pointer` in dialect `tile`}}
func.func private @unknown_type(!tile.pointer<f32>)

// -----

// expected-error @+1 {{expected '<'}}
func.func private @ptr_without_element(!tile.ptr)

// -----

// expected-error @+1 {{unbalanced '<' character in pretty dialect name}}
func.func private @ptr_unbalanced(!tile.ptr<f32)

// -----

// expected-error @+1 {{expected '>'}}
func.func private @shared_missing_greater(!tile.shared<4xf32 f32>)
