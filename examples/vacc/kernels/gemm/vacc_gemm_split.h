// SPDX-License-Identifier: Apache-2.0
//
// What the GEMM drivers (vacc_gemm.cc, vacc_gemm_small_m.cc,
// vacc_gemm_narrow_b.cc, vacc_gemm_conv_direct.cc) share for cutting work
// into blocks and handing them to the compute units.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "vacc_compute_units.h"
#include "vacc_shares.h"

namespace vacc {
namespace gemm {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The length of each of the fewest blocks of at most `most` that `total`
// splits into evenly (the last may be shorter by less than the count):
// K = 300 at most 256 is 2 x 150, not 256 + 44.
inline int64_t EvenBlockLength(int64_t total, int64_t most) {
  return CeilDiv(total, CeilDiv(total, most));
}

// The depth of the K block that starts at row pc of K, in blocks of kc_max
// (the last shorter): what every driver's K loop and the fetch walk
// (PackedDriverWalkedPanel) take a block to be.
inline int64_t KBlockDepth(int64_t pc, int64_t k, int64_t kc_max) {
  return std::min(kc_max, k - pc);
}

// Whether rows `row_bytes` apart map to the same few sets of the caches: a
// multiple of 4 KiB, the span of one L1 way on x86 cores (and of 32 of
// Zen4's 2048 L2 sets). A panel read down such rows, a line or two from
// each, evicts its own lines: the drivers read or pack it differently
// (ReadBInPlace in vacc_gemm_small_m.cc, PackedGemm's B packing, the
// narrow-B path's pairs).
inline bool RowsShareCacheSets(int64_t row_bytes) { return row_bytes % 4096 == 0; }
// The same for a matrix in memory with contiguous rows (col_stride 1).
inline bool RowsShareCacheSets(const Matrix& m) {
  return RowsShareCacheSets(m.row_stride * static_cast<int64_t>(TF_DataTypeSize(m.dtype)));
}

// True, with C done, when the product is empty: no rows or columns, or an
// empty sum (K = 0: C is zeroed, or left as it is when accumulating). Every
// driver starts with it, so none divides by a zero K.
inline bool EmptyProduct(const PackableA& a, const Matrix& b, float* c, int64_t ldc,
                         bool accumulate) {
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  if (m == 0 || n == 0) return true;
  if (k > 0) return false;
  if (!accumulate) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  }
  return true;
}

// Threads that take part in a parallel step on `units`: the units, plus the
// caller when it is not one of them (1 without units).
inline int Participants(ComputeUnits* units) {
  return units == nullptr ? 1 : units->size() + (units->OnUnit() ? 0 : 1);
}

// A as a float32 matrix with contiguous rows, which the row kernels read in
// place; NULL when it must be packed (im2col, transposed, 16-bit).
inline const Matrix* FloatRowsInPlace(const PackableA& a) {
  const Matrix* m = a.InMemory();
  return m != nullptr && m->dtype == TF_FLOAT && m->col_stride == 1 ? m : nullptr;
}

// body(row, tile_rows) for the row tiles of rows [first, rows): tiles of
// at most `most` rows fitted to the rows left (RowsKernel::TileRowsUpTo),
// as every in-place row kernel takes them.
template <class Body>
inline void ForEachRowTile(int64_t first, int64_t rows, int most, Body&& body) {
  for (int64_t i = first; i < rows;) {
    const int r = RowsKernel::TileRowsUpTo(most, rows - i);
    body(i, r);
    i += r;
  }
}

// How many tiles ForEachRowTile cuts `rows` rows into: as many as tiles of
// `most` rows would be, since it shares a short remainder with the tile
// before it and never adds a tile (test RowTiles checks the two agree).
inline int64_t RowTileCount(int64_t rows, int most) { return CeilDiv(rows, most); }

// Rows [first, rows) of a block of C against one packed B panel, A's rows
// read in place (lda apart, from the block's first row): tiles fitted to
// the rows left (kernel.TileRows). A row of A is one run of kc values,
// or, for the direct convolution, runs of seg_len values seg_stride apart.
inline void RowTilesInPlace(const RowsKernel& kernel, int64_t kc, const float* a, int64_t lda,
                            const float* b_panel, float* c, int64_t ldc, int64_t first,
                            int64_t rows, int n, bool accumulate, int64_t seg_len = 0,
                            int64_t seg_stride = 0) {
  if (seg_len == 0) seg_len = kc;
  ForEachRowTile(first, rows, kernel.max_rows, [&](int64_t i, int r) {
    kernel.run[r](kc, a + i * lda, lda, seg_len, seg_stride, b_panel, c + i * ldc, ldc, n,
                  accumulate);
  });
}

// The same against two panels packed side by side as one 2*NR-wide panel
// (kernel.run_pair; tiles of at most pair_max_rows rows). fetch_c false:
// C is in cache, the kernel never fetches it.
inline void PairTilesInPlace(const RowsKernel& kernel, int64_t kc, const float* a, int64_t lda,
                             const float* b_pair, float* c, int64_t ldc, int64_t rows, int n,
                             bool accumulate, int64_t seg_len, int64_t seg_stride,
                             bool fetch_c = true) {
  ForEachRowTile(0, rows, kernel.pair_max_rows, [&](int64_t i, int r) {
    kernel.run_pair[r](kc, a + i * lda, lda, seg_len, seg_stride, b_pair, c + i * ldc, ldc, n,
                       accumulate, fetch_c);
  });
}

// The same with A packed as MR-row panels (PackableA::Pack of the block).
inline void RowTilesPacked(const MicroKernel& kernel, int64_t kc, const float* packed_a,
                           const float* b_panel, float* c, int64_t ldc, int64_t rows, int n,
                           bool accumulate) {
  for (int64_t i = 0; i < rows; i += kernel.mr) {
    const int m = static_cast<int>(std::min<int64_t>(kernel.mr, rows - i));
    kernel.run(kc, packed_a + i * kc, b_panel, c + i * ldc, ldc, m, n, accumulate, nullptr,
               nullptr);
  }
}

// body(begin, end) over [0, n): split across `units` (ParallelFor: chunks
// dealt as shares), or all on the calling thread when units is nullptr.
inline void ForEach(ComputeUnits* units, size_t n,
                    const std::function<void(size_t, size_t)>& body) {
  if (units == nullptr) {
    body(0, n);
  } else {
    units->ParallelFor(n, 1, body);
  }
}

// body(begin, end) over [0, n) of a few large items (rows of a
// convolution's output): each its own chunk, so no unit waits long for the
// last one.
inline void ForEachItem(ComputeUnits* units, size_t n,
                        const std::function<void(size_t, size_t)>& body) {
  if (units == nullptr) {
    body(0, n);
  } else {
    units->ParallelForEachItem(n, body);
  }
}

// The rows of C, [0, m), cut into chunks of whole micro-panels (mr rows)
// that differ by at most one micro-panel: chunk c is micro-panels
// [c * P / count, (c + 1) * P / count) of the P = ceil(m / mr). At most
// max_rows per chunk; with several participants, a whole number of chunks
// each (at least per_part), so shares are equal (Shares), but no chunk
// below min_rows (which then also stays a whole number each, when there
// are at least as many chunks as participants). M = 256 on two units in 8
// chunks is 126 + 130 rows; chunks of 36 rows (the last of 4) were 144 +
// 112, and the step took 1.125x as long as the work.
struct RowChunks {
  RowChunks(int64_t m, int64_t mr, int64_t max_rows, int64_t min_rows, int parts,
            int64_t per_part)
      : mr(mr), panels(CeilDiv(m, mr)), m(m) {
    count = CeilDiv(panels, std::max<int64_t>(max_rows / mr, 1));
    if (parts > 1) count = CeilDiv(std::max(count, per_part * parts), parts) * parts;
    count = std::max<int64_t>(1, std::min(count, panels / CeilDiv(std::max(min_rows, mr), mr)));
    if (parts > 1 && count > parts) count = count / parts * parts;
    largest = CeilDiv(panels, count) * mr;
  }
  int64_t Row0(int64_t c) const { return c * panels / count * mr; }
  int64_t Rows(int64_t c) const { return std::min(m, (c + 1) * panels / count * mr) - Row0(c); }
  // Participant part's next chunk from `shares` (dealt over count chunks):
  // its first row and row count; false when every share is empty.
  bool Next(Shares& shares, int part, int64_t* row0, int64_t* rows) const {
    size_t c;
    if (!shares.Next(part, &c)) return false;
    *row0 = Row0(static_cast<int64_t>(c));
    *rows = Rows(static_cast<int64_t>(c));
    return true;
  }

  const int64_t mr, panels, m;
  int64_t count = 1;    // chunks
  int64_t largest = 0;  // rows of the largest chunk
};

// The fewest tiles kc deep that can copy a B panel between them, one row
// of it per kFetchKSteps k steps each (NextPanelCopy in vacc_gemm.cc); 0
// where none can (kc < kFetchKSteps).
inline int64_t PanelCopyTiles(int64_t kc) {
  return kc < kFetchKSteps ? 0 : CeilDiv(kc, kc / kFetchKSteps);
}

// The shortest row chunk, of micro-panels of mr rows, whose tiles copy the
// next B panel kc deep from every panel after a K block's second: that
// panel's first tile packs it (the first panel's tiles pack A, so none of
// them copies), and its other tiles copy the third (0: no copy at kc).
inline int64_t CopyingChunkRows(int64_t kc, int64_t mr) {
  const int64_t tiles = PanelCopyTiles(kc);
  return tiles == 0 ? 0 : (tiles + 1) * mr;
}

// Whether a unit packs a float32 B block of its own whose rows share cache
// sets (RowsShareCacheSets) by a pass over a whole K block (PackB in
// vacc_gemm.cc) rather than having each panel's tiles copy the next one
// (NextPanelCopy): where the tiles copy panels at all (copies) but the
// shortest of `chunks` (panels / count micro-panels) is shorter than
// CopyingChunkRows at kc, the pass keeps every panel from being packed by
// a tile reading those rows in place.
inline bool PacksOwnBByPass(bool rows_share_sets, bool copies, const RowChunks& chunks,
                            int64_t kc) {
  if (!rows_share_sets) return false;
  const int64_t copying_rows = CopyingChunkRows(kc, chunks.mr);
  return !copies || copying_rows == 0 || chunks.panels / chunks.count * chunks.mr < copying_rows;
}

// The packed driver's row chunks (each a packed A block, kc deep, of
// micro-panels mr rows high against B panels nr wide): at most
// kPackedARows rows, or FetchWalkTiles(nr) tiles where those are more,
// where each unit packs B for itself, MC where the
// units share the packed B block (b_shared) (blocking.h), at least
// kChunksPerParticipant per unit, but none shorter than kSharedBChunkRows
// when they share it, nor than kOwnStreamedBChunkRows when each packs one
// of its own of more than unit_l2_floats (b_floats, the first block's;
// UnitL2PackedBFloats, vacc_gemm_unit_l2.h): either block is in L3, and
// each chunk streams all of it past its tiles (blocking.h). The shortest
// allowed wins over the longest (RowChunks): 200 rows with B streamed are
// chunks of 64, 64 and 72. Where the units copy B panels of their own
// (copy_kc: the first K block's depth; 0 where they do not), none is
// shorter than CopyingChunkRows either, while every unit still gets one.
inline RowChunks PackedDriverChunks(int64_t m, int64_t mr, int64_t nr, int parts, int64_t b_floats,
                                    bool b_shared, int64_t unit_l2_floats, int64_t copy_kc = 0) {
  int64_t min_rows = b_shared                    ? kSharedBChunkRows
                     : b_floats > unit_l2_floats ? kOwnStreamedBChunkRows
                                                 : mr;
  const int64_t copying_rows = CopyingChunkRows(copy_kc, mr);
  if (parts > 1 && !b_shared && copying_rows > 0 &&
      CeilDiv(m, mr) >= parts * (copying_rows / mr)) {
    min_rows = std::max(min_rows, copying_rows);
  }
  const int64_t max_rows = b_shared ? kMC : std::max(kPackedARows, FetchWalkTiles(nr) * mr);
  return RowChunks(m, mr, max_rows, min_rows, parts, kChunksPerParticipant);
}

// The floats of a packed B block of `cols` columns, all of K: whole
// panels of nr columns, the last padded.
inline int64_t PackedBBlockFloats(int64_t cols, int64_t nr, int64_t k) {
  return CeilDiv(cols, nr) * nr * k;
}

// Whether the packed driver's participants share one packed B block of
// `block_floats` (kSharedPackedBFloats), rather than each packing its own.
inline bool PackedDriverSharesB(int64_t block_floats, int parts) {
  return parts > 1 && block_floats >= kSharedPackedBFloats;
}

// Columns per jc block of the packed driver: at most kNC, and no more than
// a unit keeps packed for all of K (kUnitPackedBFloats). With several
// participants, a B that fits one block and that each unit packs for
// itself (PackedDriverSharesB), larger than a unit's L2 share
// (unit_l2_floats: UnitL2PackedBFloats, vacc_gemm_unit_l2.h), is cut into
// the fewest blocks of that share (give or take a panel: equal counts of
// whole panels, to within one), if that takes at most kMostOwnBL2Blocks:
// every block packs A again, but the units' short chunks then read B from
// L2, not L3 (blocking.h).
inline int64_t PackedDriverBlockColumns(int64_t n, int64_t k, int64_t nr, int parts,
                                        int64_t unit_l2_floats) {
  const int64_t nc = std::max(nr, std::min(kNC, kUnitPackedBFloats / k) / nr * nr);
  const int64_t panels = CeilDiv(n, nr), b_floats = PackedBBlockFloats(n, nr, k);
  if (parts < 2 || n > nc || PackedDriverSharesB(b_floats, parts) || unit_l2_floats <= 0) {
    return nc;
  }
  const int64_t blocks = CeilDiv(b_floats, unit_l2_floats);
  if (blocks < 2 || blocks > kMostOwnBL2Blocks || panels < blocks) return nc;
  return CeilDiv(panels, blocks) * nr;
}

// The packed B panel a unit's tiles walk into L2 (the fetch walk,
// NextPanelSlice in vacc_gemm.cc) while it runs the q-th of `panels`
// panels, in its order from first_panel on, of the K block that starts
// at row pc (K blocks of kc_max rows of K, the last shorter): the
// next panel in that order; after the last, the next K block's first;
// after the last K block's last, K block 0's first, which the unit's next
// row chunk starts with (its A-packing tiles otherwise find that panel in
// L3, or in no cache at all; wasted if the unit has no next chunk).
struct WalkedPanel {
  int64_t pc = 0;  // first row of K of its K block
  int64_t kc = 0;  // that block's depth
  int64_t p = 0;   // the panel
};
inline WalkedPanel PackedDriverWalkedPanel(int64_t q, int64_t panels, int64_t first_panel,
                                           int64_t pc, int64_t k, int64_t kc_max) {
  const int64_t kc = KBlockDepth(pc, k, kc_max);
  if (q + 1 < panels) return {pc, kc, (first_panel + q + 1) % panels};
  const int64_t next_pc = pc + kc < k ? pc + kc : 0;
  return {next_pc, KBlockDepth(next_pc, k, kc_max), first_panel};
}

// How many column slices the packed driver cuts B into: one per
// participant when B is at least as wide as A is tall (n >= m; with the
// wide tile, shape kWide, n >= kWideTileSliceAspect * m) and each slice
// has kColumnSliceMinPanels panels of nr columns; 1 (row chunks over all
// of B) otherwise. A slice's unit packs only its own columns of B and
// all of A: where A is the smaller operand, that copies less than every
// unit packing all of B (or sharing one packed B across cores), and no
// packed block is shared (blocking.h).
inline int64_t PackedDriverColumnSlices(int64_t m, int64_t n, int64_t nr, int parts,
                                        TileShape shape) {
  const int64_t aspect = shape == TileShape::kWide ? kWideTileSliceAspect : 1;
  if (parts < 2 || m * aspect > n) return 1;
  return CeilDiv(n, nr) >= kColumnSliceMinPanels * parts ? parts : 1;
}

// body(p) for each participant p of a parallel step on `units` (the caller
// is participant 0), or body(0) alone without units.
inline void ForEachParticipant(ComputeUnits* units, const std::function<void(int)>& body) {
  const int parts = Participants(units);
  if (parts == 1) {
    body(0);
    return;
  }
  units->ParallelFor(static_cast<size_t>(parts), 1, [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) body(static_cast<int>(p));
  });
}

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
