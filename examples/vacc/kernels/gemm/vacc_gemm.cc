// SPDX-License-Identifier: Apache-2.0
//
// The GEMM driver: BLIS's loops around the micro-kernel, each unit running
// them over its own rows of C.
//
//   for jc in N step NC                  packed B: KC x NC for every K
//                                        block, each panel packed by the
//                                        first tile that needs it, or by
//                                        the tiles of the panel before
//                                        (NextPanelCopy), or a K block by
//                                        a pass (see PackedGemm)
//     rows of C in chunks of <= MC, dealt to the units as shares (Shares);
//     each takes its own, then what another has not started
//       for pc in K step KC
//         pack the chunk's A block       stays in L2 (the C chunk too,
//                                        across the K blocks); a float32
//                                        A in memory is packed by the
//                                        first panel's tiles instead
//         for jr in NC step NR           B panel stays in L1
//           for ir in chunk step MR      A panel from L2
//             micro-kernel: MR x NR tile of C, in registers over KC
//
// With several units and a B at least as wide as A is tall (N >= M; twice
// as wide with the wide tile, kWideTileSliceAspect), the units split B's
// columns instead (PackedDriverColumnSlices): each runs these loops alone
// over all of M and its own slice of B, which only it packs, so no packed
// block is shared and B is packed once.
//
// Otherwise a unit packs its own A rows and writes its own rows of C, the
// same rows call after call. Dynamic hand-out of tiles with shared packed
// blocks (the design before) moved packed lines and C tiles between the
// cores on every call: at 2 units on Zen4 it was 1.3-1.5x slower in the
// VM's phases where cross-core traffic is slow. B is the exception, when
// it is large
// (kSharedPackedBFloats): packing a copy per unit cost 4-5% at 2 units
// where M is small against B (256 x 1024 x 1024, 1024^3), so the units
// share one packed B, each panel packed once by whichever unit needs it
// first (PanelClaims), the units starting on different panels. A small B
// each unit still packs for itself: shared, it ran 0.95x at 256^3 (its
// lines cross between cores, and the packing it saves is small).
//
// Gemm picks the driver by shape: a very short A (a small batch, e.g.
// 32 x 784 x 128), or, where reading in place pays (LongerAInPlacePays:
// AMD Zen4's AVX-512 kernels), one that fits a unit's L2 with a B that can
// be read in place (256^3, 512^3), takes
// vacc_gemm_small_m.cc, a narrow B (e.g. a
// 1x1 Conv2D to 128 channels) vacc_gemm_narrow_b.cc, anything else
// PackedGemm here.
#include "kernels/gemm/vacc_gemm.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_buffer.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_narrow_b.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_panel_claims.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_small_m.h"
#include "kernels/gemm/vacc_gemm_unit_l2.h"

namespace vacc {
namespace gemm {
namespace {

thread_local PackBuffer t_packed_a;  // each unit's packed A block
// A packed B block: each unit's own, or the caller's, which the units share.
thread_local PackBuffer t_packed_b;
thread_local std::vector<char> t_skipped_panels;  // a unit's panels left for later

// A matrix seen transposed: the same memory, rows and columns swapped.
Matrix Transposed(const Matrix& m) {
  Matrix t = m;
  t.rows = m.cols;
  t.cols = m.rows;
  t.row_stride = m.col_stride;
  t.col_stride = m.row_stride;
  return t;
}

thread_local PackBuffer t_transposed_c;  // C^T of TransposedNarrowGemm
thread_local PackBuffer t_narrow_rows;   // B^T's rows, contiguous (TransposedNarrowGemm)

// B^T (n x k) as a row-major float32 matrix: B's own memory if its columns
// are contiguous, else copied into t_narrow_rows (n is small). With
// contiguous rows the short-A path reads both operands in place. (Packing
// it as A panels one row wide, MatrixA::Pack, gives the same layout, but
// 512 x 256 x 10 A^T ran 82.6 us with it against 71.0 with this loop, one
// run each in the Keras step's sequence on Zen4.)
Matrix ContiguousTransposedRows(const Matrix& b) {
  const Matrix bt = Transposed(b);
  if (bt.dtype != TF_FLOAT || bt.col_stride == 1) return bt;
  float* rows = t_narrow_rows.Get(bt.rows * bt.cols);
  if (rows == nullptr) std::abort();  // out of host memory
  const float* src = static_cast<const float*>(bt.data);
  for (int64_t i = 0; i < bt.rows; ++i) {
    for (int64_t j = 0; j < bt.cols; ++j) {
      rows[i * bt.cols + j] = src[i * bt.row_stride + j * bt.col_stride];
    }
  }
  Matrix copy = bt;
  copy.data = rows;
  copy.row_stride = bt.cols;
  copy.col_stride = 1;
  return copy;
}

// C = A B for a transposed float32 A (a weight gradient x^T dy) and a
// narrow B whose columns leave a quarter or more of the narrow-B path's
// panels empty (dy of a classifier: N = 10 in panels of 16) as
// C^T = B^T A^T: a short left operand (N rows) against a wide right one,
// A's own memory read row-major, which the short-A path runs at full
// vector width; then C^T, N x M, is transposed into C. B^T's rows are
// made contiguous first (ContiguousTransposedRows: B is row-major, so
// B^T's are N values K apart), so that the short-A path reads both
// operands in place instead of packing each panel of A^T as it goes:
// 512 x 256 x 10 in the Keras MLP step's sequence (Zen4, one unit,
// operands out of cache, variants in random order, medians of 150 rounds)
// 114.6 -> 63.3 us, oneDNN 67.7. The narrow-B path
// would pack all of A (transposed) and compute the empty columns. On Zen4,
// 512 x 256 x N with A^T: N = 10 1.47-1.51x (t1 and t2), 24 1.23-1.36x,
// 40 1.22x; at N = 16, 32, 64 and 120 (panels full) and N = 100 (78%
// full) the narrow-B path was as fast or faster (0.69x at 100 and t2).
bool TransposedNarrowGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc,
                          bool accumulate, ComputeUnits* units) {
  const Matrix* am = a.InMemory();
  const int64_t m = a.rows(), n = b.cols;
  if (am == nullptr || am->dtype != TF_FLOAT || am->row_stride != 1 || am->col_stride == 1 ||
      !NarrowBApplies(a, b) || n > kSmallMRows) {
    return false;
  }
  const int64_t nr = MicroKernelFor(n).nr;  // NarrowBGemm's panel width
  if (4 * n > 3 * CeilDiv(n, nr) * nr) return false;
  float* ct = t_transposed_c.Get(n * m);
  if (ct == nullptr) std::abort();  // out of host memory
  SmallMGemm(MatrixA(ContiguousTransposedRows(b)), Transposed(*am), ct, m, false, units);
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = accumulate ? row[j] + ct[j * m + i] : ct[j * m + i];
  }
  return true;
}

// A packed B panel: where, and how many floats (none: data NULL).
// NextPanelSlice: the slice of the next packed B panel that a chunk's row
// tile number `tile` fetches into L2 as it runs (NULL: none),
// FetchedFloats(kc) floats (MicroKernel::run), the tiles one after another:
// a chunk's first FetchWalkTiles(NR) tiles (8 on AVX-512) bring the whole
// panel from L3 while they compute, so the next panel's tiles find it in L2 instead of
// waiting on L3 (the hardware prefetcher starts each panel afresh). On an
// Intel Xeon (Emerald Rapids class, one unit; an experimental build
// alternating with oneDNN call by call, order rotated, medians of 18-149
// rounds, two runs), as ratios to oneDNN's time without the fetch -> with it:
// 256 x 1024 x 1024 0.895 -> 0.943 and 0.893 -> 0.925, 1024^3 0.952 -> 1.000,
// 512^3 0.904 -> 0.929 and 0.916 -> 0.933. With packing skipped in that
// build, the driver then ran as fast as oneDNN's own kernels on operands it
// had packed beforehand (1.08-1.09x, 1.07x and 0.99-1.00x of oneDNN's whole
// call, against 1.11x, 1.09x and 1.00x for oneDNN's kernels alone), where
// without the fetch it ran 1.01-1.04x, 1.01x and 0.98x: what remains is the
// packing (examples/vacc/README.md).
struct PanelRef {
  const float* data = nullptr;
  int64_t floats = 0;
};
const float* NextPanelSlice(PanelRef next_panel, int64_t tile, int64_t kc) {
  const int64_t first = tile * FetchedFloats(kc);
  return next_panel.data != nullptr && first < next_panel.floats ? next_panel.data + first
                                                                 : nullptr;
}

// The copy of one packed B panel (kc rows of NR floats from a row-major
// float32 B) spread over the tiles of the panel before it that read packed
// panels (MicroKernel::run's copy), as even slices: tile t copies rows
// [t * per, (t + 1) * per). That panel is then packed before its first
// tile, which reads it like the rest, instead of one tile packing all of
// it: the B-packing tile reads kc rows far apart from L3 and stores as
// many: 2.3-2.9x a plain tile's time at K = 512 (perf, Intel Xeon), where
// a row per four k steps fits beside the FMAs. Only where each tile takes
// at most one row per four k steps (Fits), so every copy overlaps its
// tile's FMAs. Intel Xeon (Emerald Rapids class), operands hot, the two
// rules alternating call by call (medians of 200+ pairs), one unit:
// 256 x 512 x 512 1.023-1.025x, 256 x 784 x 512 1.019-1.020x, 512^3
// 1.011-1.015x, 300 x 500 x 700 1.014x, 256^3 1.00x; two units
// 1.008-1.025x (examples/vacc/README.md has the rest). AMD not measured.
// A tile's rows are spread over its whole k loop (PanelCopy::every: with
// 13 tiles at kc = 1024, 79 rows, one every third iteration), not copied
// one per iteration from its start, which asked L3 for a 6 x 64 tile's
// 256-byte rows three times as fast. Ice Lake Xeon, one unit, the two
// alternating call by call (medians of 20): the 6 x 64 tile 256 x 1024 x
// 1024 1.04x (twice), 512 x 1024 x 1024 1.02x, 1024^3 1.01-1.02x, 2048^3
// 1.01x, 256 x 1000 x 1000 1.03x, 256 x 784 x 512 1.05x, 512^3 1.03-1.04x;
// the 12 x 32 tile 0.98-1.02x.
class NextPanelCopy {
 public:
  NextPanelCopy() = default;
  NextPanelCopy(const float* src, int64_t ld, float* dst, int64_t nr, int64_t kc, int64_t tiles)
      : src_(src),
        ld_(ld),
        dst_(dst),
        nr_(nr),
        kc_(kc),
        per_(CeilDiv(kc, tiles)),
        every_(std::max<int64_t>(1, kc / kFetchKSteps / per_)) {}
  // Whether `tiles` tiles kc deep can copy kc rows at one row per
  // iteration of their k loop (kFetchKSteps steps).
  static bool Fits(int64_t tiles, int64_t kc) {
    const int64_t least = PanelCopyTiles(kc);
    return least > 0 && tiles >= least;
  }
  bool active() const { return src_ != nullptr; }
  // Tile t's rows (NULL: none left).
  const PanelCopy* Slice(int64_t t) {
    const int64_t row0 = t * per_;
    const int64_t rows = std::min(per_, kc_ - row0);
    if (rows <= 0) return nullptr;
    slice_ = PanelCopy{src_ + row0 * ld_, ld_, dst_ + row0 * nr_, rows, every_};
    return &slice_;
  }

 private:
  const float* src_ = nullptr;
  int64_t ld_ = 0;
  float* dst_ = nullptr;
  int64_t nr_ = 0, kc_ = 0, per_ = 0;
  // A tile's rows spread over its k loop (PanelCopy::every), not bunched at
  // its start.
  int64_t every_ = 1;
  PanelCopy slice_;
};

}  // namespace

void Gemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
          ComputeUnits* units) {
  if (TransposedNarrowGemm(a, b, c, ldc, accumulate, units)) return;
  if (SmallMApplies(a) || (LongerAInPlacePays() && InPlaceApplies(a, b, units))) {
    SmallMGemm(a, b, c, ldc, accumulate, units);
  } else if (NarrowBApplies(a, b)) {
    NarrowBGemm(a, b, c, ldc, accumulate, units);
  } else {
    PackedGemm(a, b, c, ldc, accumulate, units);
  }
}

void PackedGemm(const PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
                ComputeUnits* units) {
  if (EmptyProduct(a, b, c, ldc, accumulate)) return;
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  // A float32 A in memory, plain or transposed, is packed by the tiles of
  // each block's first B panel (run_packing_a; see below).
  const Matrix* am = a.InMemory();
  const Matrix* a_in_place = am != nullptr && am->dtype == TF_FLOAT &&
                                     (am->col_stride == 1 || am->row_stride == 1)
                                 ? am
                                 : nullptr;
  // A row-major one into grouped panels: packing those is a copy of four
  // values per row (APanels, vacc_gemm_microkernel.h).
  const bool a_rows_in_place = a_in_place != nullptr && a_in_place->col_stride == 1;
  const MicroKernel uk =
      PackedDriverMicroKernel(a_rows_in_place ? APanels::kGroups : APanels::kInterleaved);
  const int64_t mr = uk.mr, nr = uk.nr;
  const int parts = Participants(units);
  // A B wide enough against A's height (PackedDriverColumnSlices) is cut
  // into column slices, one per unit, each running this driver alone on
  // its columns; ForEachParticipant lets a unit that is done take a slice
  // another has not started.
  const int64_t slices = PackedDriverColumnSlices(m, n, nr, parts, uk.shape);
  if (slices > 1) {
    const int64_t all_panels = CeilDiv(n, nr);
    ForEachParticipant(units, [&](int part) {
      const int64_t col0 = part * all_panels / slices * nr;
      const int64_t col1 = std::min(n, (part + 1) * all_panels / slices * nr);
      PackedGemm(a, ColumnsOf(b, col0, col1 - col0), c + col0, ldc, accumulate, nullptr);
    });
    return;
  }
  const int64_t kc_max = EvenBlockLength(k, kKC);
  // Columns per jc block: a unit keeps all of K of them packed, and with
  // several units a B of each unit's own that does not stay in its L2 is
  // cut into a few blocks that do (PackedDriverBlockColumns).
  const int64_t unit_l2_floats = UnitL2PackedBFloats();
  const int64_t nc = PackedDriverBlockColumns(n, k, nr, parts, unit_l2_floats);
  // A jc block's packed B of `cols` columns, all of K (floats), and
  // whether the units share it (kSharedPackedBFloats). A large block, shared
  // or not, makes the row chunks long (PackedDriverChunks, for the first
  // block).
  auto block_floats = [&](int64_t cols) { return PackedBBlockFloats(cols, nr, k); };
  auto shares_b = [&](int64_t cols) { return PackedDriverSharesB(block_floats(cols), parts); };
  const int64_t first_cols = std::min(nc, n);
  // B is packed a panel at a time: a float32 B with contiguous rows by the
  // tiles of the panel before it, a row per four k steps each
  // (NextPanelCopy), or else by the first row tile that needs it, in the
  // micro-kernel (run_packing), which reads B in place as it computes that
  // tile. Rows a multiple of 4 KiB apart (RowsShareCacheSets) fall into the
  // same few L1 sets: that tile's lines fetched ahead evict each other, and
  // it waits on B. Where the chunks' tiles cannot copy the panels, a unit
  // packs such a B block of its own a whole K block at a time instead, by a
  // pass that copies a few rows at a time across every panel (PackB); one
  // the units share stays a panel at a time, so that they split the
  // packing. On an Intel Xeon (Emerald Rapids class) a profile of 256 x 1024
  // x 1024 on one unit had the packing tiles at ~15% of the time for ~3% of
  // the FMAs. The pass against them (one unit; single calls alternating in
  // one process, order rotated, medians of 150-400 pairs, beside an
  // identical control pair): 256 x 1024 x 1024 1.06x, 1024^3 1.04x, 2048^3
  // 1.04x, 512 x 2048 x 1024 1.02x; two units with blocks of their own
  // (512 x 1024 x 256, 1024 x 1024 x 384) within 1%. With rows 1000 floats
  // apart the pass ran 0.97-0.99x. The copies spread over the tiles beat
  // the pass where they apply: on an Intel Xeon of the Ice Lake server class
  // the pass took 11% of 256 x 1024 x 1024 (perf, one unit), moving B
  // through L3 beside no FMAs. Copies against the pass (one unit / two;
  // the drivers alternating call by call in one process, medians of 40):
  // 256 x 1024 x 1024 1.037x / 1.019x, 512 x 1024 x 1024 1.014x / 1.032x,
  // 2048^3 1.006x / 0.999x, 1024^3 0.999x / 0.993x, 1024 x 1024 x 256
  // 0.997x / 0.998x. The copy fetching its rows into L2 only, instead of
  // L1, ran no faster. Emerald Rapids and AMD were not measured.
  const Matrix* b_in_place = b.dtype == TF_FLOAT && b.col_stride == 1 ? &b : nullptr;
  const bool b_rows_share_sets = b.col_stride == 1 && RowsShareCacheSets(b);
  // A B block of its own, read in place: each panel's tiles copy the next
  // panel (NextPanelCopy).
  auto copies_b_panels = [&](int64_t cols) { return !shares_b(cols) && b_in_place != nullptr; };
  const RowChunks chunks =
      PackedDriverChunks(m, mr, nr, parts, block_floats(first_cols), shares_b(first_cols),
                         unit_l2_floats, copies_b_panels(first_cols) ? kc_max : 0);
  // A float32 A in memory (a_in_place, above) is packed likewise, by the
  // tiles of each block's first panel (run_packing_a). Those tiles read
  // A from L3 or memory and run slower than the rest: in the 1x1 Conv2D
  // (6272 x 256 x 128, Zen3, one unit, perf in bench_vacc_conv) 21% of the
  // time for 12.5% of the FMAs. Tried, in paired rounds against oneDNN
  // (bench_vacc_conv, 8-10 runs of 3 repetitions, ratio before -> after,
  // t1 / t2): the later panels' tiles fetching the next chunk's A through
  // the kernel's fetch walk, which cut those tiles to 18% of the time,
  // 1.000 -> 1.004 / 0.957 -> 0.960; the chunk taken tile by tile (every
  // panel of a tile before the next, A's tile then in L1) 0.981 -> 0.987
  // / 0.930 -> 0.911. Neither was kept.

  for (int64_t jc = 0; jc < n; jc += nc) {
    const int64_t ncur = std::min(nc, n - jc), panels = CeilDiv(ncur, nr);
    // The jc block's packed B, all of K: K block pc at pc * panels * nr,
    // panel p of it p * nr * kc further; claim pc / kc_max * panels + p. A
    // large one is shared by the participants, the caller's buffer, each
    // panel packed by the first unit to need it; a small one each unit
    // packs for itself (kSharedPackedBFloats), by a pass if its rows share
    // cache sets.
    const int64_t b_floats = block_floats(ncur), claim_count = CeilDiv(k, kc_max) * panels;
    const bool share_b = shares_b(ncur);
    const bool copy_b_panels = copies_b_panels(ncur);
    const bool pack_by_pass =
        !share_b && PacksOwnBByPass(b_rows_share_sets, copy_b_panels, chunks, kc_max);
    float* shared_b = share_b ? t_packed_b.Get(b_floats) : nullptr;
    if (share_b && shared_b == nullptr) std::abort();  // out of host memory
    PanelClaims shared_claims(share_b ? claim_count : 0);
    Shares shares(static_cast<size_t>(chunks.count), parts);
    ForEachParticipant(units, [&](int part) {
      float* packed_b = share_b ? shared_b : t_packed_b.Get(b_floats);
      float* packed_a = t_packed_a.Get(chunks.largest * kc_max);  // a chunk's K block
      if (packed_b == nullptr || packed_a == nullptr) std::abort();  // out of host memory
      // Panel p of the packed K block that starts at row pc0 and is kc0 deep
      // (the layout above); p = 0 is the block itself.
      auto packed_panel = [&](int64_t pc0, int64_t kc0, int64_t p) {
        return packed_b + pc0 * panels * nr + p * nr * kc0;
      };
      PanelClaims own_claims(share_b ? 0 : claim_count);
      PanelClaims& claims = share_b ? shared_claims : own_claims;
      std::vector<char>& skipped = t_skipped_panels;
      skipped.assign(static_cast<size_t>(panels), 0);
      // Units start on different panels, so that they claim different ones.
      const int64_t first_panel = part * panels / parts;
      for (int64_t row0, rows; chunks.Next(shares, part, &row0, &rows);) {
        for (int64_t pc = 0; pc < k; pc += kc_max) {
          const int64_t kc = KBlockDepth(pc, k, kc_max);
          const bool add = accumulate || pc > 0;  // later K blocks add to the first
          if (a_in_place == nullptr) a.Pack(row0, rows, pc, kc, uk.mr, packed_a);
          bool a_packed = a_in_place == nullptr;  // else by the first panel's tiles
          const int64_t claim0 = pc / kc_max * panels;  // this K block's claims
          // The packed panel this unit runs after the q-th of this K block's
          // loop below, whose slices its tiles fetch into L2
          // (NextPanelSlice, PackedDriverWalkedPanel): after the last K
          // block's last, the first of its next chunk. Before, nothing was
          // walked there, and that chunk's first tiles (those packing A)
          // read the panel from L3. At 256 x 1024 x 1024 on one unit (Ice
          // Lake server Xeon, rdtsc around each tile) a chunk's first tile
          // (packing A, and in the first chunk B too) took 6-7x a plain
          // tile's time, 23% less with the walk. In the paired rounds of
          // bench_vacc_matmul (the walk as a fourth contender beside vacc,
          // OpenBLAS and oneDNN, medians of 30 rounds, 1-3 runs; speedup
          // over no walk, t1 / t2): 512^3 1.003-1.008x / 1.032-1.036x,
          // 256 x 1024 x 1024 1.006-1.012x / 1.035x, 1024^3 1.005-1.013x /
          // 1.009x, 2048^3 0.988-1.009x / 1.002-1.009x, 256^3 1.000x /
          // 1.027x, the Keras MLP step 0.999-1.006x / 0.990-0.996x. AMD
          // not measured.
          auto next_panel = [&](int64_t q) -> PanelRef {
            const WalkedPanel w =
                PackedDriverWalkedPanel(q, panels, first_panel, pc, k, kc_max);
            return {packed_panel(w.pc, w.kc, w.p), nr * w.kc};
          };
          // B in place from this K block's first row and column col0 on.
          auto b_in_place_at = [&](int64_t col0) {
            return static_cast<const float*>(b_in_place->data) + pc * b_in_place->row_stride +
                   col0;
          };
          // The chunk's tiles against panel p, packing it first if pack_b
          // (and the K block's other panels with it, by a pass); those that
          // read the packed panel also copy panel copy_to (-1: none) from B
          // in place, if it is this unit's to pack (NextPanelCopy).
          auto run_panel = [&](int64_t p, bool pack_b, PanelRef next, int64_t copy_to) {
            const int64_t col = jc + p * nr;
            const int n_eff = static_cast<int>(std::min(nr, n - col));
            float* b_panel = packed_panel(pc, kc, p);
            if (pack_b && pack_by_pass) {
              PackB(b, pc, kc, jc, ncur, uk.nr, packed_panel(pc, kc, 0));
              for (int64_t q = 0; q < panels; ++q) claims.Packed(claim0 + q);
              pack_b = false;
            }
            // Whether the first row tile packs this panel from B in place.
            const bool first_tile_packs_b = pack_b && b_in_place != nullptr && n_eff == nr;
            // The tiles that pack: all of them where A is packed on the
            // way, else the first where it packs B.
            const int64_t tiles = CeilDiv(rows, mr);
            const int64_t packing_tiles = !a_packed ? tiles : (first_tile_packs_b ? 1 : 0);
            const int64_t plain_tiles = tiles - packing_tiles;
            NextPanelCopy copy;
            if (copy_to >= 0 && NextPanelCopy::Fits(plain_tiles, kc) &&
                claims.TryClaim(claim0 + copy_to) == PanelClaims::State::kClaimed) {
              copy = NextPanelCopy(b_in_place_at(jc + copy_to * nr), b_in_place->row_stride,
                                   packed_panel(pc, kc, copy_to), nr, kc, plain_tiles);
            }
            float* c_block = c + row0 * ldc + col;
            // B for the first row tile: the packed panel, or B in place,
            // packed to the panel by that tile.
            const float* b_first = b_panel;
            int64_t ldb = 0;
            float* b_to_pack = nullptr;
            if (first_tile_packs_b) {
              b_first = b_in_place_at(col);
              ldb = b_in_place->row_stride;
              b_to_pack = b_panel;
            } else if (pack_b) {
              PackB(b, pc, kc, col, n_eff, uk.nr, b_panel);
            }
            for (int64_t t = 0; t < tiles; ++t) {
              const int64_t i = t * mr;
              const int m_eff = static_cast<int>(std::min(mr, rows - i));
              if (!a_packed) {
                uk.run_packing_a(kc,
                                 static_cast<const float*>(a_in_place->data) +
                                     (row0 + i) * a_in_place->row_stride +
                                     pc * a_in_place->col_stride,
                                 a_in_place->row_stride, a_in_place->col_stride,
                                 packed_a + i * kc, b_first, ldb, b_to_pack, c_block + i * ldc,
                                 ldc, m_eff, n_eff, add);
              } else if (b_to_pack != nullptr) {
                uk.run_packing(kc, packed_a + i * kc, b_first, ldb, b_to_pack, c_block + i * ldc,
                               ldc, m_eff, add);
              } else if (copy.active()) {
                // It writes the next panel: no fetch walk over it.
                uk.run(kc, packed_a + i * kc, b_panel, c_block + i * ldc, ldc, m_eff, n_eff, add,
                       nullptr, copy.Slice(t - packing_tiles));
              } else {
                uk.run(kc, packed_a + i * kc, b_panel, c_block + i * ldc, ldc, m_eff, n_eff, add,
                       NextPanelSlice(next, t, kc), nullptr);
              }
              if (t == 0 && pack_b) claims.Packed(claim0 + p);  // that tile packed it
              b_first = b_panel;
              b_to_pack = nullptr;
            }
            if (copy.active()) claims.Packed(claim0 + copy_to);  // its tiles copied it
            a_packed = true;
          };
          // Panels another unit is packing right now come last.
          bool any_skipped = false;
          for (int64_t q = 0; q < panels; ++q) {
            const int64_t p = (first_panel + q) % panels;
            const PanelClaims::State state = claims.TryClaim(claim0 + p);
            if (state == PanelClaims::State::kBusy) {
              skipped[static_cast<size_t>(p)] = 1;
              any_skipped = true;
            } else {
              // The next panel in this order, if this unit packs it from B
              // in place: this panel's tiles copy it (NextPanelCopy).
              const int64_t pn = (first_panel + q + 1) % panels;
              const bool copy_next = copy_b_panels && q + 1 < panels && jc + (pn + 1) * nr <= n;
              run_panel(p, state == PanelClaims::State::kClaimed, next_panel(q),
                        copy_next ? pn : -1);
            }
          }
          for (int64_t p = 0; any_skipped && p < panels; ++p) {
            if (!skipped[static_cast<size_t>(p)]) continue;
            skipped[static_cast<size_t>(p)] = 0;
            // Only shared claims wait (a unit packs its own before it looks
            // again), and those have units; no spin budget without them.
            claims.Wait(claim0 + p,
                        units != nullptr ? units->spin() : std::chrono::nanoseconds(0));
            run_panel(p, false, PanelRef{}, -1);
          }
        }
      }
    });
  }
}

std::string MicroKernelName() {
  const MicroKernel uk = PackedDriverMicroKernel();
  return std::string(uk.target) + " " + std::to_string(uk.mr) + "x" + std::to_string(uk.nr);
}

}  // namespace gemm
}  // namespace vacc
