// Round-trip of bounded buffer views: tile.make_buffer, tile.buffer_load, tile.buffer_store.
// RUN: %wavetile-opt %s | %wavetile-opt | FileCheck %s

// CHECK-LABEL: func.func @buffers
// CHECK-SAME:    (%[[P:.*]]: !tile.ptr<bf16>, %[[N:.*]]: i32, %[[O:.*]]: tensor<32x8xi32>, %[[M:.*]]: tensor<32x8xi1>)
// CHECK:         %[[B:.*]] = tile.make_buffer %[[P]], %[[N]] : !tile.ptr<bf16> -> !tile.buffer<bf16>
// CHECK:         %[[V:.*]] = tile.buffer_load %[[B]][%[[O]]] : !tile.buffer<bf16>[tensor<32x8xi32>] -> tensor<32x8xbf16>
// CHECK:         %[[W:.*]] = tile.buffer_load %[[B]][%[[O]]] mask %[[M]] : !tile.buffer<bf16>[tensor<32x8xi32>], tensor<32x8xi1> -> tensor<32x8xbf16>
// CHECK:         tile.buffer_store %[[V]], %[[B]][%[[O]]] : tensor<32x8xbf16>, !tile.buffer<bf16>[tensor<32x8xi32>]
// CHECK:         tile.buffer_store %[[W]], %[[B]][%[[O]]] mask %[[M]] : tensor<32x8xbf16>, !tile.buffer<bf16>[tensor<32x8xi32>], tensor<32x8xi1>
func.func @buffers(%p: !tile.ptr<bf16>, %n: i32, %o: tensor<32x8xi32>, %m: tensor<32x8xi1>) {
  %b = tile.make_buffer %p, %n : !tile.ptr<bf16> -> !tile.buffer<bf16>
  %v = tile.buffer_load %b[%o] : !tile.buffer<bf16>[tensor<32x8xi32>] -> tensor<32x8xbf16>
  %w = tile.buffer_load %b[%o] mask %m : !tile.buffer<bf16>[tensor<32x8xi32>], tensor<32x8xi1> -> tensor<32x8xbf16>
  tile.buffer_store %v, %b[%o] : tensor<32x8xbf16>, !tile.buffer<bf16>[tensor<32x8xi32>]
  tile.buffer_store %w, %b[%o] mask %m : tensor<32x8xbf16>, !tile.buffer<bf16>[tensor<32x8xi32>], tensor<32x8xi1>
  return
}

// Buffers of integer and narrow float elements; a buffer can be a function argument.
// CHECK-LABEL: func.func @buffer_arg
// CHECK-SAME:    (%[[B:.*]]: !tile.buffer<f8E4M3FN>, %[[O:.*]]: tensor<16xi32>, %{{.*}}: !tile.ptr<i8>, %{{.*}}: i32) -> !tile.buffer<i8>
// CHECK:         tile.buffer_load %[[B]][%[[O]]] : !tile.buffer<f8E4M3FN>[tensor<16xi32>] -> tensor<16xf8E4M3FN>
// CHECK:         tile.make_buffer %{{.*}}, %{{.*}} : !tile.ptr<i8> -> !tile.buffer<i8>
func.func @buffer_arg(%b: !tile.buffer<f8E4M3FN>, %o: tensor<16xi32>, %q: !tile.ptr<i8>, %n: i32) -> !tile.buffer<i8> {
  %0 = tile.buffer_load %b[%o] : !tile.buffer<f8E4M3FN>[tensor<16xi32>] -> tensor<16xf8E4M3FN>
  %1 = tile.make_buffer %q, %n : !tile.ptr<i8> -> !tile.buffer<i8>
  return %1 : !tile.buffer<i8>
}
