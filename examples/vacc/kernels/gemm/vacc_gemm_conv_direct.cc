// SPDX-License-Identifier: Apache-2.0
//
// The direct convolution (vacc_gemm_conv_direct.h):
//
//   pack the whole filter as KC x NR panels, in parallel   (once; it is small)
//   for each output row (n, oh), in parallel
//     for each K block (whole kernel rows, up to ~KC values)
//       gather the row's border pixels as packed panels
//       for each B panel
//         interior pixels, 6 at a time: RowsKernel on x in place, over the
//           block's kernel rows that read the input (near the top and
//           bottom, the others read only padding: skipped)
//         gathered pixels: the packed micro-kernel
//
// A row's right border and the next row's left border are consecutive
// pixels, so one item gathers them together (the "seam"): a 3x3 SAME conv
// then runs one packed tile per seam instead of one per border, each with
// 1 of its 6 rows used (a 56-pixel row was 9 interior tiles + 2 border
// tiles, now 9 + 1). The seam also takes a few of the row's last interior
// pixels when that fills its tile (SeamExtension): that row is now 7 + 4 + 4
// interior rows and one full seam tile, 56 FMA row slots instead of 60.
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
  int64_t kh0 = 0, kh_count = 0;  // the kernel rows it covers (1 for a piece of one)
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
  auto add = [&](int64_t k0, int64_t kc, int64_t kh0, int64_t kh_count, int64_t a_offset,
                 int64_t seg_len) {
    blocks.push_back({k0, kc, kh0, kh_count, a_offset, seg_len, offset});
    offset += panels * nr * kc;
  };
  if (row_len > kRowsKC) {  // split each kernel row into equal pieces
    const int64_t pieces = CeilDiv(row_len, kRowsKC), len = CeilDiv(row_len, pieces);
    for (int64_t kh = 0; kh < g.k_h; ++kh) {
      for (int64_t j = 0; j < row_len; j += len) {
        const int64_t n = std::min(len, row_len - j);
        add(kh * row_len + j, n, kh, 1, kh * row_stride + j, n);
      }
    }
  } else {  // whole kernel rows, as many as fit in KC (at least one)
    const int64_t per = std::max<int64_t>(1, kRowsKC / row_len);
    for (int64_t kh = 0; kh < g.k_h; kh += per) {
      const int64_t rows = std::min(per, g.k_h - kh);
      add(kh * row_len, rows * row_len, kh, rows, kh * row_stride, row_len);
    }
  }
  return blocks;
}

// How many of a row's last interior pixels to gather with its seam (its
// right border and the next row's left border): the number that makes the
// row cost the fewest FMA slots. A packed seam tile costs mr rows however
// few it holds, and an in-place tile of r rows costs max(r, kBusyRows).
// The 7x7 stem's rows (109 interior pixels, a 3-pixel seam) cost 116 row
// slots as they were and 112 with 3 pixels moved; the 3x3 SAME conv's (54
// interior, a seam of 2) 60 and 56 with 4 moved. Ties keep fewer moved:
// each one is gathered.
int64_t SeamExtension(int64_t interior, int64_t seam, int64_t mr) {
  // The fewest rows whose 2 accumulators each keep both FMA pipes busy
  // (2 pipes x 4 cycles latency on Zen3 = 8 chains); fewer rows take as long.
  constexpr int64_t kBusyRows = 4;
  if (seam == 0) return 0;  // no packed tile to fill
  auto cost = [&](int64_t extra) {
    int64_t slots = CeilDiv(seam + extra, mr) * mr;
    for (int64_t left = interior - extra; left > 0;) {
      const int64_t r = RowsKernel::TileRows(left);
      slots += std::max(r, kBusyRows);
      left -= r;
    }
    return slots;
  };
  int64_t best = 0, best_cost = cost(0);
  for (int64_t extra = 1; extra <= std::min(interior, 2 * mr - 1); ++extra) {
    const int64_t c = cost(extra);
    if (c < best_cost) best = extra, best_cost = c;
  }
  return best;
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

  // The kernel rows [kh_lo, kh_hi) whose taps fall inside the input for
  // output row `row`; the others read only the top/bottom padding (zeros),
  // so the in-place kernels skip them. A row with none (possible only with
  // padding of at least a kernel's height) is gathered whole.
  const int64_t rows_total = g.batch * g.out_h;
  auto valid_kernel_rows = [&](int64_t row, int64_t* kh_lo, int64_t* kh_hi) {
    const int64_t ih0 = row % g.out_h * g.stride_h - g.pad_top;
    *kh_lo = ih0 >= 0 ? 0 : CeilDiv(-ih0, g.dilation_h);
    *kh_hi = ih0 >= g.in_h ? 0 : std::min(g.k_h, (g.in_h - 1 - ih0) / g.dilation_h + 1);
  };
  auto row_in_place = [&](int64_t row) {
    int64_t kh_lo, kh_hi;
    valid_kernel_rows(row, &kh_lo, &kh_hi);
    return kh_lo < kh_hi;
  };

  // How many interior pixels join a row's seam (SeamExtension): the border
  // is the row's right one, plus the next row's left one when that row runs
  // in place; computed once for both.
  const int64_t right_border = g.out_w - ow_hi;
  const int64_t extra_to_next = SeamExtension(ow_hi - ow_lo, right_border + ow_lo, mr);
  const int64_t extra_alone = SeamExtension(ow_hi - ow_lo, right_border, mr);

  // Output rows one at a time (each is tens of microseconds of work): a
  // unit finishing early takes the next row, not a quarter of its share.
  ForEachItem(units, static_cast<size_t>(rows_total), [&](size_t begin, size_t end) {
    // The head, then the seam (with up to 2 mr - 1 interior pixels), each
    // rounded up to whole panels.
    float* gathered = t_gathered.Get((CeilDiv(g.out_w + ow_lo, mr) + 4) * mr * kc_max);
    if (gathered == nullptr) std::abort();  // out of host memory
    for (int64_t row = static_cast<int64_t>(begin); row < static_cast<int64_t>(end); ++row) {
      const int64_t n = row / g.out_h, oh = row % g.out_h;
      const int64_t ih0 = oh * g.stride_h - g.pad_top;
      int64_t kh_lo, kh_hi;
      valid_kernel_rows(row, &kh_lo, &kh_hi);
      const bool in_place = kh_lo < kh_hi;
      // Pixels gathered, relative to the row's first: the head [0, head)
      // and the seam [hi, hi + seam), which runs into the next row's left
      // border when that row runs in place too (its item then skips its head).
      // The seam also takes the row's last `extra` interior pixels, when
      // that fills its packed tiles better (SeamExtension).
      const int64_t head = !in_place ? g.out_w : row == 0 || !row_in_place(row - 1) ? ow_lo : 0;
      const bool to_next = row + 1 < rows_total && row_in_place(row + 1);
      const int64_t border = !in_place ? 0 : right_border + (to_next ? ow_lo : 0);
      const int64_t extra = !in_place ? 0 : to_next ? extra_to_next : extra_alone;
      const int64_t lo = in_place ? ow_lo : g.out_w, hi = in_place ? ow_hi - extra : g.out_w;
      const int64_t seam = border + extra;
      const int64_t pixel0 = row * g.out_w;
      float* y_row = y + pixel0 * g.out_c;
      // Whether an in-place block ran yet: blocks reading only padding are
      // skipped there, so the first one to run may not be block 0.
      bool in_place_add = false;
      for (size_t bi = 0; bi < blocks.size(); ++bi) {
        const KBlock& kb = blocks[bi];
        const bool add = bi > 0;
        const int64_t seam_at = CeilDiv(head, mr) * mr;  // in the buffer, after the head
        if (head > 0) gather->Pack(pixel0, head, kb.k0, kb.kc, packed.mr, gathered);
        if (seam > 0) {
          gather->Pack(pixel0 + hi, seam, kb.k0, kb.kc, packed.mr, gathered + seam_at * kb.kc);
        }
        // The block's kernel rows that read the input: [r0, r1), skipping
        // `skip` rows (of seg_len values each) at its start.
        const int64_t r0 = std::max(kb.kh0, kh_lo), r1 = std::min(kb.kh0 + kb.kh_count, kh_hi);
        const bool run_in_place = lo < hi && r0 < r1;
        const int64_t skip = r0 - kb.kh0, kc_in_place = (r1 - r0) * kb.seg_len;
        // Tap (r0, 0) of pixel lo, an offset summed before it is added to x
        // (ih0 may be negative; the tap is inside x).
        const float* a0 =
            run_in_place
                ? x + (((n * g.in_h + ih0) * g.in_w + (lo * g.stride_w - g.pad_left)) * g.in_c +
                       kb.a_offset + skip * seg_stride)
                : nullptr;
        for (int64_t p = 0; p < panels; ++p) {
          const float* b_panel = filter + kb.packed_offset + p * nr * kb.kc;
          const int n_eff = static_cast<int>(std::min(nr, g.out_c - p * nr));
          float* y_col = y_row + p * nr;
          if (run_in_place) {
            RowTilesInPlace(direct, kc_in_place, a0, lda, b_panel + skip * kb.seg_len * nr,
                            y_col + lo * g.out_c, g.out_c, 0, hi - lo, n_eff, in_place_add,
                            kb.seg_len, seg_stride);
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
        in_place_add = in_place_add || run_in_place;
      }
    }
  });
}

}  // namespace gemm
}  // namespace vacc
