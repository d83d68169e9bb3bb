// SPDX-License-Identifier: Apache-2.0
//
// MatMul and BatchMatMulV2 on the GEMM (kernels/gemm/vacc_gemm.h): float32,
// bfloat16 and half; the half types accumulate in float32 and round once.
// int32 runs plain loops (RunInt32).
// Transposes and adjoints are strides (real types: adjoint = transpose).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/vacc_kernel.h"
#include "kernels/vacc_matmul.h"
#include "kernels/vacc_simd.h"

namespace vacc {
namespace {

using gemm::Matrix;

// Below this many multiply-adds a product is not worth splitting across
// units; batches of such products are split by batch instead.
constexpr int64_t kSmallProduct = 64 * 64 * 64;

// c (float32, row-major m x n) = a * b with the current bodies: the scalar
// reference (split by rows) or the SIMD GEMM.
void Product(const Matrix& a, const Matrix& b, float* c, ComputeUnits* units) {
  if (UseScalarKernels()) {
    auto rows = [&](size_t begin, size_t end) {
      const auto b0 = static_cast<int64_t>(begin), e = static_cast<int64_t>(end);
      gemm::ReferenceGemm(gemm::RowsOf(a, b0, e - b0), b, c + b0 * b.cols, b.cols, false);
    };
    if (units == nullptr) rows(0, static_cast<size_t>(a.rows));
    else units->ParallelFor(static_cast<size_t>(a.rows), 16, rows);
    return;
  }
  gemm::Gemm(gemm::MatrixA(a), b, c, b.cols, /*accumulate=*/false, units);
}

// The products of a batch: out[i] = a[a_index[i]] * b[b_index[i]], each m x n,
// in `out_type`. float32 results land in place; bf16/f16 go through float32.
struct Batch {
  Tensor a, b, out;
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, k = 0, n = 0;
  std::vector<int64_t> a_index, b_index;  // per output matrix
};

// int32 products: plain loops (no SIMD body; integer MatMul is rare and
// memory-bound at the sizes it is used), wrapping on overflow as
// TensorFlow's int32 arithmetic does. Split by output rows of every product.
void RunInt32(const Batch& w, ComputeUnits& units) {
  const int64_t count = static_cast<int64_t>(w.a_index.size());
  units.ParallelFor(static_cast<size_t>(count * w.m), 16, [&](size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
      const int64_t batch = static_cast<int64_t>(row) / w.m, i = static_cast<int64_t>(row) % w.m;
      const int32_t* a = w.a.as<int32_t>() + w.a_index[batch] * w.m * w.k;
      const int32_t* b = w.b.as<int32_t>() + w.b_index[batch] * w.k * w.n;
      int32_t* c = w.out.as<int32_t>() + (batch * w.m + i) * w.n;
      for (int64_t j = 0; j < w.n; ++j) {
        uint32_t sum = 0;  // unsigned: wraps instead of overflowing
        for (int64_t p = 0; p < w.k; ++p) {
          const int32_t x = w.transpose_a ? a[p * w.m + i] : a[i * w.k + p];
          const int32_t y = w.transpose_b ? b[j * w.k + p] : b[p * w.n + j];
          sum += static_cast<uint32_t>(x) * static_cast<uint32_t>(y);
        }
        c[j] = static_cast<int32_t>(sum);
      }
    }
  });
}

Status RunBatch(const Batch& w, ComputeUnits& units) {
  const int64_t count = static_cast<int64_t>(w.a_index.size());
  const int64_t mn = w.m * w.n;
  if (count == 0 || mn == 0) return Status();
  const TF_DataType t = w.out.dtype;
  if (t == TF_INT32) {
    RunInt32(w, units);
    return Status();
  }
  std::unique_ptr<float[]> wide;
  float* c = w.out.as<float>();
  if (t != TF_FLOAT) {
    wide.reset(new float[static_cast<size_t>(count * mn)]);
    c = wide.get();
  }
  const int64_t esize = static_cast<int64_t>(TF_DataTypeSize(t));
  auto one = [&](int64_t i, ComputeUnits* u) {
    const char* a = w.a.as<char>() + w.a_index[i] * w.m * w.k * esize;
    const char* b = w.b.as<char>() + w.b_index[i] * w.k * w.n * esize;
    // Stored as [m,k] ([k,m] if transposed) and [k,n] ([n,k]).
    const Matrix ma = w.transpose_a ? gemm::RowMajor(a, t, w.k, w.m, true)
                                    : gemm::RowMajor(a, t, w.m, w.k, false);
    const Matrix mb = w.transpose_b ? gemm::RowMajor(b, t, w.n, w.k, true)
                                    : gemm::RowMajor(b, t, w.k, w.n, false);
    Product(ma, mb, c + i * mn, u);
  };
  if (count > 1 && w.m * w.n * w.k < kSmallProduct) {
    units.ParallelFor(static_cast<size_t>(count), 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) one(static_cast<int64_t>(i), nullptr);
    });
  } else {
    for (int64_t i = 0; i < count; ++i) one(i, &units);
  }
  if (t != TF_FLOAT) gemm::StoreFromFloat(c, w.out.data, t, count * mn, &units);
  return Status();
}

std::string Dims(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

class MatMulKernel {
 public:
  explicit MatMulKernel(KernelConstruction& k) {
    k.GetBool("transpose_a", &transpose_a_) && k.GetBool("transpose_b", &transpose_b_);
  }
  void Compute(KernelContext& ctx) {
    Batch w;
    if (!ctx.Input(0, &w.a) || !ctx.Input(1, &w.b)) return;
    if (w.a.rank() != 2 || w.b.rank() != 2) {
      ctx.Fail(TF_INVALID_ARGUMENT, "MatMul: both inputs must be matrices, got a " +
                                        ShapeText(w.a.shape) + " and b " + ShapeText(w.b.shape));
      return;
    }
    w.transpose_a = transpose_a_;
    w.transpose_b = transpose_b_;
    w.m = w.a.dim(transpose_a_ ? 1 : 0);
    w.k = w.a.dim(transpose_a_ ? 0 : 1);
    const int64_t kb = w.b.dim(transpose_b_ ? 1 : 0);
    w.n = w.b.dim(transpose_b_ ? 0 : 1);
    if (w.k != kb) {
      ctx.Fail(TF_INVALID_ARGUMENT,
               "MatMul: inner dimensions differ: a " + ShapeText(w.a.shape) +
                   " (transpose_a=" + (transpose_a_ ? "true" : "false") + ") is " +
                   Dims(w.m, w.k) + ", b " + ShapeText(w.b.shape) +
                   " (transpose_b=" + (transpose_b_ ? "true" : "false") + ") is " +
                   Dims(kb, w.n));
      return;
    }
    if (!ctx.AllocateOutput(0, w.a.dtype, {w.m, w.n}, &w.out)) return;
    ctx.Enqueue([a = w.a, b = w.b, out = w.out, ta = transpose_a_, tb = transpose_b_](
                    ComputeUnits& units) { return MatMulWork(a, b, ta, tb, out, units); });
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
};

// BatchMatMulV2: [..., m, k] x [..., k, n] with NumPy broadcasting of the
// leading (batch) dimensions.
class BatchMatMulKernel {
 public:
  explicit BatchMatMulKernel(KernelConstruction& k) {
    k.GetBool("adj_x", &adj_x_) && k.GetBool("adj_y", &adj_y_);
  }
  void Compute(KernelContext& ctx) {
    Batch w;
    if (!ctx.Input(0, &w.a) || !ctx.Input(1, &w.b)) return;
    const int ra = w.a.rank(), rb = w.b.rank();
    if (ra < 2 || rb < 2) {
      ctx.Fail(TF_INVALID_ARGUMENT, "BatchMatMulV2: inputs must have rank >= 2, got x " +
                                        ShapeText(w.a.shape) + " and y " + ShapeText(w.b.shape));
      return;
    }
    w.transpose_a = adj_x_;
    w.transpose_b = adj_y_;
    w.m = w.a.dim(ra - (adj_x_ ? 1 : 2));
    w.k = w.a.dim(ra - (adj_x_ ? 2 : 1));
    const int64_t kb = w.b.dim(rb - (adj_y_ ? 1 : 2));
    w.n = w.b.dim(rb - (adj_y_ ? 2 : 1));
    if (w.k != kb) {
      ctx.Fail(TF_INVALID_ARGUMENT,
               "BatchMatMulV2: inner dimensions differ: x " + ShapeText(w.a.shape) +
                   " (adj_x=" + (adj_x_ ? "true" : "false") + ") has " + std::to_string(w.k) +
                   " columns, y " + ShapeText(w.b.shape) + " (adj_y=" +
                   (adj_y_ ? "true" : "false") + ") has " + std::to_string(kb) + " rows");
      return;
    }
    // Broadcast the batch dimensions, aligned from the right.
    const int rank = std::max(ra, rb) - 2;
    Shape out_batch(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) {
      const int da = d - (rank - (ra - 2)), db = d - (rank - (rb - 2));
      const int64_t xa = da >= 0 ? w.a.dim(da) : 1, xb = db >= 0 ? w.b.dim(db) : 1;
      if (xa != xb && xa != 1 && xb != 1) {
        ctx.Fail(TF_INVALID_ARGUMENT, "BatchMatMulV2: batch dimensions of x " +
                                          ShapeText(w.a.shape) + " and y " +
                                          ShapeText(w.b.shape) + " do not broadcast");
        return;
      }
      out_batch[static_cast<size_t>(d)] = xa == 1 ? xb : xa;
    }
    const int64_t count = NumElements(out_batch);
    w.a_index.resize(static_cast<size_t>(count));
    w.b_index.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      // Output batch index -> each input's, dimension by dimension (size-1
      // dimensions repeat).
      int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t size = out_batch[static_cast<size_t>(d)];
        const int64_t pos = rest % size;
        rest /= size;
        const int da = d - (rank - (ra - 2)), db = d - (rank - (rb - 2));
        const int64_t xa = da >= 0 ? w.a.dim(da) : 1, xb = db >= 0 ? w.b.dim(db) : 1;
        ia += (xa == 1 ? 0 : pos) * sa;
        ib += (xb == 1 ? 0 : pos) * sb;
        sa *= xa;
        sb *= xb;
      }
      w.a_index[static_cast<size_t>(i)] = ia;
      w.b_index[static_cast<size_t>(i)] = ib;
    }
    Shape out_shape = out_batch;
    out_shape.push_back(w.m);
    out_shape.push_back(w.n);
    if (!ctx.AllocateOutput(0, w.a.dtype, out_shape, &w.out)) return;
    ctx.Enqueue([w = std::move(w)](ComputeUnits& units) { return RunBatch(w, units); });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

}  // namespace

Status MatMulWork(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
                  const Tensor& out, ComputeUnits& units) {
  Batch w;
  w.a = a;
  w.b = b;
  w.out = out;
  w.transpose_a = transpose_a;
  w.transpose_b = transpose_b;
  w.m = out.dim(0);
  w.n = out.dim(1);
  w.k = a.dim(transpose_a ? 0 : 1);
  w.a_index = {0};
  w.b_index = {0};
  return RunBatch(w, units);
}

void RegisterMatMulKernels() {
  RegisterKernel<MatMulKernel>("MatMul", {TF_FLOAT, TF_BFLOAT16, TF_HALF, TF_INT32});
  RegisterKernel<BatchMatMulKernel>("BatchMatMulV2", {TF_FLOAT, TF_BFLOAT16, TF_HALF, TF_INT32});
}

}  // namespace vacc
