// SPDX-License-Identifier: Apache-2.0
//
// The register-blocked micro-kernel (vacc_gemm_microkernel.h), written once
// with Highway and compiled per target. The tile is MR rows x 2 vectors.
// With 16 registers (AVX2/SSE4) MR is 6: 12 accumulators + 2 B vectors + 1
// broadcast A value = 15 registers, 12 independent FMA chains in flight
// (2 FMA pipes x 4 cycles latency on Zen3 need at least 8). On AVX2 that is
// 6x16 floats, per k: 2 loads of B, 6 broadcasts of A, 12 FMAs. AVX-512
// has 32 registers, and MR is 12 (kPackedTileRows): 12x32 floats, 24
// accumulators, per k 2 loads of B and 12 broadcasts for 24 FMAs. That is
// the tall tile; AVX-512 also has a wide one, 6 x 64 (TileShape::kWide,
// kWideTileRows: 4 loads of B and 6 broadcasts for 24 FMAs), which the
// packed driver takes where it measured faster (WideTilePays).
// TODO(vendor): a device's matrix unit takes this tile (or a bigger one).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm/vacc_gemm_microkernel.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/cache_control.h"
#include "hwy/highway.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_tags-inl.h"
#include "kernels/vacc_simd.h"

HWY_BEFORE_NAMESPACE();
namespace vacc {
namespace gemm {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows of the tile (MR, kPackedTileRows in vacc_gemm_tags-inl.h): 6 with
// 16 vector registers, 12 with AVX-512's 32 (8 until the Ice Lake figures
// below). On an Intel Xeon (Emerald Rapids
// class: two 512-bit FMA pipes, 48 KiB L1d, 2 MiB L2), alternating 8 and 6
// rows in one process (medians of 15 pairs, one unit): 1024^3 1.10x,
// 256 x 1024 x 1024 1.10x, 512^3 and 256^3 1.08x, 2048^3 1.05x,
// 256 x 784 x 512 1.02x, 500 x 300 x 700 1.01x. Per k step it loads 10
// values for 16 FMAs instead of 8 for 12, and each pass over C is shared by
// more rows. (In a bare loop over pre-packed panels, 10, 12 and 14 rows and
// 8 x 48 ran within 2% of 8 rows; 8 divides the usual batch sizes.) Zen4
// was not measured with 8 rows.
// The ceiling on that Xeon, one core, medians of 21: this kernel over one
// hot 18-tile column (kc = 256) 178-182 GFLOP/s, and as plain intrinsics
// 8 x 32, 12 x 32, 14 x 32 and 8 x 48 tiles all 176-181, against 215 for
// FMAs alone (16 register chains, no loads). The FMA pipes idle ~15% once
// a k step also loads; FMAs with embedded broadcasts (inline asm) ran
// slower (164). GCC 12 leaves 8 register copies per 64 FMAs in the k loop;
// keeping B's vectors live to the step's end removed them at the same
// speed, so this core renames them for free. oneDNN's whole 256^3 call
// runs 175 (96% of that ceiling): the driver around this kernel (packing,
// C, hand-out) can afford ~4% there. It used ~7% (169; perf: the packing
// tiles 2.3% over their share of the FMAs, the driver's own code 2.6%,
// the plain tiles ~2% under the bare loop).
// A 6 x 64 tile for the packed driver (24 accumulators, B packed 64 wide,
// this kernel with four vectors a row) was tried on that Xeon: as inline
// asm in a bare loop 24-accumulator tiles ran 1.07x of an asm 8 x 32, but
// this kernel's 8 x 32 already runs at their rate in place (hot column of
// tiles, kc = 256: 178-180 against 177-180). Its A-packing tiles ran
// 1.05-1.10x (96 FMAs per row copied, not 64), while M = 256 ends on a
// 4-row tile and kc = 1024 streams a 256 KiB B panel from L2 (0.94x).
// Whole calls, alternating call by call in one process, one unit: 256^3
// 0.995x, 512^3 1.00x, 256 x 1024 x 1024 1.00x, 1024^3 and 2048^3 0.97x.
// So the tile stayed 8 x 32 there.
// On an Intel Xeon of the Ice Lake server class (model 106: two 512-bit
// FMA pipes, 48 KiB L1d, 1.25 MiB L2) a k step's loads cost more. Bare
// tiles over hot prepacked panels (intrinsics; medians of 15 rounds, each
// beside an FMA-only loop, as fractions of its rate), kc = 256 / 1024:
// 8 x 32 0.81 / 0.63, 12 x 32 0.86 / 0.69, 14 x 32 0.87 / 0.71, 8 x 48
// 0.94 / 0.76, 6 x 64 0.94 / 0.78: the fewer loads per FMA (10 per 16 at
// 8 x 32, 14 per 24 at 12 x 32, 10 per 24 at 6 x 64), the faster. 12 rows
// keep NR = 32, so B's packed panels, the copies and fetch walks of
// vacc_gemm.cc and every driver stay as they are (the packed driver's
// wide tile, later, takes 64: WideTilePays has its figures). This kernel
// with 12 rows against 8, whole calls alternating call by call in one
// process (operands hot, medians of 30 rounds; M x K x N),
// one unit: 256^3 1.027x, 512^3 1.056x, 1024^3 1.055x, 256 x 1024 x 1024
// 1.036x, 2048^3 1.062x, 256 x 784 x 512 1.047x, 300 x 500 x 700 1.029x,
// 1024 x 256 x 512 0.990x; two units: 256^3 1.025x, 512^3 1.089x, 1024^3
// 1.048x, 256 x 1024 x 1024 1.003x, 2048^3 1.059x (with chunks of eight
// tiles: FetchWalkTiles, PackedDriverChunks). FMAs broadcasting A
// from memory (embedded broadcast, inline asm: fewer instructions, more
// loads) lost here too: this kernel's plain tile over hot panels with
// rows 9-11 ran 0.84x (kc = 256) and 0.94x (kc = 1024), rows 6-11 0.76x
// and 0.81x, all rows 0.61x and 0.63x (medians of 41). On the Emerald Rapids
// Xeon 12 rows ran within 2% of 8 in the bare loop; whole calls were not
// measured there, nor on AMD Zen4. The row kernels keep 8 rows
// (kTileRows): they hold a pointer per row of A in place.
constexpr int kMaxMR = 12;
static_assert(kPackedTileRows <= kMaxMR, "the kernel names accumulators for 12 rows");
// Rows of the wide tile (TileShape::kWide, AVX-512 only): 6 rows of four
// vectors, 24 accumulators + 4 B vectors + 1 broadcast A value.
constexpr int kWideTileRows = 6;
static_assert(kWideTileRows * 4 <= kMaxMR * 2, "an edge tile's buffer holds either shape");
// How far ahead of the row it packs KernelPackingF32 fetches B's rows.
constexpr int64_t kPrefetchRows = 16;
// How far ahead of the row it copies the plain kernel fetches B's rows
// (PanelCopy): 8 rows, 32 k steps.
constexpr int64_t kCopyAheadRows = 8;
// How many groups of four k steps ahead of its FMAs a tile packing a
// row-major A into grouped panels copies them (Kernel, kGroupsAhead).
constexpr int64_t kAGroupsAhead = 2;
// How far ahead a kernel reading A in place fetches it: along its rows
// (row-major), or in k steps (a transposed A, a k step per line).
constexpr int64_t kAheadA = 96;
constexpr int64_t kAheadColumns = 16;
// The deepest tile that also fetches the next tile's lines of C.
constexpr int64_t kShortTileK = 128;

// One float copied through an integer register. As a float, GCC loads it
// once for both the copy and the broadcast, and broadcasts from a vector
// register, an instruction for the shuffle pipes (one of which also does
// FMAs on Zen4) instead of a load port's broadcast from memory.
HWY_INLINE void CopyBits(const float* from, float* to) {
  uint32_t bits;
  std::memcpy(&bits, from, sizeof(bits));
  std::memcpy(to, &bits, sizeof(bits));
}

// Where the kernel reads A from: a packed KC x MR panel, or a float32 A in
// place whose rows (kRows: A(r, k) at a[r * a_step + k]) or columns
// (kColumns, a transposed A: a[r + k * a_step]) are contiguous, packed on
// the way to a_packed as MatrixA::Pack would (rows past m repeat row m-1:
// their sums are never stored). (A kColumns variant for full tiles with one
// pointer, rows at constant offsets, instead of six stepped pointers, ran
// no faster: its time goes to waiting for A's lines, one per k step.)
enum ASource { kPacked, kRows, kColumns };

// Why a kernel set can group its packed A panels by four k steps (the
// layouts: APanels, vacc_gemm_microkernel.h; a panel is kc * MR floats
// either way). A row-major A packed on the way (kRows) then takes one 16-byte load and
// store per row per group; interleaved it takes a load and a store per
// value, 24 of each per four k steps at MR = 6 beside the FMAs' 32 loads,
// which GCC 12 turned into vmovd / vpinsrd / vpunpcklqdq merges (shuffles,
// and two accumulators pushed to the stack). On Zen3 (AVX2, one unit,
// the two layouts' kernels alternating in one process, medians of 201
// rounds of 1000 tiles, kc = 256) the A-packing tile ran 1.14-1.20x as
// fast grouped, with A in L1, in L3 or in memory, packing B too or not;
// the plain kernel on either layout 1.00x. The A-packing tiles of the 1x1
// Conv2D (6272 x 256 x 128) went from 21% to 17% of its time (perf). Only
// targets with native FMA group (their k loop runs four steps at a time);
// the others lay kGroups panels out as kInterleaved.
template <APanels kAsked>
constexpr bool kGroupsPanels = kAsked == APanels::kGroups && HWY_NATIVE_FMA;

// B comes packed (kPackB false: b is the KC x NR panel, b_step = 2N), or
// in place from a row-major float32 B (kPackB true: row k at b + k*b_step),
// in which case each row of the panel is also stored to b_packed as the
// packed layout has it, for the tiles after this one.
// fetch_l2: see MicroKernel::run (NULL: nothing to fetch); kFetchToL1:
// with prefetcht0 rather than prefetcht2 (FetchWalkToL1).
template <class D, int kMR, int kVecs, bool kPackB, ASource kA, APanels kLayout,
          bool kFetchToL1 = false, bool kCopy = false>
HWY_INLINE void Kernel(int64_t kc, const float* HWY_RESTRICT a, int64_t a_step,
                       float* HWY_RESTRICT a_packed, const float* HWY_RESTRICT b,
                       int64_t b_step, float* HWY_RESTRICT b_packed, float* HWY_RESTRICT c,
                       int64_t ldc, int m, int n, bool accumulate,
                       const float* fetch_l2 = nullptr, const PanelCopy* copy = nullptr) {
  const D d;
  const size_t N = hn::Lanes(d);
  // The tile is kMR rows of kVecs vectors (NR = kVecs * N): 2 (the tall
  // tile), or 4 at 6 rows (the wide tile, kWideTileRows), whose rows 0-5
  // take the accumulators of rows 6-11 for their third and fourth vectors.
  static_assert(kVecs == 2 || (kVecs == 4 && kMR <= 6), "a tile has 24 accumulators at most");
  const size_t NR = kVecs * N;
  // Rows of B to copy into the next panel (MicroKernel::run; the plain
  // kernel only), one per iteration of the unrolled k loop. A variant of
  // its own: the test and the pointers cost the plain kernel without a
  // copy ~0.5% at kc = 512.
  constexpr bool kMayCopy = kCopy && kA == kPacked && !kPackB;
  const float* copy_src = kMayCopy && copy != nullptr ? copy->src : nullptr;
  float* copy_dst = kMayCopy && copy != nullptr ? copy->dst : nullptr;
  const int64_t copy_ld = kMayCopy && copy != nullptr ? copy->ld : 0;
  int64_t copy_rows = kMayCopy && copy != nullptr ? copy->rows : 0;
  // Iterations of the k loop from one copied row to the next (PanelCopy::
  // every), counted down by copy_wait.
  const int64_t copy_every = kMayCopy && copy != nullptr && copy->every > 1 ? copy->every : 1;
  int64_t copy_wait = 1;
  constexpr bool kInPlace = kA != kPacked;
  // An A in place: the distance between rows, and between k steps.
  const int64_t row_step = kA == kRows ? a_step : 1;
  const int64_t k_step = kA == kColumns ? a_step : 1;
  // A's panel grouped (APanels above; not without native FMA), and the
  // distance between its rows within the current group: 4, and in the
  // last group the steps left.
  constexpr bool kGroups = kGroupsPanels<kLayout>;
  // A row-major A packed into grouped panels on the way: the k loop copies
  // each group kAGroupsAhead groups before its FMAs, which read A from
  // that copy, with one pointer as the plain tile does, instead of from
  // MR row pointers. Read from a copy stored in the same iteration, the
  // tile ran at 0.58x (its 4-byte broadcasts wait on the 16-byte stores);
  // one, two and four groups ahead, 1.02-1.04x of the in-place reads (the
  // A-packing tile alone, A hot, Intel Xeon, AVX-512). Whole GEMMs call by
  // call (examples/vacc/README.md): 1.001-1.005x on AVX-512, 1.001-1.014x
  // with the AVX2 kernels on the same Xeon; AMD not measured.
  constexpr bool kGroupsAhead = kGroups && kA == kRows && HWY_NATIVE_FMA;
  int64_t group_step = 4;
  // Row r of an A in place (unused otherwise).
  const float *a0 = a, *a1 = a, *a2 = a, *a3 = a, *a4 = a, *a5 = a, *a6 = a, *a7 = a;
  const float *a8 = a, *a9 = a, *a10 = a, *a11 = a;
  if (kInPlace) {
    const float** rows[kMaxMR] = {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7, &a8, &a9, &a10, &a11};
    for (int r = 1; r < kMR; ++r) *rows[r] = a + (r < m ? r : m - 1) * row_step;
  }
  // C's rows are far apart (ldc) and usually not in L1/L2 when the tile is
  // stored; fetching them early overlaps that miss with the KC loop instead
  // of stalling after it (~15% of a 256-deep tile on Zen3 otherwise). A
  // line of row r is c_line(r, j): j < kVecs - 1 its j-th vector, the last
  // its last float.
  auto c_line = [&](int64_t r, int64_t j) {
    return c + r * ldc + (j == kVecs - 1 ? n - 1 : j * static_cast<int64_t>(N));
  };
  // A tile deeper than kShortTileK whose k loop runs four steps at a time
  // fetches one of its lines per iteration (c_fetched below) rather than
  // all of them here, where its first k steps then ran behind the 24 (Ice
  // Lake server Xeon, one unit, call by call in one process, medians of
  // 25, spread against all here: the wide tile 2048^3 1.010-1.015x, 1024^3
  // 1.010x, 512^3 1.006-1.012x, 256 x 1024 x 1024 1.007x, 256 x 784 x 512
  // 0.999x; the tall tile 2048^3 1.007x, 512^3 1.004x).
  static_assert(kShortTileK / kFetchKSteps >= kMR * kVecs,
                "a deep tile's k loop has an iteration for each of its lines of C");
  const bool spread_c_fetch = HWY_NATIVE_FMA && kc > kShortTileK;
  const int64_t c_lines = static_cast<int64_t>(m) * kVecs;
  int64_t c_fetched = 0;
  if (!spread_c_fetch) {
    for (; c_fetched < c_lines; ++c_fetched) {
      hwy::Prefetch(c_line(c_fetched / kVecs, c_fetched % kVecs));
    }
  }
  // A short tile ends before those lines arrive from memory, and its store
  // waits: it also fetches the next tile's (kMR rows down, the drivers'
  // next tile of the panel), a tile ahead. Zen4, one unit, variants in
  // random order in one process (medians of 60-200 rounds), against the
  // current tile's alone: 256 x 10 x 512 B^T (the Keras MLP's dx of the
  // classifier, C out of cache) 1.11-1.21x, to 0.97x of oneDNN from 0.87x;
  // 1024 x 16 x 1024 1.12x, 512 x 32 x 2048 1.05x, 2048 x 64 x 512 1.02x,
  // 1024 x 128 x 1024 1.007x; at K = 256 and 512 1.00x, so only up to
  // kShortTileK. Two tiles ahead ran as one; four and eight lost the gain.
  if (kc <= kShortTileK) {
    for (int64_t line = 0; line < kMR * kVecs; ++line) {
      hwy::Prefetch(c_line(kMR + line / kVecs, line % kVecs));
    }
  }
  auto c00 = hn::Zero(d), c01 = hn::Zero(d), c10 = hn::Zero(d), c11 = hn::Zero(d);
  auto c20 = hn::Zero(d), c21 = hn::Zero(d), c30 = hn::Zero(d), c31 = hn::Zero(d);
  auto c40 = hn::Zero(d), c41 = hn::Zero(d), c50 = hn::Zero(d), c51 = hn::Zero(d);
  auto c60 = hn::Zero(d), c61 = hn::Zero(d), c70 = hn::Zero(d), c71 = hn::Zero(d);
  auto c80 = hn::Zero(d), c81 = hn::Zero(d), c90 = hn::Zero(d), c91 = hn::Zero(d);
  auto c100 = hn::Zero(d), c101 = hn::Zero(d), c110 = hn::Zero(d), c111 = hn::Zero(d);
  // One k step: a row of B (2 vectors) times each of the MR A values. When
  // packing, B's row is stored to the panel too, and the row kPrefetchRows
  // ahead is fetched: B's rows are far apart, its lines come from L3.
#define VACC_GEMM_STEP(K, COPY)                                                  \
  {                                                                              \
    const auto b0 = hn::LoadU(d, b + (K) * b_step);                              \
    const auto b1 = hn::LoadU(d, b + (K) * b_step + N);                          \
    /* A tall tile's never loaded: b0 and b1 stand in. */                        \
    const auto b2 = kVecs == 4 ? hn::LoadU(d, b + (K) * b_step + 2 * N) : b0;   \
    const auto b3 = kVecs == 4 ? hn::LoadU(d, b + (K) * b_step + 3 * N) : b1;   \
    if (kPackB) {                                                                \
      hn::Store(b0, d, b_packed + (K) * NR);                                     \
      hn::Store(b1, d, b_packed + (K) * NR + N);                                 \
      if (kVecs == 4) {                                                          \
        hn::Store(b2, d, b_packed + (K) * NR + 2 * N);                           \
        hn::Store(b3, d, b_packed + (K) * NR + 3 * N);                           \
        hwy::Prefetch(b + ((K) + kPrefetchRows) * b_step + N);                   \
        hwy::Prefetch(b + ((K) + kPrefetchRows) * b_step + 2 * N);               \
      }                                                                          \
      hwy::Prefetch(b + ((K) + kPrefetchRows) * b_step);                         \
      hwy::Prefetch(b + ((K) + kPrefetchRows) * b_step + NR - 1);                \
    }                                                                            \
    VACC_GEMM_ROW(0, K, COPY, c00, c01, c60, c61)                                \
    VACC_GEMM_ROW(1, K, COPY, c10, c11, c70, c71)                                \
    VACC_GEMM_ROW(2, K, COPY, c20, c21, c80, c81)                                \
    VACC_GEMM_ROW(3, K, COPY, c30, c31, c90, c91)                                \
    VACC_GEMM_ROW(4, K, COPY, c40, c41, c100, c101)                              \
    VACC_GEMM_ROW(5, K, COPY, c50, c51, c110, c111)                              \
    if (kMR > 6) {                                                               \
      VACC_GEMM_ROW(6, K, COPY, c60, c61, c60, c61)                              \
      VACC_GEMM_ROW(7, K, COPY, c70, c71, c70, c71)                              \
    }                                                                            \
    if (kMR > 8) {                                                               \
      VACC_GEMM_ROW(8, K, COPY, c80, c81, c80, c81)                              \
      VACC_GEMM_ROW(9, K, COPY, c90, c91, c90, c91)                              \
      VACC_GEMM_ROW(10, K, COPY, c100, c101, c100, c101)                         \
      VACC_GEMM_ROW(11, K, COPY, c110, c111, c110, c111)                         \
    }                                                                            \
  }
  // Row R's part of a k step: its A value broadcast, times B's row. An A
  // read in place is also copied to the packed panel, value by value
  // (COPY), or by the loop, four values per row at once, groups ahead (a
  // grouped panel of a row-major A), the value then read from that copy.
#define VACC_GEMM_PANEL_AT(R, K)                                                 \
  ((kGroups ? (R) * group_step + (K) : (K) * kMR + (R)))
// V2 and V3: a wide tile's third and fourth vectors (unused in a tall one).
#define VACC_GEMM_ROW(R, K, COPY, V0, V1, V2, V3)                                \
  {                                                                              \
    const float* a_at = kGroupsAhead && !(COPY) ? a_packed + VACC_GEMM_PANEL_AT(R, K) \
                        : kInPlace              ? a##R + (K) * k_step            \
                                                : a + VACC_GEMM_PANEL_AT(R, K); \
    if (kInPlace && (COPY)) CopyBits(a_at, a_packed + VACC_GEMM_PANEL_AT(R, K)); \
    const auto av = hn::Set(d, *a_at);                                           \
    V0 = hn::MulAdd(av, b0, V0);                                                 \
    V1 = hn::MulAdd(av, b1, V1);                                                 \
    if (kVecs == 4) {                                                            \
      V2 = hn::MulAdd(av, b2, V2);                                               \
      V3 = hn::MulAdd(av, b3, V3);                                               \
    }                                                                            \
    if (kMR > 6 || kVecs == 4) KeepInRegister(av);                               \
  }
  // With native FMA, unrolled x4 (constant offsets from a and b): one
  // pointer step and one loop test per 4 k steps. Each step uses only b0, b1
  // and av, so the accumulators stay in registers (checked in GCC 12's
  // output at -O2 and -O3; with spills it ran no faster than one step per
  // iteration). Measured on Zen3, interleaved in one process: hot panels
  // +2-4%, whole GEMMs 256^3-2048^3 +3-19%. Without FMA (SSE4) a
  // multiply-add needs a temporary, there is no spare register, and
  // unrolling made GCC spill: one step per iteration there. The packing
  // variants reload from the stack on AVX2 (16 registers) in GCC 12's
  // code: the B-packing one ~11 values per 4 steps; the A-packing one two
  // partial sums, stored and read back by an FMA a few instructions later,
  // and (perf, Zen3, A in L1) the instructions just after those two FMAs
  // take ~40% of its samples: it runs at ~0.8 of the plain kernel. The
  // spills are not what costs: the same k loop as inline asm with every
  // value in a register (AVX2, Zen3, A in L1, not kept) ran 0.75-0.77 of
  // the plain kernel against 0.80, and ~0.70 either way in a busier phase
  // of the machine. Also tried: the broadcasts pinned to registers
  // (KeepInRegister: 0.76); GCC's pressure-aware scheduling
  // (-fschedule-insns -fsched-pressure: the A-packing tile 81 -> 83
  // GFLOP/s, the plain one 101 -> 93). They run one tile in a panel or in a
  // row of tiles, so that was left as it is.
  // S k steps on. An A in place: what it reads kAheadA steps on is fetched
  // (from L3 or memory: MR short row streams, or one line per k step). Row
  // by row, the same for the next tile's rows (the next kMR rows of A):
  // else each tile starts on MR rows of which nothing is in cache, and
  // waits for them. With it, 512^3 on Zen4 ran 1.01-1.015x (interleaved,
  // medians of 15): as fast as when the tiles skip A's memory altogether.
  // A row's line holds 16 k steps, so each row is fetched once per 16: at
  // each k that is a multiple of 4, a quarter of the tile's rows, rounded
  // up (kFetchTurnRows: 2 of 8, 3 of 12, 2 of 6), in turn (8 rows: at k =
  // 0, 16, ... rows 0 and 1; at 4, 20, ... rows 2 and 3). Fetching every row every
  // four steps asked for each line four times, load slots this tile also
  // needs to copy A. On an Intel Xeon (Emerald Rapids class, one unit,
  // alternating in one process in random order, against an identical
  // control): a chunk's A-packing tiles 1.01-1.02x; whole GEMMs 256^3
  // 1.01x (medians of 3576 calls), 512^3 1.015x, 256 x 784 x 512 1.007x.
  // All eight rows at once every 16 steps gained less (0.99-1.01x).
  // A turn's rows are found by arithmetic, kFetchTurnRows * (k / 4 % 4)
  // on from row 0, not by a switch on k (compares and branches every four
  // steps), which ran slower (Zen3, A in L1, the builds alternating,
  // medians of 9 runs: 0.62 of the plain kernel with the switch, 0.73
  // without, 0.79 with no fetches at all). With 6 rows, the fourth turn
  // fetches rows 6 and 7 (the next tile's first two) and 12 and 13 (two
  // tiles on); rows past the end of A are only fetched, never read. In
  // the 1x1 Conv2D (Zen3, paired rounds against oneDNN in bench_vacc_conv,
  // two builds alternating, medians of 26 rounds of 3 repetitions) t1 ran
  // 1.009-1.031 -> 1.053-1.059, t2 0.961-0.967 -> 0.976-0.984; MatMul
  // 256^3 to 1024^3 within noise either way. Fewer fetches lose there,
  // although a harness with A in L1 or L2 favours them (0.81 of the plain
  // kernel with none, 0.70 with the switch's): in that Conv2D (5 rounds,
  // t1 / t2, with the switch) all of them ran 1.007 / 0.977, the next
  // tile's rows alone 1.002 / 0.957, none 0.946 / 0.897. Judge fetches on
  // a GEMM that streams A, not on one tile.
  // Written out, not a loop: GCC 12 kept a 3-step loop, a branch, in the
  // k loop.
  constexpr int kFetchTurnRows = (kMR + 3) / 4;
  static_assert(kFetchTurnRows == 2 || kFetchTurnRows == 3, "a turn fetches 2 or 3 rows");
#define VACC_GEMM_ADVANCE(S)                                                     \
  if (kA == kRows && k % 4 == 0) {                                               \
    const float* fetch_row = a0 + (kFetchTurnRows * (k / 4 % 4)) * row_step + kAheadA; \
    hwy::Prefetch(fetch_row);                                                    \
    hwy::Prefetch(fetch_row + row_step);                                         \
    if (kFetchTurnRows == 3) hwy::Prefetch(fetch_row + 2 * row_step);            \
    hwy::Prefetch(fetch_row + kMR * row_step);                                   \
    hwy::Prefetch(fetch_row + (kMR + 1) * row_step);                             \
    if (kFetchTurnRows == 3) hwy::Prefetch(fetch_row + (kMR + 2) * row_step);    \
  } else if (kA == kColumns) {                                                   \
    for (int s = 0; s < (S); ++s) {                                              \
      hwy::Prefetch(a0 + (kAheadColumns + s) * k_step);                          \
      hwy::Prefetch((kMR > 8 ? a11 : kMR > 6 ? a7 : a5) + (kAheadColumns + s) * k_step); \
    }                                                                            \
  }                                                                              \
  if (kInPlace) {                                                                \
    a0 += (S) * k_step; a1 += (S) * k_step; a2 += (S) * k_step;                 \
    a3 += (S) * k_step; a4 += (S) * k_step; a5 += (S) * k_step;                 \
    a6 += (S) * k_step; a7 += (S) * k_step;                                     \
    a8 += (S) * k_step; a9 += (S) * k_step; a10 += (S) * k_step;                \
    a11 += (S) * k_step;                                                         \
    a_packed += kGroups && (S) == 1 ? 1 : (S) * kMR;                             \
  } else {                                                                       \
    a += kGroups && (S) == 1 ? 1 : (S) * kMR;                                    \
  }                                                                              \
  b += (S) * b_step;                                                             \
  if (kPackB) b_packed += (S) * NR;
#define VACC_GEMM_COPY_ROW                                                       \
  hn::Store(hn::LoadU(d, copy_src), d, copy_dst);                                \
  hn::Store(hn::LoadU(d, copy_src + N), d, copy_dst + N);                        \
  if (kVecs == 4) {                                                              \
    hn::Store(hn::LoadU(d, copy_src + 2 * N), d, copy_dst + 2 * N);              \
    hn::Store(hn::LoadU(d, copy_src + 3 * N), d, copy_dst + 3 * N);              \
  }                                                                              \
  copy_src += copy_ld;                                                           \
  copy_dst += NR;                                                                \
  --copy_rows;
  int64_t k = 0;
  if (HWY_NATIVE_FMA) {
    static_assert(kFetchKSteps == 4, "fetch_l2 advances once per iteration of four k steps");
    // A row-major A into a grouped panel: each row's four values at once,
    // G groups on from the current one (a full group only; the last,
    // shorter one is copied value by value after the loop).
#define VACC_GEMM_COPY_GROUP(G)                                                  \
  if (k + 4 * (G) + 4 <= kc) {                                                   \
    std::memcpy(a_packed + 0 * 4 + (G) * 4 * kMR, a0 + 4 * (G), 4 * sizeof(float)); \
    std::memcpy(a_packed + 1 * 4 + (G) * 4 * kMR, a1 + 4 * (G), 4 * sizeof(float)); \
    std::memcpy(a_packed + 2 * 4 + (G) * 4 * kMR, a2 + 4 * (G), 4 * sizeof(float)); \
    std::memcpy(a_packed + 3 * 4 + (G) * 4 * kMR, a3 + 4 * (G), 4 * sizeof(float)); \
    std::memcpy(a_packed + 4 * 4 + (G) * 4 * kMR, a4 + 4 * (G), 4 * sizeof(float)); \
    std::memcpy(a_packed + 5 * 4 + (G) * 4 * kMR, a5 + 4 * (G), 4 * sizeof(float)); \
    if (kMR > 6) {                                                               \
      std::memcpy(a_packed + 6 * 4 + (G) * 4 * kMR, a6 + 4 * (G), 4 * sizeof(float)); \
      std::memcpy(a_packed + 7 * 4 + (G) * 4 * kMR, a7 + 4 * (G), 4 * sizeof(float)); \
    }                                                                            \
    if (kMR > 8) {                                                               \
      std::memcpy(a_packed + 8 * 4 + (G) * 4 * kMR, a8 + 4 * (G), 4 * sizeof(float)); \
      std::memcpy(a_packed + 9 * 4 + (G) * 4 * kMR, a9 + 4 * (G), 4 * sizeof(float)); \
      std::memcpy(a_packed + 10 * 4 + (G) * 4 * kMR, a10 + 4 * (G), 4 * sizeof(float)); \
      std::memcpy(a_packed + 11 * 4 + (G) * 4 * kMR, a11 + 4 * (G), 4 * sizeof(float)); \
    }                                                                            \
  }
    if (kGroupsAhead) {
      for (int64_t g = 0; g < kAGroupsAhead; ++g) VACC_GEMM_COPY_GROUP(g)
    }
    for (; k + 4 <= kc; k += 4) {
      if (kGroupsAhead) VACC_GEMM_COPY_GROUP(kAGroupsAhead)
      VACC_GEMM_STEP(0, !kGroupsAhead) VACC_GEMM_STEP(1, !kGroupsAhead)
      VACC_GEMM_STEP(2, !kGroupsAhead) VACC_GEMM_STEP(3, !kGroupsAhead)
      // A row of the next panel, its source fetched kCopyAheadRows rows
      // ahead (it comes from L3 or memory).
      if (kMayCopy && copy_rows > 0 && --copy_wait == 0) {
        copy_wait = copy_every;
        VACC_GEMM_COPY_ROW
        hwy::Prefetch(copy_src + kCopyAheadRows * copy_ld);
        hwy::Prefetch(copy_src + kCopyAheadRows * copy_ld + N);
        if (kVecs == 4) {
          hwy::Prefetch(copy_src + kCopyAheadRows * copy_ld + 2 * N);
          hwy::Prefetch(copy_src + kCopyAheadRows * copy_ld + 3 * N);
        }
        hwy::Prefetch(copy_src + kCopyAheadRows * copy_ld + NR - 1);
      }
      if (c_fetched < c_lines) {
        hwy::Prefetch(c_line(c_fetched / kVecs, c_fetched % kVecs));
        ++c_fetched;
      }
      // Into L2 only (prefetcht2 on x86), unless kFetchToL1: the lines
      // are for later tiles, and would evict this tile's panels from L1.
      if (fetch_l2 != nullptr) {
        if (kFetchToL1) {
          __builtin_prefetch(fetch_l2, 0, 3);
        } else {
          __builtin_prefetch(fetch_l2, 0, 1);
        }
        fetch_l2 += kFetchLineFloats;
      }
      VACC_GEMM_ADVANCE(4)
    }
  }
  // The last kc % 4 steps (all of them without native FMA): a grouped
  // panel's last group, its rows kc - k apart, one step at a time.
  group_step = kc - k;
  for (; k < kc; ++k) {
    VACC_GEMM_STEP(0, true)
    VACC_GEMM_ADVANCE(1)
  }
  // The rows the k loop had no iteration for (all of them without native
  // FMA).
  while (kMayCopy && copy_rows > 0) {
    VACC_GEMM_COPY_ROW
  }
#undef VACC_GEMM_COPY_GROUP
#undef VACC_GEMM_COPY_ROW
#undef VACC_GEMM_ADVANCE
#undef VACC_GEMM_ROW
#undef VACC_GEMM_PANEL_AT
#undef VACC_GEMM_STEP

  // Full tile: straight to C (adding to it, or not). Edge tile: through a
  // buffer, then the m x n corner. Three plain paths rather than one with
  // per-store selects: with the selects GCC 12 spilled two accumulators
  // inside the unrolled k loop.
  const bool full = m == kMR && static_cast<size_t>(n) == NR;
// STORE(r, v0, v1, v2, v3) for each of the tile's MR rows (v2 and v3 as
// VACC_GEMM_ROW's).
#define VACC_GEMM_STORE_ALL(STORE)                                               \
  STORE(0, c00, c01, c60, c61) STORE(1, c10, c11, c70, c71)                      \
  STORE(2, c20, c21, c80, c81) STORE(3, c30, c31, c90, c91)                      \
  STORE(4, c40, c41, c100, c101) STORE(5, c50, c51, c110, c111)                  \
  if (kMR > 6) { STORE(6, c60, c61, c60, c61) STORE(7, c70, c71, c70, c71) }     \
  if (kMR > 8) {                                                                 \
    STORE(8, c80, c81, c80, c81) STORE(9, c90, c91, c90, c91)                    \
    STORE(10, c100, c101, c100, c101) STORE(11, c110, c111, c110, c111)          \
  }
#define VACC_GEMM_ADD_TO_C(R, V0, V1, V2, V3)                                    \
  {                                                                              \
    float* row = c + (R) * ldc;                                                  \
    hn::StoreU(hn::Add(hn::LoadU(d, row), V0), d, row);                          \
    hn::StoreU(hn::Add(hn::LoadU(d, row + N), V1), d, row + N);                  \
    if (kVecs == 4) {                                                            \
      hn::StoreU(hn::Add(hn::LoadU(d, row + 2 * N), V2), d, row + 2 * N);        \
      hn::StoreU(hn::Add(hn::LoadU(d, row + 3 * N), V3), d, row + 3 * N);        \
    }                                                                            \
  }
// The tile to OUT, rows LD apart (VACC_GEMM_STORE_ROW uses out and ld).
#define VACC_GEMM_STORE_TO(OUT, LD)                                              \
  {                                                                              \
    float* out = (OUT);                                                          \
    const int64_t ld = (LD);                                                     \
    VACC_GEMM_STORE_ALL(VACC_GEMM_STORE_ROW)                                     \
  }
#define VACC_GEMM_STORE_ROW(R, V0, V1, V2, V3)                                   \
  hn::StoreU(V0, d, out + (R) * ld);                                             \
  hn::StoreU(V1, d, out + (R) * ld + N);                                         \
  if (kVecs == 4) {                                                              \
    hn::StoreU(V2, d, out + (R) * ld + 2 * N);                                   \
    hn::StoreU(V3, d, out + (R) * ld + 3 * N);                                   \
  }
  if (full) {
    if (accumulate) {
      VACC_GEMM_STORE_ALL(VACC_GEMM_ADD_TO_C)
    } else {
      VACC_GEMM_STORE_TO(c, ldc)
    }
    return;
  }
  HWY_ALIGN float tile[kMaxMR * 2 * HWY_LANES(float)];
  VACC_GEMM_STORE_TO(tile, static_cast<int64_t>(NR))
#undef VACC_GEMM_STORE_ROW
#undef VACC_GEMM_STORE_TO
#undef VACC_GEMM_ADD_TO_C
#undef VACC_GEMM_STORE_ALL
  StoreTileCorner(tile, static_cast<int64_t>(NR), c, ldc, m, n, accumulate);
}

template <class D, int kMR, int kVecs, APanels kLayout, bool kFetchToL1>
void KernelF32(int64_t kc, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
               float* HWY_RESTRICT c, int64_t ldc, int m, int n, bool accumulate,
               const float* fetch_l2, const PanelCopy* copy) {
  const int64_t nr = static_cast<int64_t>(kVecs * hn::Lanes(D()));
  if (copy != nullptr && copy->rows > 0) {
    Kernel<D, kMR, kVecs, false, kPacked, kLayout, kFetchToL1, true>(
        kc, a, 0, nullptr, b, nr, nullptr, c, ldc, m, n, accumulate, fetch_l2, copy);
  } else {
    Kernel<D, kMR, kVecs, false, kPacked, kLayout, kFetchToL1>(kc, a, 0, nullptr, b, nr, nullptr, c,
                                                               ldc, m, n, accumulate, fetch_l2);
  }
}

template <class D, int kMR, int kVecs, APanels kLayout>
void KernelPackingF32(int64_t kc, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                      int64_t ldb, float* HWY_RESTRICT b_packed, float* HWY_RESTRICT c, int64_t ldc,
                      int m, bool accumulate) {
  const int nr = static_cast<int>(kVecs * hn::Lanes(D()));
  Kernel<D, kMR, kVecs, true, kPacked, kLayout>(kc, a, 0, nullptr, b, ldb, b_packed, c, ldc, m, nr,
                                                accumulate);
}

template <class D, int kMR, int kVecs, APanels kLayout, ASource kA>
void KernelPackingAF32(int64_t kc, const float* HWY_RESTRICT a, int64_t a_step,
                       float* HWY_RESTRICT a_packed, const float* HWY_RESTRICT b, int64_t ldb,
                       float* HWY_RESTRICT b_packed, float* HWY_RESTRICT c, int64_t ldc, int m,
                       int n, bool accumulate) {
  const int nr = static_cast<int>(kVecs * hn::Lanes(D()));
  if (b_packed != nullptr) {
    Kernel<D, kMR, kVecs, true, kA, kLayout>(kc, a, a_step, a_packed, b, ldb, b_packed, c, ldc, m,
                                             nr, accumulate);
  } else {
    Kernel<D, kMR, kVecs, false, kA, kLayout>(kc, a, a_step, a_packed, b, nr, nullptr, c, ldc, m, n,
                                              accumulate);
  }
}

template <class D, int kMR, int kVecs, APanels kLayout>
void KernelPackingAnyAF32(int64_t kc, const float* HWY_RESTRICT a, int64_t a_row_step,
                          int64_t a_k_step, float* HWY_RESTRICT a_packed,
                          const float* HWY_RESTRICT b, int64_t ldb, float* HWY_RESTRICT b_packed,
                          float* HWY_RESTRICT c, int64_t ldc, int m, int n, bool accumulate) {
  if (a_k_step == 1) {
    KernelPackingAF32<D, kMR, kVecs, kLayout, kRows>(kc, a, a_row_step, a_packed, b, ldb, b_packed,
                                                     c, ldc, m, n, accumulate);
  } else {
    KernelPackingAF32<D, kMR, kVecs, kLayout, kColumns>(kc, a, a_k_step, a_packed, b, ldb, b_packed,
                                                        c, ldc, m, n, accumulate);
  }
}

template <class D, int kMR, int kVecs, APanels kLayout>
MicroKernel MakeMicroKernel(bool fetch_to_l1) {
  MicroKernel k;
  k.mr = kMR;
  k.nr = static_cast<int>(kVecs * hn::Lanes(D()));
  k.run = fetch_to_l1 ? &KernelF32<D, kMR, kVecs, kLayout, true>
                      : &KernelF32<D, kMR, kVecs, kLayout, false>;
  k.run_packing = &KernelPackingF32<D, kMR, kVecs, kLayout>;
  k.run_packing_a = &KernelPackingAnyAF32<D, kMR, kVecs, kLayout>;
  k.a_panels = kGroupsPanels<kLayout> ? APanels::kGroups : APanels::kInterleaved;
  k.shape = kVecs == 4 ? TileShape::kWide : TileShape::kTall;
  k.target = hwy::TargetName(HWY_TARGET);
  return k;
}

template <class D, int kMR, int kVecs>
MicroKernel MakeMicroKernelFor(APanels layout, bool fetch_to_l1) {
  return layout == APanels::kGroups
             ? MakeMicroKernel<D, kMR, kVecs, APanels::kGroups>(fetch_to_l1)
             : MakeMicroKernel<D, kMR, kVecs, APanels::kInterleaved>(fetch_to_l1);
}

MicroKernel GetMicroKernel(bool half_width, APanels layout, bool fetch_to_l1, TileShape shape) {
  if (half_width) return MakeMicroKernelFor<HalfTag, kPackedTileRows, 2>(layout, fetch_to_l1);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (shape == TileShape::kWide) {
    return MakeMicroKernelFor<FullTag, kWideTileRows, 4>(layout, fetch_to_l1);
  }
#else
  (void)shape;  // no registers for a wide tile
#endif
  return MakeMicroKernelFor<FullTag, kPackedTileRows, 2>(layout, fetch_to_l1);
}

}  // namespace HWY_NAMESPACE
}  // namespace gemm
}  // namespace vacc
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vacc {
namespace gemm {

HWY_EXPORT(GetMicroKernel);

// Never inlined (see the header): at -O3 GCC 12 otherwise inlined it into
// the kernels, and spilled accumulators in their k loops again.
HWY_NOINLINE void StoreTileCorner(const float* tile, int64_t ld, float* c, int64_t ldc, int m,
                                  int n, bool accumulate) {
  for (int r = 0; r < m; ++r) {
    for (int j = 0; j < n; ++j) {
      const float v = tile[r * ld + j];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
  }
}

namespace {
// Whether the packed kernel's fetch walk (MicroKernel::run's fetch_l2)
// brings the next panel into L1 too (prefetcht0), not into L2 only. On
// AMD Zen4 into L1 ran faster (one unit, variants in random order in one
// process, medians of 150 rounds; the Keras MLP step's sequence of
// products, operands out of cache): 512 x 256 x 512 A^T 1.01x, 256 x 512
// x 512 B^T 1.02x, 784 x 256 x 512 A^T 1.01x; hot, 1024^3 1.01x (two
// runs), 2048^3 1.01x, 256 x 1024 x 1024 1.00x. The L2-only walk is what
// gained on an Intel Xeon (Emerald Rapids class; vacc_gemm.cc,
// NextPanelSlice), where into L1 was not measured.
bool FetchWalkToL1() { return HostCpuIsAmd(); }

// Whether the packed driver's wide tile (TileShape::kWide) is the faster on
// this host: on an Intel Xeon of the Ice Lake server class (models 106 and
// 108), where a k step's loads cost the most (the bare tiles above). There
// the packed driver ran, wide against tall, call by call in one process
// (operands hot, medians of 25 rounds), one unit: 256^3 1.11x, 512^3
// 1.04x, 1024^3 1.08x, 2048^3 1.04x, 256 x 1024 x 1024 1.08x, 256 x 784 x
// 512 1.05x, 1024 x 256 x 512 1.07x; two units 1.04-1.26x (README). On
// an Emerald Rapids Xeon the 6 x 64 tile in a simple driver gained nothing
// (0.97-1.00x); AMD Zen4 was not measured.
bool WideTilePays() {
  const int model = HostIntelModel();
  return model == 106 || model == 108;
}

// SelectPackedTileShape's choice: -1 for the host's (WideTilePays), else a
// TileShape.
std::atomic<int> g_packed_tile{-1};
}  // namespace

TileShape PackedDriverTileShape() {
  const int chosen = g_packed_tile.load(std::memory_order_relaxed);
  if (chosen >= 0) return static_cast<TileShape>(chosen);
  static const TileShape host = WideTilePays() ? TileShape::kWide : TileShape::kTall;
  return host;
}

MicroKernel PackedDriverMicroKernel(APanels a_panels) {
  return CurrentMicroKernel(/*half_width=*/false, a_panels, PackedDriverTileShape());
}

bool SelectPackedTileShape(const std::string& choice, std::string* error) {
  if (choice.empty() || choice == "auto") {
    g_packed_tile.store(-1, std::memory_order_relaxed);
  } else if (choice == "tall" || choice == "wide") {
    const TileShape shape = choice == "wide" ? TileShape::kWide : TileShape::kTall;
    g_packed_tile.store(static_cast<int>(shape), std::memory_order_relaxed);
  } else {
    *error = "VACC_GEMM_TILE='" + choice + "' is not a tile shape: choose auto, tall or wide";
    return false;
  }
  return true;
}

MicroKernel CurrentMicroKernel(bool half_width, APanels a_panels, TileShape shape) {
  return HWY_DYNAMIC_DISPATCH(GetMicroKernel)(half_width, a_panels, FetchWalkToL1(), shape);
}

namespace {
bool HalfWidthFor(int64_t n) {
  const int full_nr = CurrentMicroKernel().nr;
  return full_nr >= 4 && n <= full_nr / 2;
}
}  // namespace

MicroKernel MicroKernelFor(int64_t n) { return CurrentMicroKernel(HalfWidthFor(n)); }
RowsKernel RowsKernelFor(int64_t n) { return CurrentRowsKernel(HalfWidthFor(n)); }

}  // namespace gemm
}  // namespace vacc
#endif  // HWY_ONCE
