// SPDX-License-Identifier: Apache-2.0
#include "kernels/gemm/vacc_gemm_pack.h"

#include <algorithm>
#include <cstring>

#include "kernels/gemm/vacc_gemm_interleave.h"
#include "kernels/vacc_half.h"

namespace vacc {
namespace gemm {
namespace {

// Widens n contiguous values: a memcpy for float32 (the common B case: a
// row of a row-major B), an element loop otherwise.
template <typename T>
void CopyRun(const T* in, int n, float* out) {
  for (int l = 0; l < n; ++l) out[l] = ToFloat(in[l]);
}
template <>
void CopyRun<float>(const float* in, int n, float* out) {
  // A full panel row is 8, 16 or 32 floats (NR on SSE4, AVX2, AVX-512), or
  // 6 (MR, a transposed A): a constant-size copy compiles to a few vector
  // moves; a memcpy call would cost more than the copy (packing B is most
  // of a small GEMM's time).
  switch (n) {
    case 6: std::memcpy(out, in, 6 * sizeof(float)); break;
    case 8: std::memcpy(out, in, 8 * sizeof(float)); break;
    case 16: std::memcpy(out, in, 16 * sizeof(float)); break;
    case 32: std::memcpy(out, in, 32 * sizeof(float)); break;
    default: std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float)); break;
  }
}

// A strided block as `panels` panels of `width` lanes along one dimension
// ("lanes") and `depth` steps along the other: dst[p*depth*width + k*width + l]
// = src[(p*width + l)*lane_stride + k*depth_stride]. Shared by A (lanes are
// rows) and B (lanes are columns). The loop order follows the stride that is
// 1, so reads are contiguous whichever way the operand is transposed.
// PackPanels when the lanes are contiguous (a row-major B, whose rows run
// along the lanes): a few source rows at a time, each panel's piece of them
// in turn. Walking a panel down all the rows strides a whole row per value
// (a page apart when N = 1024), which hardware prefetchers do not follow;
// a whole row at a time scatters single lines across every panel. A few
// rows keep as many sequential read streams and write consecutive lines
// to each panel. Packing a 2048 x 2048 B on Zen3 with four rows (thread
// CPU time, best of 20): 1.6 ms, against 2.3 ms a row at a time and
// 3.3 ms a panel at a time.
// Full-line panels (16 and 32 floats: AVX2, AVX-512) take as many rows as
// write 1 KiB per panel (PackedRowsPerPiece): 16 rows of 16 floats, 8 of
// 32. On an Intel Xeon (one unit, the variants alternating, medians of 300)
// a 1024 x 1024 B packed 16 wide took 330-350 us against 420-450 with four
// rows (so 256 x 1024 x 1024 on the AVX2 kernels ran 1.007-1.011x, on
// two units 1.01x); 32 wide, 2048 x 2048 took 1.46 ms against 1.56, and
// 1024 x 1024 the same. Zen3 not measured. Narrower panels (SSE4, or a
// transposed A's MR-wide panels) keep four, and so do wider ones (a pair's
// 64 floats).
int64_t PackedRowsPerPiece(int width) {
  constexpr int64_t kPieceBytes = 1024, kFewestRows = 4;
  if (width < 16) return kFewestRows;
  return std::max(kFewestRows, kPieceBytes / (width * static_cast<int64_t>(sizeof(float))));
}

// A single panel (the short-A path packs one panel before its tiles) has
// no such streams: a line or two per row, rows far apart. Out of cache
// each row waits for memory, so the row kSinglePanelFetchRows on is
// fetched as each is copied. Measured on Zen4 in a sequence of the Keras
// MLP step's eight GEMMs (operands out of cache, as in a training step),
// interleaved: the classifier's weight gradient (512 x 256 x 10, A^T,
// which packs 16 such panels of a 256 x 512 matrix) 128 -> 104 us on one
// unit, 91 -> 76 us on two; the other seven within noise.
constexpr int64_t kSinglePanelFetchRows = 16;

template <typename T>
void PackContiguousLanes(const T* src, int64_t depth_stride, int64_t lanes, int64_t depth,
                         int width, float* dst) {
  const int64_t rows = PackedRowsPerPiece(width);  // per piece of each panel
  const int64_t panel_size = depth * width;
  const bool single_panel = lanes <= width;
  for (int64_t k0 = 0; k0 < depth; k0 += rows) {
    const int64_t k1 = std::min(depth, k0 + rows);
    for (int64_t l0 = 0; l0 < lanes; l0 += width) {
      const int full = static_cast<int>(std::min<int64_t>(width, lanes - l0));
      float* out = dst + (l0 / width) * panel_size;
      for (int64_t k = k0; k < k1; ++k) {
        if (single_panel && k + kSinglePanelFetchRows < depth) {
          const T* ahead = src + (k + kSinglePanelFetchRows) * depth_stride + l0;
          __builtin_prefetch(ahead);
          __builtin_prefetch(ahead + full - 1);
        }
        CopyRun(src + k * depth_stride + l0, full, out + k * width);
        if (full < width) std::fill(out + k * width + full, out + (k + 1) * width, 0.0f);
      }
    }
  }
}

template <typename T>
void PackPanels(const T* src, int64_t lane_stride, int64_t depth_stride, int64_t lanes,
                int64_t depth, int width, float* dst) {
  if (lane_stride == 1 && depth_stride != 1) {
    PackContiguousLanes(src, depth_stride, lanes, depth, width, dst);
    return;
  }
  for (int64_t l0 = 0; l0 < lanes; l0 += width) {
    const int full = static_cast<int>(std::min<int64_t>(width, lanes - l0));
    const T* panel = src + l0 * lane_stride;
    if (depth_stride == 1 && lane_stride != 1 && full == width && width <= 32) {
      // Each lane is contiguous along depth (A not transposed): interleave.
      const T* rows[32];
      for (int l = 0; l < width; ++l) rows[l] = panel + l * lane_stride;
      InterleaveRows(rows, width, depth, dst);
    } else if (depth_stride == 1 && lane_stride != 1) {
      // The same for a partial panel: one lane at a time.
      for (int l = 0; l < full; ++l) {
        const T* in = panel + l * lane_stride;
        for (int64_t k = 0; k < depth; ++k) dst[k * width + l] = ToFloat(in[k]);
      }
    } else {
      // Lanes are (nearly) contiguous at each depth step: a row at a time.
      for (int64_t k = 0; k < depth; ++k) {
        const T* in = panel + k * depth_stride;
        float* out = dst + k * width;
        for (int l = 0; l < full; ++l) out[l] = ToFloat(in[l * lane_stride]);
      }
    }
    if (full < width) {
      for (int64_t k = 0; k < depth; ++k) {
        std::fill(dst + k * width + full, dst + (k + 1) * width, 0.0f);
      }
    }
    dst += depth * width;
  }
}

template <typename T>
void PackMatrix(const Matrix& m, int64_t lane0, int64_t lanes, int64_t depth0, int64_t depth,
                int width, bool lanes_are_rows, float* dst) {
  const T* base = static_cast<const T*>(m.data);
  const int64_t lane_stride = lanes_are_rows ? m.row_stride : m.col_stride;
  const int64_t depth_stride = lanes_are_rows ? m.col_stride : m.row_stride;
  PackPanels(base + lane0 * lane_stride + depth0 * depth_stride, lane_stride, depth_stride, lanes,
             depth, width, dst);
}

void Pack(const Matrix& m, int64_t lane0, int64_t lanes, int64_t depth0, int64_t depth,
          int width, bool lanes_are_rows, float* dst) {
  switch (m.dtype) {
    case TF_BFLOAT16:
      PackMatrix<BFloat16>(m, lane0, lanes, depth0, depth, width, lanes_are_rows, dst);
      break;
    case TF_HALF:
      PackMatrix<Half>(m, lane0, lanes, depth0, depth, width, lanes_are_rows, dst);
      break;
    default:
      PackMatrix<float>(m, lane0, lanes, depth0, depth, width, lanes_are_rows, dst);
      break;
  }
}

}  // namespace

Matrix RowMajor(const void* data, TF_DataType dtype, int64_t rows, int64_t cols, bool transpose) {
  Matrix m;
  m.data = data;
  m.dtype = dtype;
  m.rows = transpose ? cols : rows;
  m.cols = transpose ? rows : cols;
  m.row_stride = transpose ? 1 : cols;
  m.col_stride = transpose ? cols : 1;
  return m;
}

void MatrixA::Pack(int64_t row0, int64_t mc, int64_t col0, int64_t kc, int mr, float* dst) const {
  gemm::Pack(m_, row0, mc, col0, kc, mr, /*lanes_are_rows=*/true, dst);
}

void PackB(const Matrix& b, int64_t row0, int64_t kc, int64_t col0, int64_t nc, int nr,
           float* dst) {
  Pack(b, col0, nc, row0, kc, nr, /*lanes_are_rows=*/false, dst);
}

}  // namespace gemm
}  // namespace vacc
