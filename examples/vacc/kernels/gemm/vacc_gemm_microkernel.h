// SPDX-License-Identifier: Apache-2.0
//
// The GEMM's innermost piece: one MR x NR tile of C from one packed panel of
// A (KC x MR) and one of B (KC x NR), held in registers for the whole KC
// loop. Its shape depends on the SIMD target (NR is two vectors), so the
// driver asks for the current one and packs to fit.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_MICROKERNEL_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_MICROKERNEL_H_

#include <cstdint>
#include <string>

namespace vacc {
namespace gemm {

// MicroKernel::run's fetch walk: one cache line of kFetchLineFloats every
// kFetchKSteps k steps, so a tile kc deep fetches FetchedFloats(kc) floats.
// The driver cuts the next panel into slices of that size (NextPanelSlice).
constexpr int64_t kFetchLineFloats = 64 / sizeof(float);
constexpr int64_t kFetchKSteps = 4;
inline int64_t FetchedFloats(int64_t kc) { return kc / kFetchKSteps * kFetchLineFloats; }
// How many tiles' fetch walks cover one packed B panel nr wide, whatever
// its depth kc (nr * kc floats, FetchedFloats(kc) a tile): 8 at NR 32
// (AVX-512), 4 at NR 16 (AVX2).
constexpr int64_t FetchWalkTiles(int64_t nr) { return nr * kFetchKSteps / kFetchLineFloats; }
// RowsKernel's in-place fetch: a row of the next panel every
// kFetchRowKSteps k steps, so a tile kc deep fetches up to
// FetchedRows(kc) rows.
constexpr int64_t kFetchRowKSteps = 2;
inline int64_t FetchedRows(int64_t kc) { return kc / kFetchRowKSteps; }

// How a kernel set lays out its packed A panels (vacc_gemm_microkernel.cc
// says why there are two): k-major, A(r, k) at a[k * mr + r], as
// MatrixA::Pack writes them; or, on targets with native FMA, in groups of
// four k steps with each row's four values together (a last group of
// t = kc % 4 steps has its rows t apart). Other targets lay out kGroups
// panels as kInterleaved.
enum class APanels { kInterleaved, kGroups };

// Where A(r, k) of a panel kc deep and mr rows wide sits in `layout` (the
// layout a kernel set's panels have: MicroKernel::a_panels). The kernels
// step through panels with pointers; the tests check them against this.
inline int64_t APanelIndex(APanels layout, int64_t kc, int mr, int64_t k, int r) {
  if (layout == APanels::kInterleaved) return k * mr + r;
  const int64_t group = k / 4 * 4;
  const int64_t steps = kc - group < 4 ? kc - group : 4;  // the last group's may be fewer
  return group * mr + r * steps + k % 4;
}

// Rows of a row-major float32 B that a packed tile copies into the next
// B panel while it computes (MicroKernel::run's copy): `rows` rows of NR
// floats, from src (rows ld apart) to dst (the packed panel's layout: rows
// NR apart, 64-byte aligned). The driver hands each tile of a panel a
// slice of the next panel, so that panel is packed before its first tile
// (vacc_gemm.cc, NextPanelCopy).
struct PanelCopy {
  const float* src = nullptr;
  int64_t ld = 0;
  float* dst = nullptr;
  int64_t rows = 0;
  // Iterations of the k loop (kFetchKSteps k steps each) from one row to
  // the next: the driver spreads a tile's rows over its whole k loop.
  int64_t every = 1;
};

// The shapes of the packed tile. kTall: MR rows of two vectors (12 x 32 on
// AVX-512, 6 x 16 on AVX2). kWide: 6 rows of four vectors, 6 x 64, on
// AVX-512 only: per k step 4 loads of B and 6 broadcasts of A for 24 FMAs,
// where the tall tile takes 2 and 12. Its B panels are 64 wide.
enum class TileShape { kTall, kWide };

struct MicroKernel {
  int mr = 0;  // rows of the tile (A panel width)
  int nr = 0;  // columns of the tile (B panel width)
  // C[0..m) x [0..n) (+)= a_panel * b_panel, m <= mr, n <= nr; the panels are
  // zero-padded to mr/nr, so only the store looks at m and n. Unless
  // fetch_l2 is NULL, the kernel also fetches into L2 (and L1 on AMD
  // cores: FetchWalkToL1) the FetchedFloats(kc) floats from fetch_l2 on, a
  // line every kFetchKSteps k steps (on targets with native FMA, where its
  // k loop runs four steps at a time; the others ignore it): a slice of
  // the next packed panel the caller will use (NextPanelSlice in
  // vacc_gemm.cc), so that panel is in L2 before its tiles start.
  // Unless copy is NULL it also copies copy->rows rows of B into the next
  // panel (PanelCopy), one row per four k steps on targets with native FMA
  // (where the load and store ports have room beside the FMAs), the rest
  // (all of them elsewhere) after its k loop.
  void (*run)(int64_t kc, const float* a_panel, const float* b_panel, float* c, int64_t ldc,
              int m, int n, bool accumulate, const float* fetch_l2,
              const PanelCopy* copy) = nullptr;
  // The same for a full NR-wide panel of a row-major float32 B read in
  // place (rows ldb apart), which it also packs into b_packed (64-byte
  // aligned) as it goes: the first tile of a panel packs it for free, where
  // the FMAs leave the load and store ports idle, instead of in a pass of
  // its own (a twentieth of 256 x 784 x 512 on Zen4).
  void (*run_packing)(int64_t kc, const float* a_panel, const float* b, int64_t ldb,
                      float* b_packed, float* c, int64_t ldc, int m, bool accumulate) = nullptr;
  // The same with m rows of a float32 A read in place, A(r, k) at
  // a[r * a_row_step + k * a_k_step] with one of the steps 1 (a row-major
  // A, or a transposed one), which it also packs into a_packed in the set's
  // layout (APanels; rows past m hold copies of row m-1, not zeros:
  // only the store looks at m). The first panel of a block packs A this way
  // instead of a pass of its own, which was 4-5% of 512^3 on Zen4: on one
  // unit 512^3 and 1024^3 ran 1.02-1.03x, 256 x 784 x 512 1.02x; on two,
  // within noise; a transposed A (784 x 256 x 512 A^T, a weight gradient)
  // 1.02-1.03x on one and two. B is packed (b_packed NULL: b is the panel,
  // n <= nr), or read in place too, rows ldb apart, and packed (a full
  // panel).
  void (*run_packing_a)(int64_t kc, const float* a, int64_t a_row_step, int64_t a_k_step,
                        float* a_packed, const float* b, int64_t ldb, float* b_packed, float* c,
                        int64_t ldc, int m, int n, bool accumulate) = nullptr;
  // The layout of the A panels its functions read and write: what
  // CurrentMicroKernel was asked for, except that targets without native
  // FMA never group.
  APanels a_panels = APanels::kInterleaved;
  // The tile's shape: kWide only where the target has the wide tile.
  TileShape shape = TileShape::kTall;
  const char* target = "";
};

// The micro-kernel of the Highway target dispatch selects now (VACC_SIMD).
// half_width: the same tile with vectors of half the target's width (NR of
// 16 on AVX-512, 8 on AVX2), for a B of at most that many columns: a
// full-width tile would compute mostly padding (N = 10 uses 10 of 32
// columns on AVX-512). It never issues more instructions than the full
// tile, and on a core that runs 512-bit FMAs as two 256-bit halves (AMD
// Zen4) each instruction costs half as much: a 256 x 512 x 10 MatMul ran
// 1.84x as fast on one unit, 1.74x on two.
//
// a_panels: the layout of the A panels that run and run_packing read and
// run_packing_a writes. kGroups is for a float32 A in memory that the first
// panel's tiles pack (PackedGemm); A packed by MatrixA::Pack (or any
// PackableA) is kInterleaved.
//
// shape: the tile's shape (TileShape); a target without the one asked for
// gives its tall tile, so callers read mr and nr from what they get.
MicroKernel CurrentMicroKernel(bool half_width = false,
                               APanels a_panels = APanels::kInterleaved,
                               TileShape shape = TileShape::kTall);

// The shape of the packed driver's tile (PackedGemm) on this host: kWide
// where it measured faster (vacc_gemm_microkernel.cc, WideTilePays), unless
// SelectPackedTileShape chose otherwise. The other drivers keep kTall.
TileShape PackedDriverTileShape();

// The packed driver's kernel: CurrentMicroKernel at full width with its A
// panels laid out as a_panels, in PackedDriverTileShape's shape.
MicroKernel PackedDriverMicroKernel(APanels a_panels = APanels::kInterleaved);

// Applies a VACC_GEMM_TILE value: "auto" (or empty: this host's choice),
// "tall" or "wide". False, with *error naming the value and the choices,
// for anything else. Process-wide, as VACC_SIMD.
bool SelectPackedTileShape(const std::string& choice, std::string* error);

// C[0..m) x [0..n) (+)= the first m x n of tile (rows ld apart): how the
// micro-kernels store an edge tile, from a buffer. Out of line on purpose:
// inlined, its loops (vectorized at -O3) made GCC 12 spill accumulators in
// the kernels' k loops.
void StoreTileCorner(const float* tile, int64_t ld, float* c, int64_t ldc, int m, int n,
                     bool accumulate);

// The micro-kernel for an A used in place (vacc_gemm_microkernel_rows.cc):
// run[R] computes C[0..R) x [0..n) (+)= A[0..R) x [0..kc) * b_panel, for
// R = 1..max_rows rows of A and a packed, zero-padded B panel (n <= nr).
// Row r's values come in segments of seg_len: k = s*seg_len + j is at
// a + r*lda + s*seg_stride + j (a plain matrix: seg_len = kc).
struct RowsKernel {
  // The tables' capacity: the tallest tile of any target.
  static constexpr int kMaxRows = 8;
  // Rows of the next tile when `left` rows remain, tiles of at most `most`
  // rows: `most` at a time, but a remainder of 1-3 rows is shared with the
  // tile before it (with 6: 8 rows are 4+4, not 6+2): a tile of few rows
  // has too few accumulators to keep both FMA pipes busy. How much a
  // 4-row tile loses depends on K: on Zen3 (AVX2) ~8% per row at K = 42
  // (the row Winograd, which therefore cuts its rows evenly, into 6s and
  // 5s: Stride2RowTileHeights), 3% at K = 784 (32 x 784 x 128, perf),
  // where 6s and 5s ran 0.99x of this rule; so the rule stays as it is
  // for every other caller.
  static int TileRowsUpTo(int most, int64_t left) {
    if (left <= most) return static_cast<int>(left);
    if (left < most + 4) return static_cast<int>((left + 1) / 2);  // most 6, 7..9: 4+3, 4+4, 5+4
    return most;
  }
  int TileRows(int64_t left) const { return TileRowsUpTo(max_rows, left); }
  // This target's tallest tile: 6 rows with 16 vector registers, 8 with
  // AVX-512's 32 (whose packed kernel takes 12: MicroKernel::mr).
  int max_rows = 0;
  // The tallest tile of run_b_in_place_pair (0 where there is none).
  int pair_max_rows = 0;
  int nr = 0;
  void (*run[kMaxRows + 1])(int64_t kc, const float* a, int64_t lda, int64_t seg_len,
                            int64_t seg_stride, const float* b_panel, float* c, int64_t ldc,
                            int n, bool accumulate) = {};
  // The same for a plain A (one segment) and a full NR-wide panel of a
  // row-major float32 B read in place (rows ldb apart), which it also packs
  // into b_packed (64-byte aligned) on the way, for the tiles after it.
  void (*run_packing[kMaxRows + 1])(int64_t kc, const float* a, int64_t lda, const float* b,
                                    int64_t ldb, float* b_packed, float* c, int64_t ldc,
                                    bool accumulate) = {};
  // The same reading B in place without packing it. Unless fetch is NULL,
  // it also fetches fetch_rows rows of the panel the caller runs next (as
  // wide as this one, rows ldb apart from fetch on), one row every
  // kFetchRowKSteps k steps from the start, up to FetchedRows(kc) rows
  // (InPlaceFetch in vacc_gemm_small_m.cc cuts that panel among the
  // tiles), and the next tile's rows of A (the R rows after this tile's);
  // on targets with native FMA, as run's fetch_l2.
  void (*run_b_in_place[kMaxRows + 1])(int64_t kc, const float* a, int64_t lda, const float* b,
                                       int64_t ldb, float* c, int64_t ldc, bool accumulate,
                                       const float* fetch, int64_t fetch_rows) = {};
  // The same for two full panels side by side, one 2*NR-wide tile: A's
  // values are loaded and broadcast once for both, and A is read half as
  // often. Up to pair_max_rows rows, NULL past them and where the target
  // lacks the registers (4R accumulators + 4 B vectors + 1: AVX-512 has
  // them up to 6 rows, AVX2 not at all).
  void (*run_b_in_place_pair[kMaxRows + 1])(int64_t kc, const float* a, int64_t lda,
                                            const float* b, int64_t ldb, float* c, int64_t ldc,
                                            bool accumulate, const float* fetch,
                                            int64_t fetch_rows) = {};
  // run's twin for two panels packed side by side as one 2*NR-wide panel
  // (b_panel: kc x 2*NR, n <= 2*NR), A in segments as run's: the direct
  // convolution's pairs. Up to pair_max_rows rows, as the pairs above.
  // With fetch_c false it never fetches C ahead (a C the caller keeps in
  // cache: the stride-2 Winograd's products); true leaves the choice to
  // the kernel, as run's.
  void (*run_pair[kMaxRows + 1])(int64_t kc, const float* a, int64_t lda, int64_t seg_len,
                                 int64_t seg_stride, const float* b_panel, float* c, int64_t ldc,
                                 int n, bool accumulate, bool fetch_c) = {};
};

// The in-place micro-kernels of the target dispatch selects now (of half
// the vector width with half_width, as CurrentMicroKernel). Built anew on
// each call, as the drivers ask per GEMM: 0.1% of a 32 x 784 x 128 call
// on Zen3 (perf), too little to cache per target.
RowsKernel CurrentRowsKernel(bool half_width = false);

// The kernels for a B of n columns: the half-width ones when they cover n
// (n <= half of the full NR), else the full ones. Every driver picks its
// kernels (and so its panel width) here, so the choice is made once.
MicroKernel MicroKernelFor(int64_t n);
RowsKernel RowsKernelFor(int64_t n);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_MICROKERNEL_H_
