// SPDX-License-Identifier: Apache-2.0
//
// The direct convolution (vacc_gemm_conv_direct.h):
//
//   pack the whole filter as KC x NR panels, in parallel   (once; pairs of
//                                                           panels 2*NR wide,
//                                                           AVX-512; a small
//                                                           one: by each unit,
//                                                           in its first row)
//   for each output row (n, oh), in parallel
//     copy the input columns its left and right border pixels read into
//       two small windows, zero where they fall in the padding
//     for each K block (whole kernel rows, up to ~KC values)
//       for each B panel (or pair of panels)
//         the row's pixels, up to 8 at a time: RowsKernel in place, on x for
//           the interior and on the windows for the borders, over the
//           block's kernel rows that read the input (near the top and
//           bottom, the others read only padding: skipped)
//
// Every pixel runs in place, so there is no packed A and no gather: a
// border pixel's patch is a window's columns laid out as x's are (KW*Cin
// contiguous values per kernel row), which costs a copy of a few columns
// per output row, not a transposing gather of whole patches. A border
// tile also takes a few interior pixels when that fills it
// (BorderSplit): a 3x3 SAME row of 56 pixels runs as 4 + 8 x 6 + 4 rows.
#include "kernels/gemm/vacc_gemm_conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_split.h"

namespace vacc {
namespace gemm {
namespace {

thread_local PackBuffer t_filter;   // the packed filter, of the thread running the conv
thread_local PackBuffer t_windows;  // each unit's border windows (CopyWindow)

// A filter this small is packed by every unit for itself, in its first
// row, rather than once by all of them before the rows: the pack takes
// ~2 us (the 7x7 RGB stem's 37 KiB), less than the units' hand-over and
// wait around a parallel step of its own (~5 us on Zen4, at 2 units).
// Measured on the stem at 2 units (Zen4, builds interleaved, medians of
// 5): 0.974 against 0.965 of oneDNN (paired rounds); alone, 219.1 against
// 215.2 GFLOP/s. At 1 unit the same work runs in the same order.
constexpr int64_t kPackPerUnitBytes = 64 << 10;
// Which call a unit's t_filter holds (with kPackPerUnitBytes): calls are
// numbered, so a unit repacks when it joins the next one.
std::atomic<uint64_t> g_direct_calls{0};
thread_local uint64_t t_filter_call = 0;

// A K block: kernel rows [kh, kh + rows) in full, or, when one kernel row is
// longer than KC, columns [col0, col0 + len) of kernel row kh.
struct KBlock {
  int64_t k0 = 0, kc = 0;     // columns of the patch matrix
  int64_t kh0 = 0, kh_count = 0;  // the kernel rows it covers (1 for a piece of one)
  int64_t col0 = 0;           // its first value's column in kernel row kh0 (pieces)
  int64_t seg_len = 0;        // values per kernel row in this block
  int64_t packed_offset = 0;  // of the block's panels in the packed filter
};

// As deep as kRowsKC allows: the stem (K = 147) in blocks of 128, 84 or 64
// values ran 0.94-0.96 of oneDNN against 0.97 in one block (Zen4, one
// unit), though one block's 2*NR-wide filter panel (37 KiB) exceeds L1.
std::vector<KBlock> Blocks(const ConvGeometry& g, int64_t nr) {
  const int64_t row_len = g.k_w * g.in_c;
  const int64_t panels = CeilDiv(g.out_c, nr);
  std::vector<KBlock> blocks;
  int64_t offset = 0;
  auto add = [&](int64_t k0, int64_t kc, int64_t kh0, int64_t kh_count, int64_t col0,
                 int64_t seg_len) {
    blocks.push_back({k0, kc, kh0, kh_count, col0, seg_len, offset});
    offset += panels * nr * kc;
  };
  if (row_len > kRowsKC) {  // split each kernel row into equal pieces
    const int64_t pieces = CeilDiv(row_len, kRowsKC), len = CeilDiv(row_len, pieces);
    for (int64_t kh = 0; kh < g.k_h; ++kh) {
      for (int64_t j = 0; j < row_len; j += len) {
        const int64_t n = std::min(len, row_len - j);
        add(kh * row_len + j, n, kh, 1, j, n);
      }
    }
  } else {  // whole kernel rows, as many as fit in KC (at least one)
    const int64_t per = std::max<int64_t>(1, kRowsKC / row_len);
    for (int64_t kh = 0; kh < g.k_h; kh += per) {
      const int64_t rows = std::min(per, g.k_h - kh);
      add(kh * row_len, rows * row_len, kh, rows, 0, row_len);
    }
  }
  return blocks;
}

// A row's pixels in three parts, each run in place: [0, left) over the
// left window, [left, right) over x, [right, out_w) over the right window.
// The borders' pixels must go to the windows (their patches reach into the
// padding); a window may also take a few interior pixels, when that makes
// the row cost fewer FMA row slots: an in-place tile of r rows costs
// max(r, kBusyRows), so a 1-pixel border tile costs as much as a 4-pixel
// one. Ties keep fewer pixels in the windows (each is copied).
struct RowSplit {
  int64_t left = 0, right = 0;
};

// mr: the tallest in-place tile (RowsKernel::TileRowsUpTo).
RowSplit BorderSplit(int64_t ow_lo, int64_t ow_hi, int64_t out_w, int64_t mr) {
  // The fewest rows whose 2 accumulators each keep both FMA pipes busy
  // (2 pipes x 4 cycles latency on Zen3 = 8 chains); fewer rows take as long.
  constexpr int64_t kBusyRows = 4;
  auto cost = [&](int64_t pixels) {
    int64_t slots = 0;
    for (int64_t left = pixels; left > 0;) {
      const int64_t r = RowsKernel::TileRowsUpTo(static_cast<int>(mr), left);
      slots += std::max(r, kBusyRows);
      left -= r;
    }
    return slots;
  };
  const int64_t interior = ow_hi - ow_lo, right_border = out_w - ow_hi;
  const int64_t max_left = ow_lo == 0 ? 0 : std::min(interior, 2 * mr - 1);
  RowSplit best{ow_lo, ow_hi};
  int64_t best_cost = cost(ow_lo) + cost(interior) + cost(right_border), best_moved = 0;
  for (int64_t l = 0; l <= max_left; ++l) {
    const int64_t max_right = right_border == 0 ? 0 : std::min(interior - l, 2 * mr - 1);
    for (int64_t r = 0; r <= max_right; ++r) {
      const int64_t c = cost(ow_lo + l) + cost(interior - l - r) + cost(right_border + r);
      if (c < best_cost || (c == best_cost && l + r < best_moved)) {
        best = {ow_lo + l, ow_hi - r};
        best_cost = c;
        best_moved = l + r;
      }
    }
  }
  return best;
}

// The input columns that output pixels [ow0, ow0 + count) of one output row
// read, for kernel rows [kh_lo, kh_hi) (all inside the input vertically),
// copied as x lays them out: `count` pixels stride_w*Cin values apart, one
// kernel row `stride` values after the previous. Columns in the left or
// right padding are zeros.
struct Window {
  const float* data = nullptr;
  int64_t stride = 0;
};

Window CopyWindow(const ConvGeometry& g, const float* x, int64_t n, int64_t ih0, int64_t kh_lo,
                  int64_t kh_hi, int64_t ow0, int64_t count, float* buffer) {
  const int64_t cols = (count - 1) * g.stride_w + g.k_w;
  const int64_t iw0 = ow0 * g.stride_w - g.pad_left;
  const int64_t stride = cols * g.in_c;
  const int64_t c_lo = std::max<int64_t>(0, -iw0), c_hi = std::min(cols, g.in_w - iw0);
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    float* row = buffer + (kh - kh_lo) * stride;
    const int64_t ih = ih0 + kh * g.dilation_h;
    if (c_lo >= c_hi) {
      std::fill(row, row + stride, 0.0f);
      continue;
    }
    std::fill(row, row + c_lo * g.in_c, 0.0f);
    std::copy_n(x + ((n * g.in_h + ih) * g.in_w + iw0 + c_lo) * g.in_c, (c_hi - c_lo) * g.in_c,
                row + c_lo * g.in_c);
    std::fill(row + c_hi * g.in_c, row + stride, 0.0f);
  }
  return {buffer, stride};
}

}  // namespace

bool DirectConvApplies(const ConvGeometry& g, TF_DataType x_dtype) {
  // An empty patch (Cin = 0) is the GEMM's empty sum: Gemm zeroes y.
  return x_dtype == TF_FLOAT && g.dilation_w == 1 && g.k_h * g.k_w * g.in_c > 0;
}

void DirectConv2D(const ConvGeometry& g, const float* x, const Matrix& w, float* y,
                  ComputeUnits* units) {
  const RowsKernel direct = CurrentRowsKernel();
  const int64_t nr = direct.nr;
  // Whole pairs of panels run as one 2*NR-wide tile where the target has
  // the kernels (run_pair): each A value is broadcast once per 2*NR output
  // channels, so a short segment's per-row work is spread over twice the
  // FMAs. Filter panels are packed 2*NR wide for the pairs, NR wide after.
  const int64_t pair_cols = direct.pair_max_rows > 0 ? g.out_c / (2 * nr) * 2 * nr : 0;
  const int64_t panels = CeilDiv(g.out_c, nr);
  const std::vector<KBlock> blocks = Blocks(g, nr);
  const int64_t patch = g.k_h * g.k_w * g.in_c;
  const int64_t filter_floats = panels * nr * patch;
  const bool pack_per_unit =
      filter_floats * static_cast<int64_t>(sizeof(float)) <= kPackPerUnitBytes;
  const uint64_t call = g_direct_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  // The filter's (block, panel) items [begin, end), packed into `filter`.
  const int64_t block_count = static_cast<int64_t>(blocks.size());
  const auto pack = [&](float* filter, int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const KBlock& kb = blocks[static_cast<size_t>(item / panels)];
      const int64_t col = item % panels * nr;
      // Column col's panel at col * kc, whether a pair's or a single one.
      float* dst = filter + kb.packed_offset + col * kb.kc;
      if (col >= pair_cols) {
        PackB(w, kb.k0, kb.kc, col, std::min(nr, g.out_c - col), nr, dst);
      } else if (col % (2 * nr) == 0) {  // a pair: packed by its first panel's item
        PackB(w, kb.k0, kb.kc, col, 2 * nr, 2 * nr, dst);
      }
    }
  };
  // A large filter: packed once, in parallel, into the caller's buffer
  // (which then holds no per-unit call's copy).
  float* const shared_filter = pack_per_unit ? nullptr : t_filter.Get(filter_floats);
  if (!pack_per_unit) {
    if (shared_filter == nullptr) std::abort();  // out of host memory
    t_filter_call = 0;
    ForEach(units, static_cast<size_t>(block_count * panels), [&](size_t begin, size_t end) {
      pack(shared_filter, static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
  }

  // Output pixels whose patch lies inside the input horizontally:
  // ow in [ow_lo, ow_hi).
  auto ceil_div_nonneg = [](int64_t a, int64_t b) { return a <= 0 ? 0 : CeilDiv(a, b); };
  const int64_t ow_lo = std::min(g.out_w, ceil_div_nonneg(g.pad_left, g.stride_w));
  const int64_t last_iw = g.in_w - g.k_w;  // the largest valid iw0 (dilation_w is 1)
  const int64_t ow_hi =
      last_iw + g.pad_left < 0
          ? ow_lo
          : std::max(ow_lo, std::min(g.out_w, (last_iw + g.pad_left) / g.stride_w + 1));
  // The same for every row: which pixels run over the windows.
  const RowSplit split = BorderSplit(ow_lo, ow_hi, g.out_w,
                                     pair_cols == g.out_c ? direct.pair_max_rows : direct.max_rows);
  const int64_t right_count = g.out_w - split.right;
  auto window_floats = [&](int64_t count) {
    return count == 0 ? 0 : g.k_h * ((count - 1) * g.stride_w + g.k_w) * g.in_c;
  };
  const int64_t lda = g.stride_w * g.in_c;
  const int64_t x_row_stride = g.dilation_h * g.in_w * g.in_c;

  // Output rows one at a time (each is tens of microseconds of work): a
  // unit finishing early takes the next row, not a quarter of its share.
  // Half or quarter rows as items (less waiting at the end) measured no
  // better on the stem at two units (Zen4), a quarter worse. Timed in
  // place there (~1070 us a call), the calling unit is busy 99% of it:
  // ~4 us between its 56 rows, ~0.5 us before the first, ~6 us waiting for
  // the other unit's last row; what the stem lacks at two units is mostly
  // what it lacks at one.
  ForEachItem(units, static_cast<size_t>(g.batch * g.out_h), [&](size_t begin, size_t end) {
    // (At least one float: a buffer never grown is NULL.)
    float* left_buffer =
        t_windows.Get(std::max<int64_t>(1, window_floats(split.left) + window_floats(right_count)));
    if (left_buffer == nullptr) std::abort();  // out of host memory
    float* right_buffer = left_buffer + window_floats(split.left);
    float* filter = shared_filter;
    if (pack_per_unit) {  // this unit's own copy, packed for this call
      filter = t_filter.Get(filter_floats);
      if (filter == nullptr) std::abort();  // out of host memory
      if (t_filter_call != call) {
        pack(filter, 0, block_count * panels);
        t_filter_call = call;
      }
    }
    for (int64_t row = static_cast<int64_t>(begin); row < static_cast<int64_t>(end); ++row) {
      const int64_t n = row / g.out_h;
      const int64_t ih0 = row % g.out_h * g.stride_h - g.pad_top;
      float* y_row = y + row * g.out_w * g.out_c;
      // The kernel rows [kh_lo, kh_hi) whose taps fall inside the input;
      // the others read only the top/bottom padding (zeros) and are
      // skipped. A row with none (possible only with padding of at least a
      // kernel's height) is zeros.
      const int64_t kh_lo = ih0 >= 0 ? 0 : CeilDiv(-ih0, g.dilation_h);
      const int64_t kh_hi =
          ih0 >= g.in_h ? 0 : std::min(g.k_h, (g.in_h - 1 - ih0) / g.dilation_h + 1);
      if (kh_lo >= kh_hi) {
        std::fill(y_row, y_row + g.out_w * g.out_c, 0.0f);
        continue;
      }
      // The row's three parts: where a pixel's tap (kh_lo, 0) is, how far
      // apart one kernel row's values are from the next's, and its pixels.
      struct Part {
        const float* tap0;
        int64_t seg_stride, first, count;
      };
      const Window left = split.left == 0 ? Window{}
                                          : CopyWindow(g, x, n, ih0, kh_lo, kh_hi, 0, split.left,
                                                       left_buffer);
      const Window right = right_count == 0 ? Window{}
                                            : CopyWindow(g, x, n, ih0, kh_lo, kh_hi, split.right,
                                                         right_count, right_buffer);
      // Tap (kh_lo, 0) of pixel split.left, an offset summed before it is
      // added to x (ih0 may be negative; the tap is inside x).
      const float* interior =
          split.right == split.left
              ? nullptr
              : x + (((n * g.in_h + ih0) * g.in_w + (split.left * g.stride_w - g.pad_left)) *
                         g.in_c +
                     kh_lo * x_row_stride);
      const Part parts[] = {{left.data, left.stride, 0, split.left},
                            {interior, x_row_stride, split.left, split.right - split.left},
                            {right.data, right.stride, split.right, right_count}};
      // Whether a block ran yet: blocks reading only padding are skipped,
      // so the first one to run (which stores rather than adds) may not be
      // block 0.
      bool add = false;
      for (const KBlock& kb : blocks) {
        // The block's kernel rows that read the input: [r0, r1).
        const int64_t r0 = std::max(kb.kh0, kh_lo), r1 = std::min(kb.kh0 + kb.kh_count, kh_hi);
        if (r0 >= r1) continue;
        const int64_t skip = r0 - kb.kh0, kc = (r1 - r0) * kb.seg_len;
        for (int64_t col = 0; col < g.out_c;) {
          const bool pair = col < pair_cols;
          const int64_t width = pair ? 2 * nr : nr;  // of the packed panel
          const float* b_panel =
              filter + kb.packed_offset + col * kb.kc + skip * kb.seg_len * width;
          const int n_eff = static_cast<int>(std::min(width, g.out_c - col));
          for (const Part& part : parts) {
            if (part.count == 0) continue;
            const float* a_at = part.tap0 + (r0 - kh_lo) * part.seg_stride + kb.col0;
            float* c_at = y_row + part.first * g.out_c + col;
            if (pair) {
              PairTilesInPlace(direct, kc, a_at, lda, b_panel, c_at, g.out_c, part.count, n_eff,
                               add, kb.seg_len, part.seg_stride);
            } else {
              RowTilesInPlace(direct, kc, a_at, lda, b_panel, c_at, g.out_c, 0, part.count, n_eff,
                              add, kb.seg_len, part.seg_stride);
            }
          }
          col += width;
        }
        add = true;
      }
    }
  });
}

}  // namespace gemm
}  // namespace vacc
