// SPDX-License-Identifier: Apache-2.0
//
// General matrix multiply for the dense-math kernels (MatMul, BatchMatMulV2,
// Conv2D and its gradients): C (M x N, float32) = A (M x K) * B (K x N),
// or C += A * B.
//
// Built the way BLIS and GotoBLAS build it (vacc_gemm.cc has the loops):
// cache blocks of B and A are packed into contiguous micro-panels
// (vacc_gemm_pack.cc), and a register-blocked micro-kernel multiplies one
// MR x KC panel of A by one KC x NR panel of B (vacc_gemm_microkernel.cc).
// Operands may be float32, bfloat16 or half: packing widens them to float32,
// products accumulate in float32.
//
// A is "packable": anything that can write a block of itself as packed
// panels. A matrix in memory is one such source; Conv2D's implicit im2col is
// another (the patches are gathered straight into the panels, no im2col
// buffer is ever materialized).
//
// TODO(vendor): a device with a matrix unit replaces the micro-kernel (or
// the whole of Gemm) with its own; keep ReferenceGemm as the oracle.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_H_

#include <cstdint>
#include <string>

#include "tensorflow/c/tf_datatype.h"
#include "vacc_compute_units.h"

namespace vacc {
namespace gemm {

// A matrix in memory: element (r, c) is at data + r*row_stride + c*col_stride
// elements. A transposed operand is the same memory with rows/cols and the
// strides swapped, so transposes cost nothing until packing.
struct Matrix {
  const void* data = nullptr;
  TF_DataType dtype = TF_FLOAT;  // TF_FLOAT, TF_BFLOAT16 or TF_HALF
  int64_t rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 1;
};

// A row-major `rows` x `cols` buffer, seen transposed if `transpose`.
Matrix RowMajor(const void* data, TF_DataType dtype, int64_t rows, int64_t cols, bool transpose);

// Rows [row0, row0 + rows) x columns [col0, col0 + cols) of m: the same
// memory, from that element on, with m's strides.
inline Matrix SubMatrix(const Matrix& m, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
  Matrix sub = m;
  sub.data = static_cast<const char*>(m.data) + (row0 * m.row_stride + col0 * m.col_stride) *
                                                    static_cast<int64_t>(TF_DataTypeSize(m.dtype));
  sub.rows = rows;
  sub.cols = cols;
  return sub;
}
// Rows [row0, row0 + rows) of m, all its columns; columns [col0, col0 +
// cols), all its rows.
inline Matrix RowsOf(const Matrix& m, int64_t row0, int64_t rows) {
  return SubMatrix(m, row0, rows, 0, m.cols);
}
inline Matrix ColumnsOf(const Matrix& m, int64_t col0, int64_t cols) {
  return SubMatrix(m, 0, m.rows, col0, cols);
}

// The left operand as the GEMM driver sees it.
class PackableA {
 public:
  virtual ~PackableA() = default;
  virtual int64_t rows() const = 0;  // M
  virtual int64_t cols() const = 0;  // K
  // Writes rows [row0, row0 + mc) x columns [col0, col0 + kc) as
  // ceil(mc / mr) micro-panels, one after the other; panel p holds, for each
  // k, the mr values of rows row0 + p*mr ... (dst[p*mr*kc + k*mr + r]).
  // Rows past mc are zero. Called concurrently for disjoint blocks.
  virtual void Pack(int64_t row0, int64_t mc, int64_t col0, int64_t kc, int mr,
                    float* dst) const = 0;
  // The operand as a matrix in memory, when it is one (NULL otherwise): a
  // short float32 A with contiguous rows is read in place, not packed.
  virtual const Matrix* InMemory() const { return nullptr; }
};

// A matrix in memory as the left operand.
class MatrixA : public PackableA {
 public:
  explicit MatrixA(const Matrix& m) : m_(m) {}
  int64_t rows() const override { return m_.rows; }
  int64_t cols() const override { return m_.cols; }
  void Pack(int64_t row0, int64_t mc, int64_t col0, int64_t kc, int mr,
            float* dst) const override;
  const Matrix* InMemory() const override { return &m_; }

 private:
  Matrix m_;
};

// C = A*B, or C += A*B if `accumulate`; C is row-major with leading
// dimension ldc. Splits the work across `units` (the caller takes part);
// nullptr runs it all on the calling thread. Any of M, N, K may be 0.
void Gemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
          ComputeUnits* units);

// The drivers Gemm chooses between by shape. Each computes any shape
// correctly (the tests run every one on every shape); they differ in speed.
//   PackedGemm    A and B packed in cache blocks (vacc_gemm.cc): the general case
//   SmallMGemm    a short A (vacc_gemm_small_m.h)
//   NarrowBGemm   a narrow B (vacc_gemm_narrow_b.h)
void PackedGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units);

// The same product with plain loops on the calling thread: the reference the
// kernels use with VACC_SIMD=scalar, and what the tests trust.
void ReferenceGemm(const Matrix& a, const Matrix& b, float* c, int64_t ldc, bool accumulate);

// Reads element i of a float/bfloat16/half buffer as float32 (tests, edges).
float LoadAsFloat(const void* data, TF_DataType dtype, int64_t i);

// Rounds n float32 values into a float/bfloat16/half buffer (the store of a
// bf16/f16 GEMM), split across `units` if given.
void StoreFromFloat(const float* src, void* dst, TF_DataType dtype, int64_t n,
                    ComputeUnits* units);

// The packed driver's tile for the SIMD target and tile shape selected now
// (PackedDriverMicroKernel): "AVX2 6x16", "AVX3 6x64".
std::string MicroKernelName();

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_H_
