// SPDX-License-Identifier: Apache-2.0
//
// The micro-kernel for an unpacked A (vacc_gemm_microkernel.h, RowsKernel):
// R rows of A read in place (float32) times a packed NR-wide panel of B,
// R = 1..kTileRows (6, or 8 on AVX-512) chosen per tile. The short-A path
// uses it (A is too small to be worth packing) and so does the direct
// convolution (an output pixel's receptive field is KH runs of KW*Cin
// contiguous values: the segments).
// With R fitted to the tile no FMA is spent on padding rows (M = 32 is
// 6+6+6+6+4+4 rows, not 6 x 6 with 4 rows of zeros). Same register budget
// as the packed kernel: 2R accumulators + 2 B vectors + 1 broadcast value
// (kTileRows); on AVX-512 (32 registers) the kernel reading B in place
// also takes two panels at once, up to 6 rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_microkernel_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

#include <cstdint>
#include <utility>

#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_tags-inl.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// R rows x kVecs vectors of C in registers (2: one B panel; 4: two panels
// side by side): what the kernels below share. Every loop over r and v is
// fully unrolled (compile-time counts), so the arrays live in registers. D
// is the full vector (FullTag) or half of it (HalfTag, for a narrow B:
// vacc_gemm_microkernel.h).
template <int R, class D, int kVecs = 2>
struct RowsTile {
  using V = hn::Vec<D>;
  V acc[kVecs][R];

  // Fetches the tile's lines of C now, so the store after the k loop does
  // not wait for them (as KernelF32 does; C is usually out of cache).
  // RowsTileF32 skips it for some tiles (see there).
  static HWY_INLINE void PrefetchC(const float* c, int64_t ldc, int n) {
    HWY_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      hwy::Prefetch(c + r * ldc);
      if (kVecs == 4) {  // the two lines between (one vector each on AVX-512)
        hwy::Prefetch(c + r * ldc + n / 4);
        hwy::Prefetch(c + r * ldc + n / 2);
      }
      hwy::Prefetch(c + r * ldc + n - 1);
    }
  }
  explicit RowsTile(D d) {
    HWY_UNROLL(4)
    for (int v = 0; v < kVecs; ++v) {
      HWY_UNROLL(8)
      for (int r = 0; r < R; ++r) acc[v][r] = hn::Zero(d);
    }
  }
  // Row r += a_value(r) * b[0..kVecs): one k step.
  template <class AValue>
  HWY_INLINE void Step(D d, const V* b, const AValue& a_value) {
    HWY_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, a_value(r));
      HWY_UNROLL(4)
      for (int v = 0; v < kVecs; ++v) acc[v][r] = hn::MulAdd(av, b[v], acc[v][r]);
    }
  }
  // The same for one panel (kVecs = 2), B's row as two vectors.
  template <class AValue>
  HWY_INLINE void Step(D d, V b0, V b1, const AValue& a_value) {
    static_assert(kVecs == 2, "one panel");
    HWY_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, a_value(r));
      acc[0][r] = hn::MulAdd(av, b0, acc[0][r]);
      acc[1][r] = hn::MulAdd(av, b1, acc[1][r]);
    }
  }
  // C[0..R) x [0..n) (+)= the tile, n <= kVecs vectors. One plain loop per
  // case, no per-store select: with selects GCC 12 spilled accumulators in
  // the callers' unrolled k loops.
  HWY_INLINE void Store(D d, float* HWY_RESTRICT c, int64_t ldc, int n, bool accumulate) const {
    const size_t N = hn::Lanes(d);
    const bool full = static_cast<size_t>(n) == kVecs * N;
    if (full && accumulate) {
      HWY_UNROLL(8)
      for (int r = 0; r < R; ++r) {
        float* row = c + r * ldc;
        HWY_UNROLL(4)
        for (int v = 0; v < kVecs; ++v) {
          hn::StoreU(hn::Add(hn::LoadU(d, row + v * N), acc[v][r]), d, row + v * N);
        }
      }
      return;
    }
    // A partial panel: through a buffer, then the n columns that exist.
    HWY_ALIGN float tile[R * kVecs * HWY_LANES(float)];  // room for the full width
    float* out = full ? c : tile;
    const int64_t ld = full ? ldc : static_cast<int64_t>(kVecs * N);
    HWY_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < kVecs; ++v) hn::StoreU(acc[v][r], d, out + r * ld + v * N);
    }
    if (!full) StoreTileCorner(tile, ld, c, ldc, R, n, accumulate);
  }
};

// The deepest pair tile of one segment that fetches its lines of C all at
// the start and runs its k loop two steps an iteration (RowsTileF32); see
// DeepPlainPairTile.
constexpr int64_t kShortPairK = 128;
// A pair tile of one segment (a plain A: the narrow-B path's) deeper than
// kShortPairK: it spreads its fetches of C over the k loop (RowsTileF32)
// and runs that loop four k steps an iteration (RowsPairKernelF32).
constexpr bool DeepPlainPairTile(int64_t kc, int64_t seg_len) {
  return seg_len >= kc && kc > kShortPairK;
}
// How far ahead along its rows the kernel fetches A: 2 lines.
constexpr int64_t kFetchAhead = 32;

// Every 16 k steps the kernel fetches each row's line kFetchAhead values
// ahead, and the next tile's rows (R rows on, lda apart) at this k: a
// tile's A rows come from L2 or memory as R short streams that the hardware
// prefetcher picks up late, and without the second fetch each tile starts
// on rows of which nothing is in cache. Measured on Zen4 (interleaved,
// medians of 5-7), against the ahead-fetch alone: the 1x1 Conv2D (narrow-B
// path, rows of 1 KiB) t1 1.04-1.07x, t2 1.02-1.04x; against no fetch at
// all (the direct convolution had none): the 3x3 Conv2D 1.01-1.02x, the
// 7x7 stem (segments of 21 values) 1.00-1.02x; the short-A path with a
// packed B within 1%. (The ahead-fetch alone ran the stem 0.97x.)
// kPanels = 2: two panels side by side, packed as one 2*NR-wide panel (n
// up to 2*NR), as RowsBInPlaceKernelF32's pairs: A's values are broadcast
// once per 2*NR columns. fetch_c false: never fetch C (the caller's C is
// in cache). kUnroll: k steps per iteration of the k loop with native FMA
// (2 or 4; see there). Inlined into the table's entries below.
template <int R, class D, int kPanels, int kUnroll = 2>
HWY_INLINE void RowsTileF32(int64_t kc, const float* HWY_RESTRICT a, int64_t lda,
                            int64_t seg_len, int64_t seg_stride, const float* HWY_RESTRICT b,
                            float* HWY_RESTRICT c, int64_t ldc, int n, bool accumulate,
                            bool fetch_c) {
  constexpr int kVecs = 2 * kPanels;
  using Tile = RowsTile<R, D, kVecs>;
  const D d;
  const size_t N = hn::Lanes(d);
  // The direct convolution's pair tiles that only store whole vectors do
  // not fetch C: those 24 zmm stores (6 x 64 channels) wait in the store
  // queue without holding up the next tile, while 24 fetches of cold lines
  // at the tile's start likely compete with the k loop's A and B for the
  // L1's miss buffers (the VM has no counters to show it). Without them
  // the 7x7 RGB stem ran 1.008-1.009x at one unit and 1.007-1.012x at two
  // (Zen4, against oneDNN in paired rounds, builds alternating, medians of
  // 5-6, three experiments). Tiles of a plain A (one segment) keep the
  // fetch: without it the 1x1 Conv2D's pair tiles (narrow-B path, A
  // streaming from memory) ran 0.98-0.99x at one unit. A caller whose C
  // is in cache turns the fetch off (fetch_c): the stride-2 Winograd's
  // products (K = 12, C in L2) ran its stem 1.08x at one unit and 1.02x
  // at two without it (Zen4, paired with oneDNN, medians of 4).
  const bool whole_store = !accumulate && static_cast<size_t>(n) == kVecs * N;
  // A full deep plain pair tile (DeepPlainPairTile: the narrow-B path's)
  // spreads its fetches of C over the k loop instead, a few lines
  // every 16 k steps (as KernelF32 does): all 24 at the start took the
  // L1's miss buffers just as the loop's first B lines from L2 and A rows
  // from memory needed them. The narrow-B path, the two fetches
  // alternating call by call in one process (Ice Lake server Xeon, one
  // unit, medians of 41-61 calls), spread against at the start: the 1x1
  // Conv2D's 6272 x 256 x 128 1.018-1.033x in the VM's fast phases (five
  // runs), 1.00x in a slow one; 6272 x 512 x 128 1.01x, 1568 x 256 x 128
  // 1.03x, 1024 x 1024 x 128 1.00x. No fetch of C at all: 1.005-1.015x.
  // Paired with oneDNN in bench_vacc_conv (the two alternating run by
  // run, three runs each), the 1x1 Conv2D at one unit 0.973-0.996 ->
  // 0.995-1.001; at two 1.018-1.041 -> 1.016-1.141. At K = 64 (25088 x 64
  // x 64, a tile of 64 k steps) spreading lost (0.97x, a wide spread), so
  // short tiles fetch at the start. The loop's fetches need native FMA.
  const bool spread_c_fetch = HWY_NATIVE_FMA && kPanels == 2 && fetch_c &&
                              DeepPlainPairTile(kc, seg_len) &&
                              static_cast<size_t>(n) == kVecs * N;
  if (fetch_c && !spread_c_fetch && (kPanels == 1 || seg_len >= kc || !whole_store)) {
    Tile::PrefetchC(c, ldc, n);
  }
  // Lines of C the k loop fetches a turn (none unless spread): its turns,
  // at k = 0, 16, ... up to kc - kUnroll, share the tile's R * kVecs lines
  // (one vector each). Worked out only for a spread tile: the division
  // would cost the short tiles (K = 12 products) on every call.
  static_assert(kUnroll == 2 || kUnroll == 4, "16 k steps hold whole iterations");
  constexpr int64_t kCLines = R * kVecs;
  const int64_t c_per_turn = spread_c_fetch ? hwy::DivCeil(kCLines, (kc - kUnroll) / 16 + 1) : 0;
  int64_t c_fetched = 0;
  Tile tile(d);
  // One k step from the panel's row at b.
  const auto step = [&](const float* b_row, const auto& a_value) HWY_ATTR {
    if constexpr (kVecs == 2) {
      tile.Step(d, hn::LoadU(d, b_row), hn::LoadU(d, b_row + N), a_value);
    } else {
      hn::Vec<D> bv[kVecs];
      HWY_UNROLL(4)
      for (int v = 0; v < kVecs; ++v) bv[v] = hn::LoadU(d, b_row + v * N);
      tile.Step(d, bv, a_value);
    }
  };
  // seg: where the current segment starts in row 0, stepped rather than
  // computed (k0 / seg_len was a 64-bit division per segment: the 7x7 RGB
  // stem has 7 segments of 21 values per tile).
  const float* seg = a;
  for (int64_t k0 = 0; k0 < kc; k0 += seg_len, seg += seg_stride) {
    const float* rows[R];
    HWY_UNROLL(8)
    for (int r = 0; r < R; ++r) rows[r] = seg + r * lda;
    const int64_t len = kc - k0 < seg_len ? kc - k0 : seg_len;
    // With native FMA, unrolled x2 (KernelF32 in vacc_gemm_microkernel.cc
    // takes x4): here x4 made GCC 12 spill two accumulators in the loop,
    // and the convolutions ran 2-11% slower. x2 keeps all in registers
    // (checked at -O2 and -O3). Measured interleaved against one step per
    // iteration: the 3x3 Conv2D +5-7%, the stem (segments of 21) the same.
    // On AVX-512 (32 registers) x4 does not spill, but measured on Zen4 it
    // ran the 3x3 and the stem 0-2% slower than x2. The deep one-segment
    // pair tiles take x4 (kUnroll, RowsPairKernelF32).
    int64_t k = 0;
    if (HWY_NATIVE_FMA) {
      for (; k + kUnroll <= len; k += kUnroll) {
        if ((k & 15) == 0) {
          HWY_UNROLL(8)
          for (int r = 0; r < R; ++r) {
            hwy::Prefetch(rows[r] + k + kFetchAhead);
            hwy::Prefetch(rows[r] + R * lda + k);
          }
          for (int64_t q = 0; q < c_per_turn && c_fetched < kCLines; ++q, ++c_fetched) {
            hwy::Prefetch(c + (c_fetched / kVecs) * ldc + (c_fetched % kVecs) * N);
          }
        }
        HWY_UNROLL(4)
        for (int u = 0; u < kUnroll; ++u) {
          step(b + u * kVecs * N, [&](int r) { return rows[r][k + u]; });
        }
        b += kUnroll * kVecs * N;
      }
    }
    for (; k < len; ++k) {
      step(b, [&](int r) { return rows[r][k]; });
      b += kVecs * N;
    }
  }
  tile.Store(d, c, ldc, n, accumulate);
}

// RowsKernel::run: one tile.
template <int R, class D>
void RowsKernelF32(int64_t kc, const float* HWY_RESTRICT a, int64_t lda, int64_t seg_len,
                   int64_t seg_stride, const float* HWY_RESTRICT b, float* HWY_RESTRICT c,
                   int64_t ldc, int n, bool accumulate) {
  RowsTileF32<R, D, 1>(kc, a, lda, seg_len, seg_stride, b, c, ldc, n, accumulate, true);
}

// RowsKernel::run_pair: one pair tile.
template <int R, class D>
void RowsPairKernelF32(int64_t kc, const float* HWY_RESTRICT a, int64_t lda, int64_t seg_len,
                       int64_t seg_stride, const float* HWY_RESTRICT b, float* HWY_RESTRICT c,
                       int64_t ldc, int n, bool accumulate, bool fetch_c) {
  // A deep tile of one segment (the narrow-B path's: the 1x1 Conv2D) runs
  // its k loop four steps an iteration rather than two (no spills with
  // AVX-512's 32 registers): call by call against x2 in one process (Ice
  // Lake server Xeon, medians of 41-61), 6272 x 256 x 128 1.002-1.017x at
  // one unit (four runs), 1.010-1.020x at two, 6272 x 512 x 128 1.039x.
  // The convolutions' segmented tiles keep x2 (x4 was slower on Zen4).
  if (DeepPlainPairTile(kc, seg_len)) {
    RowsTileF32<R, D, 2, 4>(kc, a, lda, seg_len, seg_stride, b, c, ldc, n, accumulate, fetch_c);
  } else {
    RowsTileF32<R, D, 2>(kc, a, lda, seg_len, seg_stride, b, c, ldc, n, accumulate, fetch_c);
  }
}

// How far ahead (rows of B) the packing kernel fetches the rows it reads:
// its B rows come from L3 one line per row (a B of 128 columns puts them
// 512 bytes apart, a new page every 8 rows, where the hardware prefetcher
// starts over). With the advancing pointers of its packing loop (below):
// 32 x 784 x 128 on Zen3 (AVX2), paired with oneDNN, 5 repetitions, builds
// alternating three times: t1 0.983-0.997 -> 1.010-1.012, t2 0.985-1.010
// -> 1.001-1.008. In a stand-alone copy of the path, 8 or 16 rows ahead ran
// the same, 32 a little and 64 clearly slower, into L2 only (prefetcht2)
// slower than none.
constexpr int64_t kPackFetchRows = 16;

// RowsTileF32 for a plain A (one segment) and a full panel of a row-major
// float32 B read in place, rows ldb apart. With kPackB it packs the panel
// as it goes: each row of B it loads is also stored to b_packed (kc x 2
// vectors, aligned), for the next row tiles to use. The short-A path runs
// that for the first row tile of each panel: B is read once, in the same
// pass as the first tile's FMAs, instead of in a packing pass of its own
// (which was a fifth of 32 x 784 x 128 on Zen3). Without kPackB every tile
// reads B in place (b_packed unused): when B's rows are not a multiple of
// 4 KiB apart the panel stays in L2 between the tiles, and no tile pays
// for packing (vacc_gemm_small_m.cc). kPanels = 2 (not packing) reads two
// adjacent panels, 4 vectors of each B row: A's values are loaded and
// broadcast once per 64 columns on AVX-512 (256 x 784 x 512 on Zen4:
// 1.02-1.03x at t1 and t2 against single panels).
// Not packing and given a fetch pointer, the kernel also fetches
// (RowsKernel::run_b_in_place): fetch_rows rows of the panel the caller
// runs next, a row every kFetchRowKSteps steps, into L1 (prefetcht0); and
// every 16 k steps the next tile's rows of A (R rows on) at this k, as
// RowsTileF32 does. In the Keras MLP step's sequence of products
// (operands out of cache; Zen4, one unit, variants in random order,
// medians of 150 rounds) the in-place products ran 256 x 784 x 512 1.02x
// and 256 x 512 x 512 1.04x: the A fetch alone 1.02-1.03x, the B fetch
// alone 1.00-1.015x; with operands in L3 the B fetch 1.02-1.03x and the A
// fetch nothing. Into L2 only (prefetcht2) the B fetch gained nothing, and
// neither did a run's first tile fetching its own B rows 8-32 ahead (on
// Zen4, reading in place; packing on Zen3 it does pay: kPackFetchRows).
template <int R, class D, bool kPackB, int kPanels = 1>
void RowsBInPlaceKernelF32(int64_t kc, const float* HWY_RESTRICT a, int64_t lda,
                           const float* HWY_RESTRICT b, int64_t ldb,
                           float* HWY_RESTRICT b_packed, float* HWY_RESTRICT c, int64_t ldc,
                           bool accumulate, const float* fetch, int64_t fetch_rows) {
  static_assert(!kPackB || kPanels == 1, "packs one panel");
  static_assert(kFetchRowKSteps == 2, "fetches a row per iteration of two k steps");
  constexpr int kVecs = 2 * kPanels;
  const D d;
  const size_t N = hn::Lanes(d);
  using Tile = RowsTile<R, D, kVecs>;
  Tile::PrefetchC(c, ldc, static_cast<int>(kVecs * N));
  Tile tile(d);
  // One k step: B's row k, stored to the packed panel if kPackB.
  const auto step = [&](int64_t k) HWY_ATTR {
    hn::Vec<D> bv[kVecs];
    HWY_UNROLL(4)
    for (int v = 0; v < kVecs; ++v) bv[v] = hn::LoadU(d, b + k * ldb + v * N);
    if (kPackB) {
      hn::Store(bv[0], d, b_packed + k * 2 * N);
      hn::Store(bv[1], d, b_packed + k * 2 * N + N);
    }
    const auto a_value = [&](int r) { return a[r * lda + k]; };
    if constexpr (kVecs == 2) {
      tile.Step(d, bv[0], bv[1], a_value);  // scheduled as before pairs existed
    } else {
      tile.Step(d, bv, a_value);
    }
  };
  // Unrolled x2 with native FMA, as RowsTileF32.
  int64_t k = 0;
  if constexpr (kPackB) {
    if (HWY_NATIVE_FMA) {
      // Packing, the kernel fetches its own rows of B kPackFetchRows ahead,
      // and addresses A, B and the panel with pointers that advance: with
      // step's indices GCC 12 kept six row pointers of A and reloaded four
      // of them from the stack every two k steps.
      const float* ak = a;
      const float* bk = b;
      float* pk = b_packed;
      const auto packing_step = [&](const float* a_k, const float* b_k, float* p_k) HWY_ATTR {
        const auto b0 = hn::LoadU(d, b_k), b1 = hn::LoadU(d, b_k + N);
        hn::Store(b0, d, p_k);
        hn::Store(b1, d, p_k + N);
        tile.Step(d, b0, b1, [&](int r) { return a_k[r * lda]; });
      };
      for (; k + kPackFetchRows + 2 <= kc; k += 2) {
        hwy::Prefetch(bk + kPackFetchRows * ldb);
        hwy::Prefetch(bk + (kPackFetchRows + 1) * ldb);
        packing_step(ak, bk, pk);
        packing_step(ak + 1, bk + ldb, pk + 2 * N);
        ak += 2;
        bk += 2 * ldb;
        pk += 4 * N;
      }
    }
  }
  if (HWY_NATIVE_FMA) {
    for (; k + 2 <= kc; k += 2) {
      if (!kPackB && fetch != nullptr) {
        if (fetch_rows > 0) {
          HWY_UNROLL(4)
          for (int v = 0; v < kVecs; ++v) hwy::Prefetch(fetch + v * N);
          fetch += ldb;
          --fetch_rows;
        }
        if ((k & 15) == 0) {
          HWY_UNROLL(8)
          for (int r = 0; r < R; ++r) hwy::Prefetch(a + (r + R) * lda + k);
        }
      }
      step(k);
      step(k + 1);
    }
  }
  for (; k < kc; ++k) step(k);
  tile.Store(d, c, ldc, static_cast<int>(kVecs * N), accumulate);
}

// The table's entries: packing (no fetch), and reading in place (no packed
// panel).
template <int R, class D>
void RowsPackingKernelF32(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb,
                          float* b_packed, float* c, int64_t ldc, bool accumulate) {
  RowsBInPlaceKernelF32<R, D, true>(kc, a, lda, b, ldb, b_packed, c, ldc, accumulate, nullptr,
                                    0);
}
template <int R, class D, int kPanels>
void RowsReadingKernelF32(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb,
                          float* c, int64_t ldc, bool accumulate, const float* fetch,
                          int64_t fetch_rows) {
  RowsBInPlaceKernelF32<R, D, false, kPanels>(kc, a, lda, b, ldb, nullptr, c, ldc, accumulate,
                                              fetch, fetch_rows);
}

// Two panels at once take 4R accumulators + 4 B vectors + 1 broadcast: 29
// registers at 6 rows, which needs a target with 32 (AVX-512; Highway
// numbers better x86 targets lower), and no more than 6 rows there.
constexpr bool kHasPanelPairs = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3;
constexpr int kPairMaxRows = kHasPanelPairs ? 6 : 0;

// The kernels of tiles of R rows.
template <int R, class D>
void SetRowsKernels(RowsKernel* k) {
  k->run[R] = &RowsKernelF32<R, D>;
  k->run_packing[R] = &RowsPackingKernelF32<R, D>;
  k->run_b_in_place[R] = &RowsReadingKernelF32<R, D, 1>;
  if constexpr (R <= kPairMaxRows) {
    k->run_pair[R] = &RowsPairKernelF32<R, D>;
    k->run_b_in_place_pair[R] = &RowsReadingKernelF32<R, D, 2>;
  }
}

template <class D, int... R>
RowsKernel MakeRowsKernel(std::integer_sequence<int, R...>) {
  RowsKernel k;
  k.nr = static_cast<int>(2 * hn::Lanes(D()));
  k.max_rows = kTileRows;
  k.pair_max_rows = kPairMaxRows;
  (SetRowsKernels<R, D>(&k), ...);
  return k;
}

// 1..N from 0..N-1.
template <int... I>
constexpr std::integer_sequence<int, (I + 1)...> FromOne(std::integer_sequence<int, I...>) {
  return {};
}

RowsKernel GetRowsKernel(bool half_width) {
  // Tiles of 1 to kTileRows rows.
  using Rows = decltype(FromOne(std::make_integer_sequence<int, kTileRows>()));
  static_assert(kTileRows <= RowsKernel::kMaxRows, "the tables hold every tile height");
  return half_width ? MakeRowsKernel<HalfTag>(Rows()) : MakeRowsKernel<FullTag>(Rows());
}

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vacc {
namespace gemm {

HWY_EXPORT(GetRowsKernel);

RowsKernel CurrentRowsKernel(bool half_width) {
  return HWY_DYNAMIC_DISPATCH(GetRowsKernel)(half_width);
}

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
