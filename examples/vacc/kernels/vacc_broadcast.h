// SPDX-License-Identifier: Apache-2.0
//
// NumPy broadcasting for binary ops, planned once per op: the result's
// shape, and the two inputs' shapes collapsed into as few dimensions as
// possible (adjacent dimensions merge when both inputs broadcast them the
// same way), so the kernel runs a short strided loop whose innermost run is
// contiguous (or a repeated scalar) and vectorized. Same shapes collapse to
// one dimension, [..., C] + [C] to two (rows), a scalar to one.
#ifndef VACC_KERNELS_VACC_BROADCAST_H_
#define VACC_KERNELS_VACC_BROADCAST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_kernel.h"

namespace vacc {

struct BroadcastPlan {
  Shape out_shape;
  // Collapsed dimensions, outermost first (at least one); the last is the
  // inner run. Strides in elements; 0 where that input is broadcast.
  std::vector<int64_t> dims, a_strides, b_strides;
  size_t num_elements() const { return static_cast<size_t>(NumElements(out_shape)); }
};

// False if the shapes do not broadcast (TensorFlow: "Incompatible shapes").
bool PlanBroadcast(const Shape& a, const Shape& b, BroadcastPlan* plan);

// Calls block(a_offset, a_row_step, b_offset, b_row_step, out_offset, rows,
// count, form) for the result elements [begin, end), in order: `rows` runs
// of `count` contiguous elements (or a repeated scalar, as `form` says),
// run r reading a at a_offset + r * a_row_step and b likewise (steps in
// elements, 0 where a row repeats) and writing out at out_offset + r *
// count. Whole rows along the innermost outer dimension come as one block,
// partial rows (where [begin, end) cuts one) as blocks of one: a bias add
// over [25088, 64] is one block per chunk, and the kernel's loop over its
// rows costs no more than a copy's (one call per row ran 1.5x slower than
// a copy of the same bytes, measured on Zen3).
template <class Block>
void ForEachRowBlock(const BroadcastPlan& p, size_t begin, size_t end, const Block& block) {
  const size_t rank = p.dims.size();
  const size_t inner = static_cast<size_t>(p.dims.back());
  const int64_t a_step = p.a_strides.back(), b_step = p.b_strides.back();
  const Operands form = a_step == 0 && b_step != 0   ? Operands::kScalarVector
                        : b_step == 0 && a_step != 0 ? Operands::kVectorScalar
                                                     : Operands::kVectorVector;
  // The outer multi-index of `begin`'s row, and the inputs' row offsets.
  std::vector<int64_t> index(rank, 0);
  int64_t a_row = 0, b_row = 0;
  size_t row = begin / inner;
  for (size_t d = rank - 1; d-- > 0;) {
    const size_t dim = static_cast<size_t>(p.dims[d]);
    index[d] = static_cast<int64_t>(row % dim);
    row /= dim;
    a_row += index[d] * p.a_strides[d];
    b_row += index[d] * p.b_strides[d];
  }
  size_t col = begin % inner;
  for (size_t pos = begin; pos < end;) {
    size_t rows = 1, count = inner - col < end - pos ? inner - col : end - pos;
    int64_t a_row_step = 0, b_row_step = 0;
    if (rank >= 2 && col == 0 && end - pos >= inner) {  // whole rows: as many as d0 has left
      const size_t d0 = rank - 2;
      const size_t left = static_cast<size_t>(p.dims[d0] - index[d0]);
      rows = (end - pos) / inner < left ? (end - pos) / inner : left;
      a_row_step = p.a_strides[d0];
      b_row_step = p.b_strides[d0];
    }
    block(static_cast<size_t>(a_row + static_cast<int64_t>(col) * a_step), a_row_step,
          static_cast<size_t>(b_row + static_cast<int64_t>(col) * b_step), b_row_step, pos, rows,
          count, form);
    pos += rows * count;
    col = 0;
    if (rank < 2) continue;  // one row: done
    // Next row: `rows` along d0, then an odometer over the outer dimensions.
    const size_t d0 = rank - 2;
    const int64_t r = static_cast<int64_t>(rows);
    index[d0] += r;
    a_row += r * p.a_strides[d0];
    b_row += r * p.b_strides[d0];
    // (Dimension 0 running out is the end of the result: no carry.)
    for (size_t d = d0; d > 0 && index[d] == p.dims[d]; --d) {
      a_row -= index[d] * p.a_strides[d];
      b_row -= index[d] * p.b_strides[d];
      index[d] = 0;
      ++index[d - 1];
      a_row += p.a_strides[d - 1];
      b_row += p.b_strides[d - 1];
    }
  }
}

// Calls run(a_offset, b_offset, out_offset, count, form) for the contiguous
// runs covering result elements [begin, end), in order: ForEachRowBlock's
// blocks one row at a time.
template <class Run>
void ForEachRun(const BroadcastPlan& p, size_t begin, size_t end, const Run& run) {
  ForEachRowBlock(p, begin, end,
                  [&](size_t ia, int64_t a_row_step, size_t ib, int64_t b_row_step, size_t io,
                      size_t rows, size_t count, Operands form) {
                    for (size_t r = 0; r < rows; ++r) {
                      const int64_t ri = static_cast<int64_t>(r);
                      run(static_cast<size_t>(static_cast<int64_t>(ia) + ri * a_row_step),
                          static_cast<size_t>(static_cast<int64_t>(ib) + ri * b_row_step),
                          io + r * count, count, form);
                    }
                  });
}

// Runs `op` over the plan's result on the compute units (ParallelFor in
// kElementwiseGrain chunks). vacc_elementwise_binary.cc.
void RunBinary(BinaryOp op, const BroadcastPlan& plan, TF_DataType dtype, const void* a,
               const void* b, void* out, ComputeUnits& units);

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_BROADCAST_H_
