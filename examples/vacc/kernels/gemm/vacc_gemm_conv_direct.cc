// SPDX-License-Identifier: Apache-2.0
//
// The direct convolution (vacc_gemm_conv_direct.h):
//
//   pack the whole filter as KC x NR panels, in parallel   (once; it is small)
//   for each output row (n, oh), in parallel
//     for each K block (whole kernel rows, up to ~KC values)
//       gather the row's border pixels (or all of it, if the row's patches
//       reach into the top/bottom padding) as packed panels
//       for each B panel
//         interior pixels, 6 at a time: RowsKernel on x in place
//         gathered pixels: the packed micro-kernel
//
// A row's right border and the next row's left border are consecutive
// pixels, so one item gathers them together (the "seam"): a 3x3 SAME conv
// then runs one packed tile per seam instead of one per border, each with
// 1 of its 6 rows used (a 56-pixel row was 9 interior tiles + 2 border
// tiles, now 9 + 1).
#include "kernels/gemm/vacc_gemm_conv_direct.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_im2col.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_split.h"

namespace vacc {
namespace gemm {
namespace {

thread_local PackBuffer t_filter;   // the packed filter, of the thread running the conv
thread_local PackBuffer t_gathered;  // each unit's gathered border pixels

// A K block: kernel rows [kh, kh + rows) in full, or, when one kernel row is
// longer than KC, columns [col0, col0 + len) of kernel row kh.
struct KBlock {
  int64_t k0 = 0, kc = 0;     // columns of the patch matrix
  int64_t a_offset = 0;       // from a pixel's tap (0, 0) to the block's first value
  int64_t seg_len = 0;        // values per kernel row in this block
  int64_t packed_offset = 0;  // of the block's panels in the packed filter
};

std::vector<KBlock> Blocks(const ConvGeometry& g, int64_t nr) {
  const int64_t row_len = g.k_w * g.in_c;
  const int64_t row_stride = g.dilation_h * g.in_w * g.in_c;
  const int64_t panels = CeilDiv(g.out_c, nr);
  std::vector<KBlock> blocks;
  int64_t offset = 0;
  auto add = [&](int64_t k0, int64_t kc, int64_t a_offset, int64_t seg_len) {
    blocks.push_back({k0, kc, a_offset, seg_len, offset});
    offset += panels * nr * kc;
  };
  if (row_len > kRowsKC) {  // split each kernel row into equal pieces
    const int64_t pieces = CeilDiv(row_len, kRowsKC), len = CeilDiv(row_len, pieces);
    for (int64_t kh = 0; kh < g.k_h; ++kh) {
      for (int64_t j = 0; j < row_len; j += len) {
        const int64_t n = std::min(len, row_len - j);
        add(kh * row_len + j, n, kh * row_stride + j, n);
      }
    }
  } else {  // whole kernel rows, as many as fit in KC (at least one)
    const int64_t per = std::max<int64_t>(1, kRowsKC / row_len);
    for (int64_t kh = 0; kh < g.k_h; kh += per) {
      const int64_t rows = std::min(per, g.k_h - kh);
      add(kh * row_len, rows * row_len, kh * row_stride, row_len);
    }
  }
  return blocks;
}

}  // namespace

bool DirectConvApplies(const ConvGeometry& g, TF_DataType x_dtype) {
  // An empty patch (Cin = 0) is the GEMM's empty sum: Gemm zeroes y.
  return x_dtype == TF_FLOAT && g.dilation_w == 1 && g.k_h * g.k_w * g.in_c > 0;
}

void DirectConv2D(const ConvGeometry& g, const float* x, const Matrix& w, float* y,
                  ComputeUnits* units) {
  const MicroKernel packed = CurrentMicroKernel();
  const RowsKernel direct = CurrentRowsKernel();
  const int64_t nr = packed.nr, mr = packed.mr;
  const int64_t panels = CeilDiv(g.out_c, nr);
  const std::vector<KBlock> blocks = Blocks(g, nr);
  const int64_t patch = g.k_h * g.k_w * g.in_c;
  float* filter = t_filter.Get(panels * nr * patch);
  if (filter == nullptr) std::abort();  // out of host memory
  // The filter, packed once: (block, panel) items.
  const int64_t block_count = static_cast<int64_t>(blocks.size());
  ForEach(units, static_cast<size_t>(block_count * panels), [&](size_t begin, size_t end) {
    for (int64_t item = static_cast<int64_t>(begin); item < static_cast<int64_t>(end); ++item) {
      const KBlock& kb = blocks[static_cast<size_t>(item / panels)];
      const int64_t p = item % panels;
      PackB(w, kb.k0, kb.kc, p * nr, std::min(nr, g.out_c - p * nr), packed.nr,
            filter + kb.packed_offset + p * nr * kb.kc);
    }
  });

  // Output pixels whose patch lies inside the input horizontally:
  // ow in [ow_lo, ow_hi).
  auto ceil_div_nonneg = [](int64_t a, int64_t b) { return a <= 0 ? 0 : CeilDiv(a, b); };
  const int64_t ow_lo = std::min(g.out_w, ceil_div_nonneg(g.pad_left, g.stride_w));
  const int64_t last_iw = g.in_w - g.k_w;  // the largest valid iw0 (dilation_w is 1)
  const int64_t ow_hi =
      last_iw + g.pad_left < 0
          ? ow_lo
          : std::max(ow_lo, std::min(g.out_w, (last_iw + g.pad_left) / g.stride_w + 1));
  const std::unique_ptr<PackableA> gather = Im2ColA(g, x, TF_FLOAT);
  const int64_t kc_max = [&] {
    int64_t m = 0;
    for (const KBlock& kb : blocks) m = std::max(m, kb.kc);
    return m;
  }();
  const int64_t lda = g.stride_w * g.in_c;
  const int64_t seg_stride = g.dilation_h * g.in_w * g.in_c;

  // Whether a row's patches stay inside the input vertically (then only its
  // borders are gathered; otherwise all of it).
  const int64_t rows_total = g.batch * g.out_h;
  auto rows_inside = [&](int64_t row) {
    const int64_t ih0 = row % g.out_h * g.stride_h - g.pad_top;
    return ih0 >= 0 && ih0 + (g.k_h - 1) * g.dilation_h < g.in_h;
  };

  // Output rows one at a time (each is tens of microseconds of work): a
  // unit finishing early takes the next row, not a quarter of its share.
  ForEachItem(units, static_cast<size_t>(rows_total), [&](size_t begin, size_t end) {
    // The head, then the seam, each rounded up to whole panels.
    float* gathered = t_gathered.Get((CeilDiv(g.out_w + ow_lo, mr) + 2) * mr * kc_max);
    if (gathered == nullptr) std::abort();  // out of host memory
    for (int64_t row = static_cast<int64_t>(begin); row < static_cast<int64_t>(end); ++row) {
      const int64_t n = row / g.out_h, oh = row % g.out_h;
      const int64_t ih0 = oh * g.stride_h - g.pad_top;
      const bool inside = rows_inside(row);
      // Pixels gathered, relative to the row's first: the head [0, head)
      // and the seam [hi, hi + seam), which runs into the next row's left
      // border when that row is inside too (its item then skips its head).
      const int64_t lo = inside ? ow_lo : g.out_w, hi = inside ? ow_hi : g.out_w;
      const int64_t head = !inside ? g.out_w : row == 0 || !rows_inside(row - 1) ? ow_lo : 0;
      const int64_t seam =
          !inside ? 0
                  : g.out_w - hi + (row + 1 < rows_total && rows_inside(row + 1) ? ow_lo : 0);
      const int64_t pixel0 = row * g.out_w;
      float* y_row = y + pixel0 * g.out_c;
      for (size_t bi = 0; bi < blocks.size(); ++bi) {
        const KBlock& kb = blocks[bi];
        const bool add = bi > 0;
        const int64_t seam_at = CeilDiv(head, mr) * mr;  // in the buffer, after the head
        if (head > 0) gather->Pack(pixel0, head, kb.k0, kb.kc, packed.mr, gathered);
        if (seam > 0) {
          gather->Pack(pixel0 + hi, seam, kb.k0, kb.kc, packed.mr, gathered + seam_at * kb.kc);
        }
        // Tap (0, 0) of pixel lo, offset to the block (only formed when
        // there are interior pixels: otherwise it may point outside x).
        const float* a0 =
            lo < hi ? x + ((n * g.in_h + ih0) * g.in_w + (lo * g.stride_w - g.pad_left)) *
                              g.in_c + kb.a_offset
                    : nullptr;
        for (int64_t p = 0; p < panels; ++p) {
          const float* b_panel = filter + kb.packed_offset + p * nr * kb.kc;
          const int n_eff = static_cast<int>(std::min(nr, g.out_c - p * nr));
          float* y_col = y_row + p * nr;
          for (int64_t i = lo; i < hi;) {
            const int r = RowsKernel::TileRows(hi - i);
            direct.run[r](kb.kc, a0 + (i - lo) * lda, lda, kb.seg_len, seg_stride, b_panel,
                          y_col + i * g.out_c, g.out_c, n_eff, add);
            i += r;
          }
          auto run_gathered = [&](int64_t first, int64_t count, const float* a) {
            for (int64_t i = 0; i < count; i += mr) {
              const int m_eff = static_cast<int>(std::min(mr, count - i));
              packed.run(kb.kc, a + i * kb.kc, b_panel, y_col + (first + i) * g.out_c, g.out_c,
                         m_eff, n_eff, add);
            }
          };
          run_gathered(0, head, gathered);
          run_gathered(hi, seam, gathered + seam_at * kb.kc);
        }
      }
    }
  });
}

}  // namespace gemm
}  // namespace vacc
