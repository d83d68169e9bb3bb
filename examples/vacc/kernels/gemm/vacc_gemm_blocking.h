// SPDX-License-Identifier: Apache-2.0
//
// Cache blocking of the GEMM (BLIS's names), chosen for AMD Zen3 per core:
// 32 KiB L1d, 512 KiB L2, 32 MiB L3 shared by the cores. Checked again on
// Zen4 (1 MiB L2, AVX-512: NR = 32, so a KC x NR panel of B is 48 KiB and
// no longer fits L1): KC of 192, 256 and 512 ran as fast as 384 (1024^3,
// 2048^3, within 2%), and kRowsKC of 384 or 576 as fast as 256 on the
// convolutions (within 1%), so the Zen3 values stayed, until deeper K
// blocks (KC below) measured faster.
//   KC  most depth of a packed block (K is cut into equal blocks of at most
//       KC). The micro-kernel keeps one KC x NR panel of B in L1 while it
//       sweeps the A panels: 384 x 16 floats = 24 KiB of the 32 KiB L1,
//       with the packed A panel streaming past from L2. Deeper blocks mean
//       fewer passes over C (each reads and writes all of C): measured on
//       Zen3 against 256, 2-6% faster at 512^3 to 1024^3 and 256 x 1024 x
//       1024 (OpenBLAS picks 384 for this core too). On Zen4 (1 MiB L2)
//       deeper still: 512 rather than 384 takes K = 512 in one block (not
//       2 x 256), 512^3 t1 1.02x; 1024 rather than 512 halves the passes
//       over C at K = 1024 and 2048 (interleaved, medians of 7): 1024^3 t1
//       1.01-1.02x, t2 1.02-1.03x, 256 x 1024 x 1024 1.02-1.03x (t1) and
//       1.05x (t2), 2048^3 1.01-1.02x, the Keras MLP step's GEMMs 1.01x
//       (t1) and 1.04-1.05x (t2); with AVX2 on Zen4 1.01-1.04x. The B panel
//       (1024 x 32 floats, 128 KiB) then streams from L2, not L1, and the
//       packed A block (MC x KC, 576 KiB) takes over half of L2: both
//       measured faster than the extra passes over C. On Zen3 (512 KiB
//       L2) blocks of 512 and 384 against 1024 (taking turns with
//       dnnl_sgemm in one process, medians of 30, ratios to it): 256 x
//       1024 x 1024 t1 1.163 and 1.144 against 1.149, t2 1.105 and 1.096
//       against 1.085; 1024^3 t1 1.051 and 1.048 against 1.072, t2 1.152
//       and 1.116 against 1.122: within the noise, so one KC serves both.
//   kRowsKC  the depth of the paths that read A in place with the row
//       kernel and pack B (vacc_gemm_narrow_b.cc, vacc_gemm_conv_direct.cc):
//       their A rows stream from wherever A is, so the B panel keeps half
//       of L1 (256 x 16 floats = 16 KiB); 384 was no faster there. The
//       short-A path takes KC instead, whether it reads B in place (its B
//       panel is in L2 anyway: 32 x 784 x 128 in blocks of 392 rather than
//       196 ran 1.01-1.03x on Zen4, in one block of 784 1.01-1.04x more) or
//       packs it (Zen3, paired with oneDNN, medians of 6: one block of 784
//       0.96x of oneDNN at t1 and t2, blocks of 392 0.95x / 0.93x, of 196
//       0.93x / 0.87x).
//   MC  rows of a packed A block (a row chunk of the packed driver) when
//       the units share the packed B block, and of the narrow-B path's
//       chunks: the block stays in L2 while every B panel of the NC block
//       passes: 144 x 384 floats = 216 KiB, under half of Zen3's L2, so B
//       panels and C lines do not evict it (144 x 1024 floats = 576 KiB
//       since KC = 1024: more than Zen3's L2 holds beside B, over half of
//       Zen4's; 288 rows measured the same as 144 on Zen4 at KC = 512).
//       The narrow-B path's chunks of 64 rows ran the 1x1 Conv2D 0.99x
//       (Intel Xeon, paired with oneDNN, medians of 6).
//   kPackedARows  the most rows of the packed driver's A block when its
//       unit packs B for itself: 64 at every depth (256 KiB at KC = 1024).
//       There the packed B block stays in L2 across the chunks (up to
//       half the host's L2, UnitL2PackedBFloats in vacc_gemm_unit_l2.h: 1
//       MiB on a 2 MiB L2), beside the A block and the chunk's
//       rows of C, while A's own lines stream in to be packed; a smaller
//       A block leaves B more of L2. It replaced a budget of 72 x 1024
//       floats (kPackedAFloats: 72 rows at KC = 1024, MC's 144 at K <=
//       512, 94 at K = 784), which had measured on Zen4 (one unit, paired
//       with oneDNN, medians of 4 rounds, four experiments) 2048^3
//       1.02-1.03x against 144 rows, 1024^3 0.99-1.02x, with 48 and 96
//       rows gaining less at 2048^3. On an Intel Xeon (2 MiB L2), one
//       unit, operands rotating through copies in 64 MiB, the two rules
//       alternating call by call, medians of 40 calls or more, 64 rows
//       against that budget (three runs; shapes in two of them give both
//       figures): 256 x 784 x 512 1.01x and 1.08x, 512^3 1.02x and 1.04x,
//       256 x 512 x 512 1.03x twice (B^T 1.02x), 784 x 256 x 512 A^T
//       1.06x, 512 x 256 x 512 A^T 1.04x, 4096 x 256 x 512 1.07x, 256^3
//       1.02x; 1024^3, 2048^3, 256 x 1024 x 1024, 1024 x 1024 x 256 and
//       300 x 500 x 700 0.99-1.01x (32 and 96 rows measured about as 64).
//       At two units (mostly column slices, each unit's B block half as
//       large) 0.95-1.04x over 23 readings, within this VM's noise.
//       Paired with oneDNN in bench_vacc_matmul (builds alternating,
//       medians of 10), t1 / t2: 512^3 0.968 -> 0.978 / 0.895 -> 0.930,
//       the Keras MLP step 0.991 -> 1.007 / 0.994 -> 1.011, 256 x 784 x
//       512 0.933 -> 0.932 / 0.937 -> 0.952. Not measured on AMD. At two
//       units the chunks whose units share B keep MC rows (each streams
//       the shared block from L3): halved, 2048^3 measured 0.97-0.98x on
//       Zen4, within that VM's noise but never above.
//       Where kPackedARows holds fewer tiles than one panel's fetch walk
//       takes (FetchWalkTiles(NR), vacc_gemm_microkernel.h: 8 at NR 32),
//       the block has that many instead (AVX-512's 12-row tiles: 96 rows,
//       not 60; PackedDriverChunks): a chunk's tiles against one panel
//       fetch the next panel into L2 between them (NextPanelSlice,
//       vacc_gemm.cc), and with 5 tiles the last 3/8 of each panel came
//       from L3 as its tiles ran. Ice Lake Xeon, 12 rows, one unit, paired
//       with oneDNN call by call (medians of 30): 1024^3 0.965 and 0.977
//       against 0.949 with 60 rows; 144 rows 0.938. Not measured on AMD;
//       AVX2's 6-row tiles (4 at NR 16) keep kPackedARows.
//   NC  columns of a B block: at most 4080, and fewer when K is long, as
//       the block is kept packed for all of K (a copy per unit, or one
//       shared: vacc_gemm.cc): kUnitPackedBFloats, 4 Mi floats = 16 MiB, in
//       L3 (K = 2048: 2048 columns; K = 4096: 1024). Every block packs A
//       again (each chunk's A block, by its first panel's tiles), so fewer
//       blocks pack A fewer times. On Zen4 a budget of 0.5 Mi floats
//       measured as 1 Mi at 1024^3 and 2048^3. On an Intel Xeon (paired
//       with oneDNN, builds alternating, medians of 13), 2048^3 against 1
//       Mi floats (4 blocks of 512 columns, 0.993 at t1 and 0.981 at t2):
//       2 Mi 1.014 and 1.008, 4 Mi 1.036 and 1.007 (at t2 each unit's
//       column slice is one block from 2 Mi on); 1024^3 and 256 x 1024 x
//       1024, one block either way, within noise. Not measured on AMD.
//   kSharedPackedBFloats  the smallest packed B block (floats) the packed
//       driver's units share instead of packing a copy each (vacc_gemm.cc).
//       Measured on Zen4 at 2 units, shared against a copy each
//       (interleaved, medians of 5-6): 4 MiB blocks 1.04-1.06x
//       (256 x 1024 x 1024, 1024^3, 2048^3), 1 MiB 1.00x (512^3), 1.6 MiB
//       0.98x (256 x 784 x 512), 256 KiB 0.95x (256^3); so from 2 MiB.
//       In the VM's slow phases for cross-core traffic a shared block runs
//       slower: 256 x 1024 x 1024 at 0.82x a copy each (153 against 187
//       GFLOP/s, oneDNN 150 in the same stretch). A device whose units
//       share a cache does not have such phases; on a host that does, a
//       threshold above any block size turns sharing off.
//   kChunksPerParticipant  the packed driver's row chunks with several
//       units: at least 8 per unit, a whole number per unit (equal shares),
//       so a unit that finishes first takes a short piece of another's.
//       The units end at most a chunk apart: at 256^3 on 2 units a profile
//       showed ~5% of the time waiting with 4 per unit (chunks of ~32 rows,
//       ~35 us each). 8 against 4 on Zen4 (interleaved, medians of 5-7):
//       256^3 1.03-1.05x, the Keras MLP step's GEMMs 1.01-1.02x, 512^3,
//       1024^3 and 256 x 1024 x 1024 within 2%; 12 measured like 8.
//       Where each unit copies its own B panels (NextPanelCopy,
//       vacc_gemm.cc), no chunk is shorter than the tiles a panel needs
//       to copy the next one (PackedDriverChunks, CopyingChunkRows):
//       chunks of 16 rows (256^3 at 8 per unit) copy nothing, and each
//       unit packs every panel with a B-packing tile. Intel Xeon (Emerald
//       Rapids class), 2 units, operands hot, alternating call by call
//       (medians of 200+ pairs), against 8 per unit without that floor:
//       chunks of 64 rows (2 per unit) 256^3 1.030x, 320^3 1.025x, 384^3
//       1.012x, 512 x 384 x 256 1.013x, other row-chunked shapes
//       1.000-1.004x; 32 rows (4 per unit, too short to copy) 256^3
//       1.011x. The floor (40 rows at K = 256) against 2 per unit: 256^3
//       0.999x, 320^3 1.003x, 384^3 0.998x, 512 x 384 x 256 0.999x, 768 x
//       768 x 256 1.009x, 1024 x 512 x 512 1.006x; 32-row chunks against
//       2 per unit 0.987x. Paired with oneDNN (bench_vacc_matmul, 8
//       rounds), 2 per unit against 8: 256^3 t2 0.925 -> 0.951, Keras MLP
//       step t2 0.997 -> 1.010. AMD not measured with the floor.
//   kSharedBChunkRows  the shortest row chunk of the packed driver when its
//       units share the packed B block (PackedDriverChunks,
//       vacc_gemm_split.h). That block is in L3, and each chunk streams all
//       of it past its tiles, so short chunks re-read B from L3 many times:
//       256 x 1024 x 1024 on two units ran in 16 chunks of 16 rows. On an
//       Intel Xeon (AVX-512, MR 8; alternating in one process, medians of
//       9-11, two units) chunks of at least 96 rows against 8: 256 x 1024 x
//       1024 1.31x, 256 x 4096 x 1024 1.34x, 384 x 2048 x 1024 ~1.17x, 512 x
//       1024 x 1024 1.07-1.15x, 640 x 1024 x 1024 1.12x, 768^3 1.19x (all
//       with IQRs of ~0.1-0.25: this VM is noisy); 64 rows gained less,
//       128 about as much. 1024^3 and 2048^3 already have chunks of 64-128
//       rows. Not measured on Zen4.
//   kOwnStreamedBChunkRows  the shortest row chunk of the packed driver
//       when each unit packs a B block of its own of more than half the
//       host's L2 (UnitL2PackedBFloats, vacc_gemm_unit_l2.h: 1 MiB of the
//       Emerald Rapids Xeon's 2 MiB, where this was measured; a fixed 1
//       MiB until the host's L2 was asked): such a block does not stay
//       in a unit's L2 beside the A block and C, so each chunk streams it
//       from L3 as it does a shared block (kSharedBChunkRows), and 16-row
//       chunks (8 per unit of M = 256 on two units) ask more of L3 than a
//       core gets. On an Intel Xeon (Emerald Rapids class, 2 MiB L2; two
//       units, alternating in one process in random order, medians of
//       70-400 calls, M x K x N), chunks of at least 64 rows against 8:
//       256 x 784 x 512 (the Keras MLP's first layer) 1.06x, 1.105x and
//       0.99x in three runs, 256 x 900 x 512 1.03x, 256 x 1024 x 384
//       1.07x, 256 x 1024 x 448 1.13x, 512 x 784 x 512 1.04x; within noise
//       at 256 x 512 x 640 (1.02x), 512 x 1024 x 384 and 1024 x 784 x 512
//       (1.00x), 256 x 600 x 512 (0.98x) and 384 x 768 x 512 (0.97x). 32
//       rows gained less (1.02x), 128 too (1.08x, 1.01x). Not measured on
//       AMD, whose L2 (Zen3 512 KiB, Zen4 1 MiB) holds less: its share
//       (256 and 512 KiB) counts more blocks as streamed than the fixed 1
//       MiB did (512^3 on two units: on Zen3 chunks of ~85 rows, not ~32;
//       on Zen4 two column blocks, kMostOwnBL2Blocks), and nobody has
//       measured that there yet.
//   kMostOwnBL2Blocks  with several units, a B that each unit packs for
//       itself and that is larger than its L2 share (UnitL2PackedBFloats)
//       is cut into the fewest column blocks that fit, where that takes at
//       most this many (PackedDriverBlockColumns, vacc_gemm_split.h). Each
//       block packs A again, but each unit's short row chunks
//       (kChunksPerParticipant) then read B from L2, not L3. On an Ice Lake
//       server Xeon (1.25 MiB L2: 640 KiB share), two units, two blocks
//       against one: paired with oneDNN in bench_vacc_matmul, the two
//       variants in the same rounds (medians of 15 rounds), 512^3 1.13x
//       and 1.12x (base/variant 0.883 and 0.895; the same cut at any size,
//       0.825-0.943 in five runs), the Keras MLP step 1.04x and 1.07x; call
//       by call in one process (medians of 31) 512^3 1.015-1.04x, 256 x
//       512 x 512 1.017x, 384 x 512 x 512 1.020x, 1024 x 512 x 512
//       1.018x, 512 x 1024 x 256 1.031x. One unit is left alone: 512^3
//       1.00x, the Keras step 0.99x. Blocks of 512 KiB whatever the size
//       (8 at 1024^3) lost: 1024^3 0.88-0.91x, 256 x 1024 x 1024
//       0.94-0.97x. Longer chunks over the one block instead (64 rows,
//       kOwnStreamedBChunkRows) gained less at 512^3 (1.02-1.10x), as
//       did column slices (1.00-1.12x) and a B shared from 1 MiB with its
//       panels copied by the tiles (1.02x). Not measured on AMD or
//       Emerald Rapids, whose 2 MiB L2 holds a 512^3 B (the rule then
//       leaves it alone).
//   kColumnSliceMinPanels  the fewest B panels per unit for which the
//       packed driver gives each unit a column slice of B (all of M
//       against its own columns) instead of row chunks against all of B,
//       where B is at least as wide as A is tall (PackedDriverColumnSlices,
//       vacc_gemm_split.h). With row chunks each unit packs all of a small
//       B, or the units share a large one across cores; a slice's unit
//       packs only its own columns, and all of A, the smaller operand
//       there. On an Intel Xeon at two units (slices against chunks, call
//       by call in one process, operands rotating through up to 16
//       copies, 64 MiB in all, medians of 20-30 calls, M x K x N): 256 x
//       1024 x 1024 1.13-1.17x, 300 x 500 x 700 1.14x, 512 x 1024 x 2048
//       1.08x, 256 x 784 x 512 1.07x, 256 x 512 x 512 1.06x, 256 x 512 x
//       784 1.05x, 2048^3 1.04-1.06x, 1024^3 1.02-1.03x, 512^3
//       1.00-1.02x; with 4 panels a unit 256^3 0.94-0.98x, hence 8. Where
//       A is the taller (M > N) slices lost or tied: 1024 x 256 x 256
//       0.89x, 1024 x 1024 x 256 0.95x, 512 x 256 x 512 0.96x, 784 x 256 x
//       512 0.97x, 4096 x 256 x 512 0.99x, 2048 x 512 x 256 1.01x. Not
//       measured on AMD.
//   kWideTileSliceAspect  with the wide tile (TileShape::kWide, on Ice
//       Lake server Xeons), column slices only where B is at least this
//       many times as wide as A is tall: each slice's unit packs all of A,
//       so at M = N the two units pack A twice, 1.5x the copying of row
//       chunks with a shared B. There, two units, row chunks against
//       slices: call by call in one process (medians of 21-31) 2048^3
//       1.009-1.166x (four runs), 1024^3 1.007-1.028x (four), 384 x 1024 x
//       1536 1.023x, 512 x 512 x 2048 1.000x, 256 x 1024 x 1024
//       0.973-1.049x (three). Paired with oneDNN in bench_vacc_matmul
//       (runs alternating, slices -> rows, medians of seven runs, ranges in
//       brackets; t2 there spreads widely): 2048^3 0.952 [0.898-1.055] ->
//       1.003 [0.836-1.138], 1024^3 1.044 [0.948-1.262] -> 1.068
//       [1.013-1.168]; 256 x 1024 x 1024 (four runs) 1.01 -> 0.96, which
//       keeps slices.
//   kNarrowBCols  the most columns of B the narrow-B path takes
//       (vacc_gemm_narrow_b.h). Measured on Zen3 against the packed driver
//       (interleaved, medians): at 2 units 1.03x on 6272 x 256 x 128 (the 1x1
//       Conv2D), 1.16x at 1024 x 1024 x 128, 1.7x at 2048 x 512 x 64 and at
//       256 x 512 x 10; at N = 256 a wash (0.97-1.08x), at 512 slower (0.87-0.97x).
//       Those figures predate the packed driver's later changes; the rule
//       now holds only where the row kernels have panel pairs (AVX-512).
//   kNarrowBColsWithoutPairs  the same without them (AVX2 and below).
//       Measured on Zen3 (AVX2) against the packed driver, taking turns in
//       one process, medians of 30: the packed driver ran 6272 x 256 x 128
//       (the 1x1 Conv2D) 1.01-1.03x at one unit and 1.03-1.06x at two,
//       6272 x 512 x 128 1.07-1.12x, 1024 x 1024 x 128 1.32x and 1568 x
//       1024 x 128 1.25-1.3x; at N = 96 a wash (0.97-1.05x); narrow B stayed
//       ahead at N = 80 (0.95x), N = 64 (0.93-0.97x, 2048 x 512 x 64 0.94x
//       at one unit) and below (N = 32 0.81x, N = 10 0.69-0.73x). With A
//       read in place, each 6-row tile broadcasts from six rows coming
//       from L2, once per 16-column panel; packed, A's rows are one stream.
//   kSmallMRows  the most rows of A the short-A path takes
//       (vacc_gemm_small_m.h). Measured on Zen3: it is faster up to 128 rows
//       (1.3x at 32 x 784 x 128, 1.7x at 200 x 300 x 10) and even at 256.
//   kInPlaceMaxRows, kInPlaceAFloats  the longest A (rows, and values)
//       the short-A path also takes when it can read both operands in
//       place (InPlaceApplies, vacc_gemm_small_m.h): A then stays in a
//       unit's L2 (Zen4: 1 MiB) while each B panel passes. Measured on Zen4
//       against the packed driver (interleaved in one process, medians of
//       5): 256^3 1.04x (t1) / 1.05-1.07x (t2), 512^3 1.00-1.02x / 1.02x,
//       256 x 784 x 512 1.03-1.04x / 1.07x, 640 x 400 x 512 1.02x / 1.04x,
//       768 x 300 x 512 1.01x / 1.02x; past the limits 1024 x 200 x 512
//       1.00x / 0.99x, 1024 x 256 x 512 1.00x / 0.92x, 640^3 (1.6 MiB)
//       1.01x / 1.02x, 768^3 (2.25 MiB) 0.98x / 1.01x, 1000^3 0.99x / 1.00x,
//       4096 x 256 x 256 0.91x / 0.96x. On an Intel Xeon the in-place
//       path lost to the packed driver at these shapes (0.84-0.96x), so
//       Gemm uses it for a longer A only where reading in place pays
//       (LongerAInPlacePays, vacc_gemm_small_m.h: AMD Zen4's AVX-512
//       kernels; on Zen3 with AVX2 it ran 256^3 and 512^3 at 0.72-0.77x of
//       oneDNN/OpenBLAS against 0.94-1.07x packed).
// TODO(vendor): a device sizes these for its own memories (scratchpad, SRAM).
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_

#include <cstdint>

namespace vacc {
namespace gemm {

constexpr int64_t kKC = 1024;
constexpr int64_t kRowsKC = 256;
constexpr int64_t kMC = 144;
constexpr int64_t kPackedARows = 64;
constexpr int64_t kNC = 4080;
constexpr int64_t kUnitPackedBFloats = int64_t{1} << 22;
constexpr int64_t kChunksPerParticipant = 8;
constexpr int64_t kSharedPackedBFloats = int64_t{1} << 19;
constexpr int64_t kSharedBChunkRows = 96;
constexpr int64_t kOwnStreamedBChunkRows = 64;
constexpr int64_t kMostOwnBL2Blocks = 2;
constexpr int64_t kSmallMRows = 128;
constexpr int64_t kInPlaceMaxRows = 768;
constexpr int64_t kInPlaceAFloats = int64_t{1} << 18;
constexpr int64_t kColumnSliceMinPanels = 8;
constexpr int64_t kWideTileSliceAspect = 2;
constexpr int64_t kNarrowBCols = 128;
constexpr int64_t kNarrowBColsWithoutPairs = 96;
// Row chunks per participating unit in the narrow-B path: enough that the
// last one taken is short.
constexpr int64_t kNarrowBChunksPerParticipant = 16;

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_BLOCKING_H_
