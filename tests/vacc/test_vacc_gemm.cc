// SPDX-License-Identifier: Apache-2.0
//
// The vacc GEMM (examples/vacc/kernels/gemm) against a naive triple loop in
// double precision, and against ReferenceGemm (the VACC_SIMD=scalar body):
// shapes at every blocking edge (0, 1, odd, MR/NR/KC/MC edges, large), every
// transpose combination, float32/bfloat16/half, on 1, 2 and 3 compute units,
// once per Highway target this machine has; the edge shapes also through
// each of the drivers Gemm picks between (packed, short-A, narrow-B).
//
// Tolerances, relative to sum_k |a_ik * b_kj| (the error bound of a float32
// dot product grows with K; the operands are exact in every dtype, so only
// accumulation order and the final rounding differ):
//   float32   1e-5 * max(1, K/64) (accumulation order: blocked vs k order)
//   bfloat16  1e-2 (8 bits of mantissa in the stored result: 2^-8 = 3.9e-3)
//   half      2e-3 (11 bits: 2^-11 = 4.9e-4, plus accumulation)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_blocking.h"
#include "kernels/gemm/vacc_gemm_interleave.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_narrow_b.h"
#include "kernels/gemm/vacc_gemm_pack.h"
#include "kernels/gemm/vacc_gemm_panel_claims.h"
#include "kernels/gemm/vacc_gemm_small_m.h"
#include "kernels/gemm/vacc_gemm_split.h"
#include "kernels/gemm/vacc_gemm_unit_l2.h"
#include "kernels/vacc_half.h"
#include "kernels/vacc_simd.h"
#include "vacc_compute_units.h"
#include "vacc_thread_state.h"

namespace vacc {
namespace {

using gemm::Matrix;

struct Shape3 {
  int64_t m, k, n;
};

// A packed B block's share of a unit's L2 in the rule tests: 1 Mi floats,
// half of a 2 MiB L2 (the driver asks the host: UnitL2PackedBFloats).
constexpr int64_t kL2Floats = int64_t{1} << 18;

// Operands stored in `dtype`, with values exactly representable in it
// (small integers over 8), so only the accumulation differs between bodies.
struct Operand {
  TF_DataType dtype;
  std::vector<uint16_t> half_bits;
  std::vector<float> f32;
  const void* data() const {
    return dtype == TF_FLOAT ? static_cast<const void*>(f32.data()) : half_bits.data();
  }
};

Operand MakeOperand(TF_DataType dtype, int64_t count, std::mt19937* rng) {
  std::uniform_int_distribution<int> dist(-8, 8);
  Operand o;
  o.dtype = dtype;
  for (int64_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(dist(*rng)) / 8.0f;
    if (dtype == TF_FLOAT) o.f32.push_back(v);
    else if (dtype == TF_BFLOAT16) o.half_bits.push_back(FromFloat<BFloat16>(v).bits);
    else o.half_bits.push_back(FromFloat<Half>(v).bits);
  }
  return o;
}

double Tolerance(TF_DataType dtype, int64_t k) {
  switch (dtype) {
    case TF_BFLOAT16: return 1e-2;
    case TF_HALF: return 2e-3;
    default: return 1e-5 * std::max<double>(1.0, static_cast<double>(k) / 64.0);
  }
}

// Rounds float32 results the way a bf16/f16 output would store them.
float AsStored(float v, TF_DataType dtype) {
  if (dtype == TF_BFLOAT16) return ToFloat(FromFloat<BFloat16>(v));
  if (dtype == TF_HALF) return ToFloat(FromFloat<Half>(v));
  return v;
}

// Gemm, or one of the drivers it picks between (each must be right for any
// shape, not only those Gemm gives it).
struct Driver {
  const char* name;
  void (*run)(const gemm::PackableA& a, const Matrix& b, float* c, int64_t ldc, bool accumulate,
              ComputeUnits* units);
};
const Driver kGemm = {"Gemm", &gemm::Gemm};
// The short-A path both ways, whichever this host would choose
// (BInPlacePays).
template <gemm::InPlaceReads kReads>
void SmallMGemmWith(const gemm::PackableA& a, const Matrix& b, float* c, int64_t ldc,
                    bool accumulate, ComputeUnits* units) {
  gemm::SmallMGemm(a, b, c, ldc, accumulate, units, kReads);
}
const Driver kSmallMReadingInPlace = {"SmallMGemm reading in place",
                                      &SmallMGemmWith<gemm::InPlaceReads::kAlways>};
const Driver kSmallMPacking = {"SmallMGemm packing B", &SmallMGemmWith<gemm::InPlaceReads::kNever>};
// The packed driver with each tile shape, whichever this host would choose
// (PackedDriverTileShape; where the target has no wide tile, both run the
// tall one).
template <gemm::TileShape kShape>
void PackedGemmWith(const gemm::PackableA& a, const Matrix& b, float* c, int64_t ldc,
                    bool accumulate, ComputeUnits* units) {
  std::string error;
  ASSERT_TRUE(
      gemm::SelectPackedTileShape(kShape == gemm::TileShape::kWide ? "wide" : "tall", &error))
      << error;
  gemm::PackedGemm(a, b, c, ldc, accumulate, units);
  ASSERT_TRUE(gemm::SelectPackedTileShape("auto", &error)) << error;
}
const Driver kPackedDrivers[] = {{"PackedGemm tall tile", &PackedGemmWith<gemm::TileShape::kTall>},
                                 {"PackedGemm wide tile", &PackedGemmWith<gemm::TileShape::kWide>}};
const gemm::TileShape kTileShapes[] = {gemm::TileShape::kTall, gemm::TileShape::kWide};
const Driver& PackedDriver(gemm::TileShape shape) {
  return kPackedDrivers[shape == gemm::TileShape::kWide ? 1 : 0];
}
// The packed driver's kernel with that shape (its A panels interleaved).
gemm::MicroKernel PackedKernel(gemm::TileShape shape) {
  return gemm::CurrentMicroKernel(false, gemm::APanels::kInterleaved, shape);
}
const Driver kNarrowB = {"NarrowBGemm", &gemm::NarrowBGemm};
const Driver kDrivers[] = {
    kGemm, kPackedDrivers[0], kPackedDrivers[1], kSmallMReadingInPlace, kSmallMPacking, kNarrowB};

// ldb: B's rows that far apart (at least N; B not transposed), or 0 for N.
void CheckGemm(const Shape3& s, bool ta, bool tb, TF_DataType dtype, ComputeUnits* units,
               bool accumulate, const std::string& what, const Driver& driver = kGemm,
               int64_t ldb = 0) {
  std::mt19937 rng(static_cast<unsigned>(s.m * 131 + s.k * 7 + s.n + ta * 2 + tb));
  const Operand a = MakeOperand(dtype, s.m * s.k, &rng);
  const Operand b = MakeOperand(dtype, s.k * std::max(s.n, ldb), &rng);
  const Matrix ma = ta ? gemm::RowMajor(a.data(), dtype, s.k, s.m, true)
                       : gemm::RowMajor(a.data(), dtype, s.m, s.k, false);
  Matrix mb = tb ? gemm::RowMajor(b.data(), dtype, s.n, s.k, true)
                 : gemm::RowMajor(b.data(), dtype, s.k, s.n, false);
  if (ldb != 0) mb.row_stride = ldb;
  // C has a leading dimension wider than N: the GEMM must not touch the gap.
  const int64_t ldc = s.n + 3;
  const float kSentinel = 12345.0f;
  std::vector<float> c(static_cast<size_t>(s.m * ldc + 1), kSentinel);
  std::vector<float> ref(static_cast<size_t>(s.m * s.n), accumulate ? 0.5f : 0.0f);
  if (accumulate) {
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) c[static_cast<size_t>(i * ldc + j)] = 0.5f;
  }
  driver.run(gemm::MatrixA(ma), mb, c.data(), ldc, accumulate, units);
  gemm::ReferenceGemm(ma, mb, ref.data(), s.n, accumulate);

  const double tol = Tolerance(dtype, s.k);
  int failures = 0;
  for (int64_t i = 0; i < s.m && failures < 5; ++i) {
    for (int64_t j = 0; j < s.n && failures < 5; ++j) {
      double exact = accumulate ? 0.5 : 0.0, magnitude = std::fabs(exact);
      for (int64_t p = 0; p < s.k; ++p) {
        const double x = gemm::LoadAsFloat(ma.data, dtype, i * ma.row_stride + p * ma.col_stride);
        const double y = gemm::LoadAsFloat(mb.data, dtype, p * mb.row_stride + j * mb.col_stride);
        exact += x * y;
        magnitude += std::fabs(x * y);
      }
      const double bound = tol * std::max(magnitude, 1.0);
      const double got = AsStored(c[static_cast<size_t>(i * ldc + j)], dtype);
      const double reference = AsStored(ref[static_cast<size_t>(i * s.n + j)], dtype);
      if (std::fabs(got - exact) > bound || std::fabs(reference - exact) > bound) {
        ADD_FAILURE() << driver.name << " " << what << ": C(" << i << "," << j << ") = " << got << ", reference "
                      << reference << ", exact " << exact << " (bound " << bound << ")";
        ++failures;
      }
    }
    for (int64_t j = s.n; j < ldc && i + 1 < s.m; ++j) {
      if (c[static_cast<size_t>(i * ldc + j)] != kSentinel) {
        ADD_FAILURE() << driver.name << " " << what << ": wrote C(" << i << "," << j << ") past N";
        ++failures;
      }
    }
  }
}

std::string Describe(const Shape3& s, bool ta, bool tb, TF_DataType dtype, int units,
                     const std::string& target) {
  return target + " " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
         std::to_string(s.n) + (ta ? " A^T" : "") + (tb ? " B^T" : "") + " " +
         std::to_string(static_cast<int>(dtype)) + " units=" + std::to_string(units);
}

class GemmTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::string error;
    SelectSimd("best", &error);
  }
  static void Select(const std::string& target) {
    std::string error;
    ASSERT_TRUE(SelectSimd(target, &error)) << error;
  }
};

// MR = 6 (8 on AVX-512), NR = 2 vectors (8..32), KC = 1024, MC = 144, and
// the short-A path up to 128 rows (row tiles of 1..6; 7, 8 and 9 left over
// become 4+3, 4+4 and 5+4): one below, at and above each, plus empty and
// degenerate shapes. The short-A path runs both ways on every host (its
// two drivers above): reading a float32 B in place (unless its rows are a
// multiple of 4 KiB apart, N = 1024, which it packs anyway) and with the
// first row tile packing each panel; both over several K blocks (K = 1025,
// 2050).
const Shape3 kEdgeShapes[] = {
    {0, 0, 0},     {0, 5, 7},     {5, 0, 7},      {5, 7, 0},      {1, 1, 1},    {1, 37, 1},
    {6, 8, 16},    {5, 9, 15},    {7, 17, 17},    {8, 40, 20},    {9, 30, 8},   {13, 3, 33},
    {12, 255, 32}, {6, 256, 16},  {11, 257, 31},  {32, 300, 130}, {128, 9, 17}, {129, 9, 17},
    {143, 40, 9},  {145, 300, 47}, {150, 513, 65}, {13, 1023, 33}, {14, 1024, 17},
    {7, 1025, 40},  {7, 70, 1024}, {7, 300, 1024}, {20, 2050, 40}, {16, 40, 9},
    {17, 33, 9},
};

TEST_F(GemmTest, EdgeShapesEveryTransposeEveryTargetEveryDriver) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const Driver& driver : kDrivers) {
      for (const Shape3& s : kEdgeShapes) {
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          CheckGemm(s, ta, tb, TF_FLOAT, nullptr, false, Describe(s, ta, tb, TF_FLOAT, 0, target),
                    driver);
          CheckGemm(s, ta, tb, TF_FLOAT, &two, false, Describe(s, ta, tb, TF_FLOAT, 2, target),
                    driver);
        }
      }
    }
  }
}

// Gemm reads a float32 A of up to 768 rows and 1 MiB in place, as the
// short-A path does, with a float32 B whose rows are not a multiple of 4
// KiB apart (InPlaceApplies), where that pays (LongerAInPlacePays); on
// AVX-512 two full B panels run as one tile (run_b_in_place_pair). Shapes:
// pairs then a single full panel, then a partial one (N = 100, 160), a
// pair over two K blocks (K = 1100, which adds the second block), the row
// limit and one past it (767, 769 rows), and A of exactly 1 MiB (512 x
// 512 x 128). N = 160 is 5 panels on AVX-512, which the units cannot split
// evenly enough (packed there). Each through Gemm and through the short-A
// path told to read in place, so the in-place kernels run on any host.
// (`two` has two workers besides the calling thread: three participants.)
TEST_F(GemmTest, InPlacePathPanelPairsAndKBlocks) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const Driver& driver : {kGemm, kSmallMReadingInPlace}) {
      for (const Shape3& s : {Shape3{130, 1100, 64}, Shape3{300, 77, 160}, Shape3{200, 50, 100},
                              Shape3{767, 40, 96}, Shape3{769, 40, 96}, Shape3{512, 512, 128}}) {
        CheckGemm(s, false, false, TF_FLOAT, nullptr, false,
                  Describe(s, false, false, TF_FLOAT, 0, target), driver);
        CheckGemm(s, false, false, TF_FLOAT, &two, false,
                  Describe(s, false, false, TF_FLOAT, 2, target), driver);
        CheckGemm(s, false, false, TF_FLOAT, &two, true,
                  Describe(s, false, false, TF_FLOAT, 2, target) + " accumulate", driver);
      }
    }
  }
}

// Where the row kernels read operands in place rather than pack them: the
// short-A path's B panels with the AVX-512 kernels (BInPlacePays), a
// longer A only on an AMD core besides (LongerAInPlacePays: it lost to
// the packed driver on Intel); never with AVX2 or narrower, where packing
// measured faster (Zen3).
TEST_F(GemmTest, InPlaceReadsPayForAvx512KernelsLongerAOnAmdOnly) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    const bool avx512 = target.rfind("AVX3", 0) == 0;
    EXPECT_EQ(gemm::BInPlacePays(), avx512) << target;
    EXPECT_EQ(gemm::LongerAInPlacePays(), avx512 && HostCpuIsAmd()) << target;
  }
}

// Which products Gemm routes to the in-place path (InPlaceApplies): every
// driver gives the same C, so only this shows the rule itself. Shapes
// chosen so that the answer does not depend on the target's panel width.
TEST_F(GemmTest, InPlaceAppliesOnlyWhereBothOperandsStayInPlace) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  std::vector<float> a(1 << 20), b(1 << 20);
  auto applies = [&](int64_t m, int64_t k, int64_t n, bool ta, bool tb, ComputeUnits* units) {
    const Matrix ma = ta ? gemm::RowMajor(a.data(), TF_FLOAT, k, m, true)
                         : gemm::RowMajor(a.data(), TF_FLOAT, m, k, false);
    const Matrix mb = tb ? gemm::RowMajor(b.data(), TF_FLOAT, n, k, true)
                         : gemm::RowMajor(b.data(), TF_FLOAT, k, n, false);
    return gemm::InPlaceApplies(gemm::MatrixA(ma), mb, units);
  };
  for (ComputeUnits* units : {static_cast<ComputeUnits*>(nullptr), &two}) {
    EXPECT_TRUE(applies(512, 512, 512, false, false, units));  // A exactly 1 MiB
    EXPECT_TRUE(applies(768, 300, 512, false, false, units));  // the row limit
    EXPECT_FALSE(applies(769, 300, 512, false, false, units));  // one row more
    EXPECT_FALSE(applies(512, 513, 512, false, false, units));  // A over 1 MiB
    EXPECT_FALSE(applies(256, 256, 1024, false, false, units));  // B rows 4 KiB apart
    EXPECT_FALSE(applies(256, 256, 512, true, false, units));    // A transposed
    EXPECT_FALSE(applies(256, 256, 512, false, true, units));    // B transposed
  }
  // The split by panels: 3 full panels (of the target's width) run on one
  // unit, but on two (the calling thread and one worker, as a device of
  // VACC_THREADS=2 runs them) one unit would idle a third of the time.
  ComputeUnits one_worker(1, std::chrono::microseconds(50));
  const int64_t nr = gemm::RowsKernelFor(1024).nr;
  EXPECT_TRUE(applies(256, 256, 3 * nr, false, false, nullptr));
  EXPECT_FALSE(applies(256, 256, 3 * nr, false, false, &one_worker));
  EXPECT_TRUE(applies(256, 256, 4 * nr, false, false, &one_worker));
}

TEST_F(GemmTest, AccumulateAddsToC) {
  ComputeUnits one(1, std::chrono::microseconds(50));
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const Shape3& s : {Shape3{7, 300, 19}, Shape3{1, 1, 1}, Shape3{4, 0, 9}}) {
      CheckGemm(s, false, true, TF_FLOAT, &one, true, Describe(s, false, true, TF_FLOAT, 1, target));
    }
  }
}

TEST_F(GemmTest, HalfTypesWidenAndAccumulateInFloat) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (TF_DataType dtype : {TF_BFLOAT16, TF_HALF}) {
      for (const Shape3& s : {Shape3{13, 33, 17}, Shape3{150, 270, 40}, Shape3{1, 5, 1}}) {
        for (int t = 0; t < 4; ++t) {
          CheckGemm(s, t & 1, t & 2, dtype, &two, false, Describe(s, t & 1, t & 2, dtype, 2, target));
        }
      }
    }
  }
}

// Large enough for several MC, KC and (with 3 units) column-group splits,
// and a short A split over columns: every transpose on 2 units, the plain
// product on 1 and 3.
TEST_F(GemmTest, LargeOnOneTwoThreeUnits) {
  for (const Shape3& s : {Shape3{517, 263, 1031}, Shape3{64, 600, 1000}}) {
    for (int count : {1, 2, 3}) {
      ComputeUnits units(count, std::chrono::microseconds(50));
      for (int t = 0; t < (count == 2 ? 4 : 1); ++t) {
        CheckGemm(s, t & 1, t & 2, TF_FLOAT, &units, false,
                  Describe(s, t & 1, t & 2, TF_FLOAT, count, SimdTargetName()));
      }
    }
  }
}

// Wider than NC (4080 columns): more than one B block (the short-A path has
// no column blocks; it must handle the width too). On two units the packed
// driver cuts B into two column slices (PackedDriverColumnSlices), each
// narrower than NC; on one it runs both blocks.
TEST_F(GemmTest, MoreColumnsThanOneBBlock) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  CheckGemm({130, 20, 4100}, false, false, TF_FLOAT, nullptr, false, "130x20x4100, 1 unit");
  CheckGemm({130, 20, 4100}, false, false, TF_FLOAT, &two, false, "130x20x4100");
  CheckGemm({9, 20, 4100}, false, false, TF_FLOAT, &two, false, "9x20x4100");
}

// The packed driver's blocks (vacc_gemm.cc): a tall A is many row chunks
// (3001 rows: 22 on two units, dealt as shares and taken back when one
// unit is done); a long K narrows the column blocks (each unit keeps all of
// K packed for kUnitPackedBFloats: K = 40000 gives 2-3 column blocks of
// N = 200, too few panels for column slices) and takes many K blocks, each
// adding to C like the first. (These shapes go to other drivers in Gemm:
// the test calls the packed driver itself.)
TEST_F(GemmTest, PackedDriverRowChunksAndColumnBlocks) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  ComputeUnits three(3, std::chrono::microseconds(50));
  for (const gemm::TileShape shape : kTileShapes) {
    const Driver& packed = PackedDriver(shape);
    CheckGemm({3001, 64, 40}, false, false, TF_FLOAT, &two, false, "3001x64x40", packed);
    CheckGemm({3001, 64, 40}, true, false, TF_FLOAT, &three, false, "3001x64x40 A^T", packed);
    const Shape3 long_k{16, 40000, 200};
    ASSERT_LT(gemm::kUnitPackedBFloats / long_k.k, long_k.n);  // several column blocks
    CheckGemm(long_k, false, false, TF_FLOAT, &two, false, "16x40000x200", packed);
    CheckGemm(long_k, false, true, TF_FLOAT, nullptr, true, "16x40000x200 B^T accumulate", packed);
  }
}

// A packed B block of kSharedPackedBFloats or more is packed once and
// shared by the units (PanelClaims): B 2100 x 260 is 9 panels (on AVX-512)
// x 3 K blocks, the last panel 4 columns wide (packed by PackB, the others
// by the micro-kernel from B in place), every transpose on 2 units and the
// plain product on 3, accumulating too, and bfloat16 (packed by PackB). A
// is taller than B is wide, so the units split rows, not columns.
TEST_F(GemmTest, SharedPackedBOnTwoAndThreeUnits) {
  const Shape3 s{270, 2100, 260};
  ComputeUnits two(2, std::chrono::microseconds(50));
  ComputeUnits three(3, std::chrono::microseconds(50));
  for (const gemm::TileShape shape : kTileShapes) {
    const gemm::MicroKernel uk = PackedKernel(shape);
    ASSERT_GE(gemm::CeilDiv(s.n, uk.nr) * uk.nr * s.k, gemm::kSharedPackedBFloats);
    ASSERT_EQ(gemm::PackedDriverColumnSlices(s.m, s.n, uk.nr, 4, uk.shape), 1);
    // Long chunks with shared B: still two, so two units contend for panels.
    ASSERT_GE(gemm::PackedDriverChunks(s.m, uk.mr, uk.nr, 2, gemm::kSharedPackedBFloats, true,
                                       kL2Floats)
                  .count,
              2);
    const Driver& packed = PackedDriver(shape);
    for (int t = 0; t < 4; ++t) {
      CheckGemm(s, t & 1, t & 2, TF_FLOAT, &two, false,
                Describe(s, t & 1, t & 2, TF_FLOAT, 2, SimdTargetName()), packed);
    }
    CheckGemm(s, false, false, TF_FLOAT, &three, true, "shared B, 3 units, accumulate", packed);
    CheckGemm(s, false, false, TF_BFLOAT16, &two, false, "shared B, bfloat16", packed);
  }
}

// A B block a unit packs for itself, with rows a multiple of 4 KiB apart
// (RowsShareCacheSets), is packed a K block at a time by a pass where its
// chunks have too few tiles to copy the panels (PacksOwnBByPass), and by
// the tiles' copies otherwise (vacc_gemm.cc): float32 rows of 1024 by the
// pass (24 rows, 2 or 4 tiles against the 5 a panel 1050 deep needs;
// three column blocks of three K blocks at K = 2100, since
// a unit keeps all of K of a block packed) and by copies (300 rows, one
// unit and two: column slices), bfloat16 rows of 2048 (never copied), on
// two units with a block under kSharedPackedBFloats (each its own: 100
// columns in rows 1024 apart, A taller than B is wide, so the units split
// rows), accumulating, and 1000 columns in rows 1024 apart (the last panel
// partial; two column slices on two units).
TEST_F(GemmTest, PackedDriverPacksBByPassWhenRowsShareCacheSets) {
  ASSERT_TRUE(gemm::RowsShareCacheSets(1024 * sizeof(float)));
  ASSERT_FALSE(gemm::RowsShareCacheSets(1000 * sizeof(float)));
  // A matrix's rows are measured in bytes: 1024 bfloat16 values are 2 KiB.
  EXPECT_TRUE(gemm::RowsShareCacheSets(gemm::RowMajor(nullptr, TF_FLOAT, 4, 1024, false)));
  EXPECT_FALSE(gemm::RowsShareCacheSets(gemm::RowMajor(nullptr, TF_BFLOAT16, 4, 1024, false)));
  EXPECT_TRUE(gemm::RowsShareCacheSets(gemm::RowMajor(nullptr, TF_BFLOAT16, 4, 2048, false)));
  ComputeUnits two(2, std::chrono::microseconds(50));
  for (const gemm::TileShape shape : kTileShapes) {
    const Driver& packed = PackedDriver(shape);
    CheckGemm({24, 2100, 1024}, false, false, TF_FLOAT, nullptr, false, "24x2100x1024", packed);
    CheckGemm({300, 300, 1024}, false, false, TF_FLOAT, nullptr, true, "300x300x1024, copies",
              packed);
    CheckGemm({300, 300, 1024}, false, false, TF_FLOAT, &two, false, "300x300x1024, 2 units",
              packed);
    CheckGemm({40, 200, 2048}, false, false, TF_BFLOAT16, nullptr, false, "40x200x2048 bfloat16",
              packed);
    const Shape3 own{130, 300, 100};
    const gemm::MicroKernel uk = PackedKernel(shape);
    const int64_t nr = uk.nr;
    ASSERT_LT(gemm::CeilDiv(own.n, nr) * nr * own.k, gemm::kSharedPackedBFloats);
    ASSERT_EQ(gemm::PackedDriverColumnSlices(own.m, own.n, nr, gemm::Participants(&two), uk.shape),
              1);
    CheckGemm(own, false, false, TF_FLOAT, &two, true,
              "130x300x100, rows 1024 apart, 2 units, accumulate", packed, 1024);
    CheckGemm({60, 100, 1000}, false, false, TF_FLOAT, &two, false, "60x100x1000, rows 1024 apart",
              packed, 1024);
  }
}

// The pass is for rows sharing cache sets whose chunks cannot copy the
// panels: too few tiles (5 of 12 rows, one packing B, against the 5 a
// panel 1050 deep needs), or no copies at all; 22 tiles in 3 chunks copy.
TEST(PacksOwnBByPass, WhereRowsShareSetsAndChunksCannotCopy) {
  const gemm::RowChunks short_a(50, 12, 96, 12, 1, 1), long_a(256, 12, 96, 12, 1, 1);
  ASSERT_EQ(short_a.count, 1);
  ASSERT_EQ(gemm::PanelCopyTiles(1050), 5);
  EXPECT_TRUE(gemm::PacksOwnBByPass(true, true, short_a, 1050));
  EXPECT_FALSE(gemm::PacksOwnBByPass(true, true, long_a, 1024));
  EXPECT_TRUE(gemm::PacksOwnBByPass(true, false, long_a, 1024));
  EXPECT_TRUE(gemm::PacksOwnBByPass(true, true, long_a, 3));  // too shallow to copy
  EXPECT_FALSE(gemm::PacksOwnBByPass(false, false, short_a, 1050));
  EXPECT_FALSE(gemm::PacksOwnBByPass(false, true, short_a, 1050));
}

// The panel a unit's tiles walk into L2 while they run the q-th panel of a
// K block (its order starts at first_panel and wraps): the next in that
// order, then the next K block's first, and after the last K block's last
// K block 0's first, where the unit's next row chunk starts.
TEST(PackedDriverWalkedPanel, NextInOrderThenNextKBlockThenTheNextChunksFirst) {
  auto walked = [](int64_t q, int64_t panels, int64_t first, int64_t pc, int64_t k,
                   int64_t kc_max) {
    const gemm::WalkedPanel w = gemm::PackedDriverWalkedPanel(q, panels, first, pc, k, kc_max);
    return std::vector<int64_t>{w.pc, w.kc, w.p};
  };
  using V = std::vector<int64_t>;
  // Eight panels, K = 2500 in blocks of 1024, 1024 and 452; this unit starts at panel 5.
  EXPECT_EQ(walked(0, 8, 5, 0, 2500, 1024), (V{0, 1024, 6}));
  EXPECT_EQ(walked(2, 8, 5, 0, 2500, 1024), (V{0, 1024, 0}));  // wraps past panel 7
  EXPECT_EQ(walked(7, 8, 5, 0, 2500, 1024), (V{1024, 1024, 5}));  // next K block
  EXPECT_EQ(walked(7, 8, 5, 1024, 2500, 1024), (V{2048, 452, 5}));  // the short last one
  EXPECT_EQ(walked(7, 8, 5, 2048, 2500, 1024), (V{0, 1024, 5}));  // the next chunk's first
  // One K block (K = 512 <= KC): from the last panel back to the block's first.
  EXPECT_EQ(walked(3, 4, 0, 0, 512, 1024), (V{0, 512, 0}));
  EXPECT_EQ(walked(3, 4, 2, 0, 512, 1024), (V{0, 512, 2}));
  // A single panel walks itself, for the next chunk.
  EXPECT_EQ(walked(0, 1, 0, 0, 300, 1024), (V{0, 300, 0}));
}

// The packed driver cuts B into one column slice per unit where B is at
// least as wide as A is tall (with the wide tile, kWideTileSliceAspect
// times as wide) and each slice has kColumnSliceMinPanels panels;
// otherwise (one participant, a taller A, too few panels) one.
TEST(PackedDriverColumnSlices, OnePerUnitWhereBIsAtLeastAsWideAsAIsTall) {
  const gemm::TileShape tall = gemm::TileShape::kTall, wide = gemm::TileShape::kWide;
  EXPECT_EQ(gemm::PackedDriverColumnSlices(512, 512, 32, 1, tall), 1);  // alone
  EXPECT_EQ(gemm::PackedDriverColumnSlices(512, 512, 32, 2, tall), 2);  // 16 panels
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 256, 32, 2, tall), 1);  // 8 panels: 4 each
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 256, 16, 2, tall), 2);  // 16 panels of 16
  EXPECT_EQ(gemm::PackedDriverColumnSlices(513, 512, 32, 2, tall), 1);  // A taller than B is wide
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 784, 32, 3, tall), 3);  // 25 panels for 24
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 736, 32, 3, tall), 1);  // 23 panels
  EXPECT_EQ(gemm::PackedDriverColumnSlices(0, 0, 32, 2, tall), 1);      // empty
  // The wide tile: B at least twice as wide as A is tall.
  static_assert(gemm::kWideTileSliceAspect == 2, "the cases below are for 2");
  EXPECT_EQ(gemm::PackedDriverColumnSlices(1024, 1024, 64, 2, wide), 1);  // square
  EXPECT_EQ(gemm::PackedDriverColumnSlices(512, 1024, 64, 2, wide), 2);   // twice as wide
  EXPECT_EQ(gemm::PackedDriverColumnSlices(513, 1024, 64, 2, wide), 1);
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 1024, 64, 1, wide), 1);  // alone
  EXPECT_EQ(gemm::PackedDriverColumnSlices(256, 960, 64, 2, wide), 1);   // 15 panels
}

// Column slices computed: B 33 panels and 3 columns wide (the last slice
// ends on a partial panel), so that 3 and 4 participants (2 and 3 units
// beside the caller) each cut it; one K block (K = 260: every transpose,
// accumulating, bfloat16 with B packed by PackB) and two (K = 1100).
TEST_F(GemmTest, PackedDriverColumnSlicesOnTwoAndThreeUnits) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  ComputeUnits three(3, std::chrono::microseconds(50));
  for (const gemm::TileShape shape : kTileShapes) {
    const gemm::MicroKernel uk = PackedKernel(shape);
    const int64_t nr = uk.nr;
    const Driver& packed = PackedDriver(shape);
    const Shape3 s{150, 260, 33 * nr + 3};
    for (ComputeUnits* units : {&two, &three}) {
      const int parts = gemm::Participants(units);
      ASSERT_EQ(gemm::PackedDriverColumnSlices(s.m, s.n, nr, parts, uk.shape), parts);
    }
    for (int t = 0; t < 4; ++t) {
      CheckGemm(s, t & 1, t & 2, TF_FLOAT, &two, false,
                Describe(s, t & 1, t & 2, TF_FLOAT, 2, SimdTargetName()), packed);
    }
    CheckGemm(s, false, false, TF_FLOAT, &three, true,
              Describe(s, false, false, TF_FLOAT, 3, SimdTargetName()) + " accumulate", packed);
    CheckGemm(s, false, true, TF_BFLOAT16, &two, false,
              Describe(s, false, true, TF_BFLOAT16, 2, SimdTargetName()), packed);
    const Shape3 two_blocks{150, 1100, 33 * nr + 3};
    CheckGemm(two_blocks, false, false, TF_FLOAT, &two, false,
              Describe(two_blocks, false, false, TF_FLOAT, 2, SimdTargetName()), packed);
  }
}

// With several units, a B each packs for itself that is over a unit's L2
// share but within kMostOwnBL2Blocks of it is cut into that many blocks of
// whole panels; anything else keeps the one block (or the blocks that
// kUnitPackedBFloats makes at long K).
TEST(PackedDriverBlockColumns, TwoBlocksWhereAUnitsOwnBIsUpToTwiceItsL2Share) {
  static_assert(gemm::kMostOwnBL2Blocks == 2, "cases below are for 2");
  const int64_t l2 = 163840;  // 640 KiB: half an Ice Lake server Xeon's 1.25 MiB
  // One block of all 512 columns: NC, as many as fit kUnitPackedBFloats at K = 512.
  const int64_t whole = std::min(gemm::kNC, gemm::kUnitPackedBFloats / 512) / 64 * 64;
  ASSERT_GE(whole, 512);
  EXPECT_EQ(gemm::PackedDriverBlockColumns(512, 512, 64, 1, l2), whole);  // alone: one block
  EXPECT_EQ(gemm::PackedDriverBlockColumns(512, 512, 64, 2, l2), 256);  // 1 MiB: two
  EXPECT_EQ(gemm::PackedDriverBlockColumns(512, 512, 64, 3, l2), 256);  // three units too
  EXPECT_EQ(gemm::PackedDriverBlockColumns(256, 1024, 64, 2, l2), 128);  // deep K
  EXPECT_EQ(gemm::PackedDriverBlockColumns(200, 1024, 64, 2, l2), 128);  // last panel partial
  EXPECT_EQ(gemm::PackedDriverBlockColumns(512, 512, 64, 2, kL2Floats), whole);  // fits
  EXPECT_EQ(gemm::PackedDriverBlockColumns(320, 512, 64, 2, l2), whole);  // 640 KiB fits
  EXPECT_EQ(gemm::PackedDriverBlockColumns(704, 512, 64, 2, l2), whole);  // three blocks' worth
  EXPECT_EQ(gemm::PackedDriverBlockColumns(64, 4096, 64, 2, l2),  // one panel
            gemm::PackedDriverBlockColumns(64, 4096, 64, 1, l2));
  // Shared by the units (kSharedPackedBFloats): not cut.
  ASSERT_GE(1024 * 512, gemm::kSharedPackedBFloats);
  EXPECT_EQ(gemm::PackedDriverBlockColumns(1024, 512, 64, 2, gemm::kSharedPackedBFloats / 2 + 1),
            whole);
  // Long K: the blocks kUnitPackedBFloats allows, rule or not.
  const int64_t long_k = gemm::kUnitPackedBFloats / 40000 / 32 * 32;
  EXPECT_EQ(gemm::PackedDriverBlockColumns(200, 40000, 32, 2, l2), long_k);
  EXPECT_EQ(gemm::PackedDriverBlockColumns(200, 40000, 32, 1, l2), long_k);
}

// The host's L2 share as the driver takes it: half of what the host
// reports, or of kDefaultUnitL2Bytes.
TEST(UnitL2, PackedBShareIsHalfTheHostsL2) {
  EXPECT_GT(gemm::UnitL2Bytes(), 0);
  EXPECT_EQ(gemm::UnitL2PackedBFloats() * 2 * static_cast<int64_t>(sizeof(float)),
            gemm::UnitL2Bytes());
}

// Products whose B the rule cuts into two blocks on this host: K = 512 and
// B one and a half L2 shares wide (the last panel partial), on two units,
// every transpose, and accumulating on three; tall and wide tiles.
TEST_F(GemmTest, PackedDriverTwoBlocksOfOwnBOnTwoAndThreeUnits) {
  ComputeUnits two(2, std::chrono::microseconds(50));
  ComputeUnits three(3, std::chrono::microseconds(50));
  const int64_t k = 512, l2 = gemm::UnitL2PackedBFloats();
  for (const gemm::TileShape shape : kTileShapes) {
    const gemm::MicroKernel uk = PackedKernel(shape);
    const Shape3 s{150, k, l2 * 3 / 2 / k / uk.nr * uk.nr + 5};
    if (gemm::CeilDiv(s.n, uk.nr) * uk.nr * k >= gemm::kSharedPackedBFloats) {
      GTEST_SKIP() << "this host's L2 (" << gemm::UnitL2Bytes()
                   << " bytes) holds every B a unit packs for itself";
    }
    ASSERT_LT(gemm::PackedDriverBlockColumns(s.n, k, uk.nr, 2, l2), s.n) << "not cut";
    ASSERT_EQ(gemm::PackedDriverColumnSlices(s.m, s.n, uk.nr, 3, uk.shape), 1);
    const Driver& packed = PackedDriver(shape);
    for (int t = 0; t < 4; ++t) {
      CheckGemm(s, t & 1, t & 2, TF_FLOAT, &two, false,
                Describe(s, t & 1, t & 2, TF_FLOAT, 2, SimdTargetName()), packed);
    }
    CheckGemm(s, false, false, TF_FLOAT, &three, true,
              Describe(s, false, false, TF_FLOAT, 3, SimdTargetName()) + " accumulate", packed);
  }
}

// The B panel width beside a tile of mr rows in the kernels: 16 beside 6
// rows (AVX2), 32 beside 8 and 12 (AVX-512).
int64_t NrBeside(int64_t mr) { return mr == 6 ? 16 : 32; }

// The packed driver's row chunks cover every row once; with B shared by the
// units, or each unit's own B block too large for its L2 (both in L3,
// streamed past each chunk), none is shorter than kSharedBChunkRows or
// kOwnStreamedBChunkRows; otherwise each unit has kChunksPerParticipant,
// or more where those would be longer than kPackedARows (1024 rows of 6,
// 2000 of 8), or than a panel's fetch walk of tiles where those are more
// (FetchWalkTiles: 8 at NR 32, so MR 12 takes 96 rows).
// The units have equal shares: a whole number of chunks each, also where
// the shortest chunk allowed sets the count (1000 rows, own large B: 125
// micro-panels of 8 rows in chunks of at least 8, at most 15 of them: 14).
TEST(RowChunks, LongWhenBStreamsFromL3ShortOtherwise) {
  enum class B { kOwnSmall, kOwnLarge, kShared };
  for (int64_t mr : {6, 8, 12}) {
    const int64_t nr = NrBeside(mr);
    const int64_t budget = std::max(gemm::kPackedARows, gemm::FetchWalkTiles(nr) * mr);
    for (int64_t m : {200, 256, 1000, 1024, 2000}) {
      for (B b : {B::kOwnSmall, B::kOwnLarge, B::kShared}) {
        const int64_t b_floats = b == B::kOwnSmall ? kL2Floats : kL2Floats + 1;
        const gemm::RowChunks chunks =
            gemm::PackedDriverChunks(m, mr, nr, 2, b_floats, b == B::kShared, kL2Floats);
        const char* names[] = {" own small B", " own large B", " shared B"};
        const std::string what = "mr " + std::to_string(mr) + " m " + std::to_string(m) +
                                 names[static_cast<int>(b)];
        if (chunks.count >= 2) {
          EXPECT_EQ(chunks.count % 2, 0) << what;
        }
        int64_t next = 0;
        for (int64_t c = 0; c < chunks.count; ++c) {
          ASSERT_EQ(chunks.Row0(c), next) << what << ", chunk " << c;
          next += chunks.Rows(c);
          ASSERT_LE(chunks.Rows(c), gemm::kMC) << what << ", chunk " << c;
          if (b == B::kShared) {
            EXPECT_GE(chunks.Rows(c), gemm::kSharedBChunkRows) << what << ", chunk " << c;
          } else if (b == B::kOwnLarge) {
            EXPECT_GE(chunks.Rows(c), gemm::kOwnStreamedBChunkRows) << what << ", chunk " << c;
          }
        }
        EXPECT_EQ(next, m) << what;
        if (b == B::kOwnSmall) {
          // Checked as properties, not by the rule's own arithmetic: no
          // chunk over the budget, at least kChunksPerParticipant per
          // unit, and more only where one chunk fewer per unit would not
          // hold M in chunks of the budget (whole micro-panels).
          for (int64_t c = 0; c < chunks.count; ++c) {
            EXPECT_LE(chunks.Rows(c), budget) << what << ", chunk " << c;
          }
          EXPECT_GE(chunks.count, 2 * gemm::kChunksPerParticipant) << what;
          if (chunks.count > 2 * gemm::kChunksPerParticipant) {
            const int64_t longest_allowed = budget / mr * mr;
            EXPECT_LT((chunks.count - 2) * longest_allowed, m)
                << what << ": more chunks than needed";
          }
        } else {
          EXPECT_GE(chunks.count, 2) << what;
        }
      }
    }
  }
}

// Where each unit copies B panels of its own, a chunk has the tiles a
// panel needs to copy the next: the second panel's (its first tile packs
// that panel) beyond the first. Checked against the copy's own rule (one
// row per kFetchKSteps k steps per tile), not CopyingChunkRows' formula;
// and every unit still gets a chunk where M is too short for that.
TEST(RowChunks, LongEnoughToCopyTheNextPanel) {
  for (int64_t mr : {6, 8, 12}) {
    for (int64_t kc : {4, 5, 100, 256, 512}) {
      for (int parts : {2, 3}) {
        for (int64_t m : {16, 48, 200, 256, 1000}) {
          const gemm::RowChunks chunks =
              gemm::PackedDriverChunks(m, mr, NrBeside(mr), parts, kL2Floats, false,
                                       kL2Floats, kc);
          const std::string what = "mr " + std::to_string(mr) + " kc " + std::to_string(kc) +
                                   " units " + std::to_string(parts) + " m " +
                                   std::to_string(m);
          const int64_t panels = gemm::CeilDiv(m, mr);
          if (panels < parts) continue;  // fewer micro-panels than units
          ASSERT_GE(chunks.count, parts) << what << ": a unit without a chunk";
          // Copy-able: some tile count t with t * (kc / 4) >= kc fits in
          // every chunk beside the packing tile; else the count is what
          // kChunksPerParticipant alone gives.
          int64_t copy_tiles = 1;
          while (copy_tiles * (kc / gemm::kFetchKSteps) < kc) ++copy_tiles;
          const int64_t least_panels = copy_tiles + 1;
          if (panels >= parts * least_panels) {
            for (int64_t c = 0; c < chunks.count; ++c) {
              EXPECT_GE(gemm::CeilDiv(chunks.Rows(c), mr), least_panels)
                  << what << ", chunk " << c;
            }
          } else {
            const gemm::RowChunks plain =
                gemm::PackedDriverChunks(m, mr, NrBeside(mr), parts, kL2Floats,
                                         false, kL2Floats, 0);
            EXPECT_EQ(chunks.count, plain.count) << what;
          }
          if (chunks.count > parts) {
            EXPECT_EQ(chunks.count % parts, 0) << what;
          }
        }
      }
    }
  }
}

// On one unit a chunk is the packed A block that stays in L2 while the B
// panels pass, beside the packed B block: at most kPackedARows rows at
// every depth where that block stays in L2 too, or a panel's fetch walk
// of tiles where those are more (MR 12 beside NR 32: 96 rows; a 64-wide
// panel's walk takes 16 tiles). Where it streams from L3
// (over its L2 share, kL2Floats here) the shortest chunk allowed,
// kOwnStreamedBChunkRows, wins, and chunks stay under twice that.
TEST(RowChunks, OneUnitsABlockFitsItsBudget) {
  for (int64_t mr : {6, 8, 12}) {
    const int64_t nr = NrBeside(mr);
    const int64_t budget = std::max(gemm::kPackedARows, gemm::FetchWalkTiles(nr) * mr);
    const int64_t shortest_streamed = gemm::CeilDiv(gemm::kOwnStreamedBChunkRows, mr) * mr;
    for (int64_t m : {200, 1000, 2048}) {
      for (int64_t b_floats : {kL2Floats, kL2Floats * 8}) {
        const bool streamed = b_floats > kL2Floats;
        const gemm::RowChunks chunks =
            gemm::PackedDriverChunks(m, mr, nr, 1, b_floats, false, kL2Floats);
        const std::string what =
            "mr " + std::to_string(mr) + " m " + std::to_string(m) + " B " + std::to_string(b_floats);
        int64_t rows = 0;
        for (int64_t c = 0; c < chunks.count; ++c) {
          if (streamed) {
            EXPECT_GE(chunks.Rows(c), shortest_streamed) << what << ", chunk " << c;
            EXPECT_LT(chunks.Rows(c), 2 * shortest_streamed) << what << ", chunk " << c;
          } else {
            EXPECT_LE(chunks.Rows(c), budget) << what << ", chunk " << c;
          }
          rows += chunks.Rows(c);
        }
        EXPECT_EQ(rows, m) << what;
      }
    }
  }
  EXPECT_EQ(gemm::FetchWalkTiles(32), 8);
  EXPECT_EQ(gemm::FetchWalkTiles(16), 4);
  EXPECT_EQ(gemm::PackedDriverChunks(2048, 8, 32, 1, 0, false, kL2Floats).largest,
            gemm::kPackedARows);
  EXPECT_EQ(gemm::PackedDriverChunks(2048, 12, 32, 1, 0, false, kL2Floats).largest, 96);
  EXPECT_EQ(gemm::PackedDriverChunks(2048, 6, 64, 1, 0, false, kL2Floats).largest, 96);
  EXPECT_EQ(gemm::PackedDriverChunks(2048, 6, 16, 1, 0, false, kL2Floats).largest,
            gemm::kPackedARows / 6 * 6);  // whole tiles within kPackedARows
  EXPECT_EQ(gemm::PackedDriverChunks(200, 8, 32, 1, kL2Floats + 1, false, kL2Floats).largest,
            72);
}

// Who packs a shared panel: the first to ask claims it; others see it busy
// until it is packed, then packed; panels are independent.
TEST(PanelClaims, FirstClaimsOthersWaitUntilPacked) {
  using State = gemm::PanelClaims::State;
  gemm::PanelClaims claims(3);
  EXPECT_EQ(claims.TryClaim(1), State::kClaimed);
  EXPECT_EQ(claims.TryClaim(1), State::kBusy);
  EXPECT_EQ(claims.TryClaim(0), State::kClaimed);
  claims.Packed(1);
  EXPECT_EQ(claims.TryClaim(1), State::kPacked);
  claims.Wait(1, std::chrono::microseconds(0));  // returns at once: packed
  EXPECT_EQ(claims.TryClaim(2), State::kClaimed);
  EXPECT_EQ(claims.TryClaim(0), State::kBusy);
}

// A unit waiting for a panel another is packing spins for its budget, then
// sleeps (a packer that takes long was preempted, and needs a core), and
// wakes when the panel is marked packed.
TEST(PanelClaims, WaiterSleepsUntilAnotherThreadPacks) {
  gemm::PanelClaims claims(1);
  ASSERT_EQ(claims.TryClaim(0), gemm::PanelClaims::State::kClaimed);
  std::atomic<pid_t> tid{0};
  std::thread waiter([&] {
    tid.store(CurrentTid());
    claims.Wait(0, std::chrono::microseconds(50));
  });
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(SeenAsleep(tid.load()));
  claims.Packed(0);
  waiter.join();
  EXPECT_EQ(claims.TryClaim(0), gemm::PanelClaims::State::kPacked);
}

// The narrow-B path (vacc_gemm_narrow_b.h) as Gemm picks it: A read in
// place, or packed per row block when transposed or 16-bit; several K blocks
// (K = 784: 4 x 196) and row blocks, N from 1 to NarrowBCols() (half-width
// kernels up to half a panel), on 1 to 3 units and accumulating; and a
// transposed A with a narrow N, which Gemm computes as C^T = B^T A^T; A's
// rows a multiple of 4 KiB apart or not (the two kernels of pairs).
TEST_F(GemmTest, NarrowBInPlaceOrPackedOnOneTwoThreeUnits) {
  const int64_t widest = gemm::NarrowBCols();
  for (int count : {1, 2, 3}) {
    ComputeUnits units(count, std::chrono::microseconds(50));
    for (const Shape3& s : {Shape3{1500, 256, 128}, Shape3{256, 784, 10}, Shape3{997, 300, 1},
                            Shape3{300, 5, widest}, Shape3{129, 1000, widest - 1}}) {
      for (bool ta : {false, true}) {
        CheckGemm(s, ta, false, TF_FLOAT, &units, false,
                  Describe(s, ta, false, TF_FLOAT, count, SimdTargetName()));
      }
    }
  }
  ComputeUnits two(2, std::chrono::microseconds(50));
  // A's rows 4 KiB apart (K = 1024, RowsShareCacheSets): the pairs of
  // panels run the kernel that fetches no rows ahead; on two units and
  // accumulating.
  CheckGemm({200, 1024, 128}, false, false, TF_FLOAT, &two, true, "200x1024x128 A rows 4 KiB apart",
            kNarrowB);
  CheckGemm({150, 1024, 100}, false, false, TF_FLOAT, nullptr, false,
            "150x1024x100 A rows 4 KiB apart", kNarrowB);
  CheckGemm({300, 700, 33}, false, true, TF_FLOAT, &two, true, "300x700x33 B^T accumulate");
  CheckGemm({300, 700, 33}, false, false, TF_BFLOAT16, &two, false, "300x700x33 bfloat16");
  // A transposed and N leaving panels part empty: Gemm computes C^T = B^T A^T.
  CheckGemm({300, 700, 10}, true, false, TF_FLOAT, &two, true, "300x700x10 A^T accumulate");
  CheckGemm({300, 700, 10}, true, true, TF_FLOAT, nullptr, false, "300x700x10 A^T B^T");
}

// How wide a B the narrow-B path takes, per target: 128 columns where the
// row kernels have panel pairs (AVX-512), 96 elsewhere, where the packed
// driver ran 6272 x 256 x 128 (the 1x1 Conv2D) and wider K faster (Zen3).
TEST_F(GemmTest, NarrowBColsFollowPanelPairs) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    const bool pairs = gemm::CurrentRowsKernel().pair_max_rows > 0;
    EXPECT_EQ(gemm::NarrowBCols(), pairs ? 128 : 96) << target;
    std::vector<float> a(6272 * 256), b(256 * 128);
    const gemm::MatrixA one_by_one(gemm::RowMajor(a.data(), TF_FLOAT, 6272, 256, false));
    EXPECT_EQ(gemm::NarrowBApplies(one_by_one, gemm::RowMajor(b.data(), TF_FLOAT, 256, 128, false)),
              pairs)
        << target;
    EXPECT_TRUE(gemm::NarrowBApplies(one_by_one, gemm::RowMajor(b.data(), TF_FLOAT, 256, 96, false)))
        << target;
  }
}

// Every target's micro-kernel reports a tile of MR x (2 vectors): MR 12
// with AVX-512's 32 registers, else 6; the row kernels' tallest tile is 8
// there (their pointers and fetches are per row), else 6.
TEST_F(GemmTest, MicroKernelShapePerTarget) {
  std::string error;
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    ASSERT_TRUE(gemm::SelectPackedTileShape("tall", &error)) << error;
    const std::string name = gemm::MicroKernelName();
    EXPECT_EQ(name.rfind(target == "HWY_SCALAR" ? "SCALAR" : target, 0), 0u) << name;
    const bool avx512 = target.rfind("AVX3", 0) == 0;
    EXPECT_NE(name.find(avx512 ? " 12x" : " 6x"), std::string::npos) << name;
    EXPECT_EQ(gemm::CurrentMicroKernel().mr, avx512 ? 12 : 6) << name;
    // The wide tile, AVX-512 only: elsewhere the tall one stands in.
    const gemm::MicroKernel wide = PackedKernel(gemm::TileShape::kWide);
    EXPECT_EQ(wide.mr, 6) << target;
    EXPECT_EQ(wide.nr, (avx512 ? 2 : 1) * gemm::CurrentMicroKernel().nr) << target;
    EXPECT_EQ(wide.shape, avx512 ? gemm::TileShape::kWide : gemm::TileShape::kTall) << target;
    EXPECT_EQ(gemm::CurrentMicroKernel().shape, gemm::TileShape::kTall) << target;
    ASSERT_TRUE(gemm::SelectPackedTileShape("wide", &error)) << error;
    EXPECT_EQ(gemm::MicroKernelName(), std::string(wide.target) + " 6x" + std::to_string(wide.nr));
    ASSERT_TRUE(gemm::SelectPackedTileShape("tall", &error)) << error;
    EXPECT_EQ(gemm::MicroKernelName(), name) << target;
    ASSERT_TRUE(gemm::SelectPackedTileShape("auto", &error)) << error;
    EXPECT_FALSE(gemm::SelectPackedTileShape("square", &error));
    EXPECT_NE(error.find("VACC_GEMM_TILE='square'"), std::string::npos) << error;
    // The half-width kernels (a narrow B): half the panel, down to one lane.
    const int full = gemm::CurrentMicroKernel().nr;
    EXPECT_EQ(gemm::CurrentMicroKernel(true).nr, full >= 4 ? full / 2 : full) << target;
    EXPECT_EQ(gemm::CurrentRowsKernel(true).nr, gemm::CurrentMicroKernel(true).nr) << target;
    EXPECT_EQ(gemm::CurrentRowsKernel().nr, full) << target;
    // The row kernels: every height up to MR, none past it; pairs of
    // panels on AVX-512 up to 6 rows (29 of its 32 registers).
    for (const bool half : {false, true}) {
      const gemm::RowsKernel rk = gemm::CurrentRowsKernel(half);
      EXPECT_EQ(rk.max_rows, avx512 ? 8 : 6) << target;
      EXPECT_EQ(rk.pair_max_rows, avx512 ? 6 : 0) << target;
      for (int r = 1; r <= gemm::RowsKernel::kMaxRows; ++r) {
        const bool has = r <= rk.max_rows, has_pair = r <= rk.pair_max_rows;
        EXPECT_EQ(rk.run[r] != nullptr, has) << target << " rows " << r;
        EXPECT_EQ(rk.run_packing[r] != nullptr, has) << target << " rows " << r;
        EXPECT_EQ(rk.run_b_in_place[r] != nullptr, has) << target << " rows " << r;
        EXPECT_EQ(rk.run_b_in_place_pair[r] != nullptr, has_pair) << target << " rows " << r;
      }
    }
  }
}

// K blocks: the fewest of at most `most` values, as even as whole values
// allow (300 at most 256 is 150 + 150, not 256 + 44).
TEST(EvenBlockLength, FewestBlocksAtMostAsEvenAsPossible) {
  EXPECT_EQ(gemm::EvenBlockLength(300, 256), 150);
  for (const int64_t most : {1, 7, 256, 1024}) {
    for (int64_t total = 1; total <= 3000; ++total) {
      const int64_t len = gemm::EvenBlockLength(total, most);
      const int64_t blocks = gemm::CeilDiv(total, len);
      const std::string what = "total " + std::to_string(total) + " most " + std::to_string(most);
      EXPECT_LE(len, most) << what;
      EXPECT_EQ(blocks, gemm::CeilDiv(total, most)) << what;  // no more blocks than needed
      EXPECT_LT(blocks * len - total, blocks) << what;        // the last is short by < blocks
    }
  }
}

// The in-place row tiles cover each row once, none taller than allowed,
// and a remainder of 1-3 rows is shared with the tile before it (no tile
// under 3 rows unless all the rows are fewer: 7 rows of at most 6 are 4+3),
// so there are as many tiles as without sharing (RowTileCount, which the
// short-A path's InPlaceFetch uses, counts them so).
TEST(RowTiles, CoverEveryRowOnceWithoutShortRemainders) {
  for (const int most : {6, 8}) {
    for (int64_t rows = 0; rows <= 50; ++rows) {
      int64_t next = 0, tiles = 0;
      gemm::ForEachRowTile(0, rows, most, [&](int64_t row, int r) {
        EXPECT_EQ(row, next) << "most " << most << " rows " << rows;
        EXPECT_GE(r, std::min<int64_t>(rows, 3)) << "most " << most << " rows " << rows;
        EXPECT_LE(r, most) << "most " << most << " rows " << rows;
        next = row + r;
        ++tiles;
      });
      EXPECT_EQ(next, rows) << "most " << most;
      EXPECT_EQ(tiles, gemm::CeilDiv(rows, most)) << "most " << most << " rows " << rows;
      EXPECT_EQ(tiles, gemm::RowTileCount(rows, most)) << "most " << most << " rows " << rows;
    }
  }
}

// Packing's transpose (A panels of 6, transposed B panels of NR, im2col):
// every width up to 32 (4 x 4 blocks, a trailing pair, odd widths) and
// depths around the 4-step blocks, on every target, against its definition.
// Rows start at odd offsets: the loads are unaligned, as A's rows often are.
TEST_F(GemmTest, InterleaveRowsTransposesEveryWidthAndDepth) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (int width = 1; width <= 32; ++width) {
      for (int64_t depth = 0; depth <= 13; ++depth) {
        std::vector<std::vector<float>> src(static_cast<size_t>(width));
        std::vector<const float*> rows;
        for (int r = 0; r < width; ++r) {
          for (int64_t k = 0; k < depth + 1; ++k) src[r].push_back(static_cast<float>(r * 100 + k));
          rows.push_back(src[r].data() + 1);  // value of (r, k) is r*100 + k + 1
        }
        // One float past the panel: a store of the last steps must not reach it.
        std::vector<float> dst(static_cast<size_t>(depth * width + 1), -1.0f);
        gemm::InterleaveRowsF32(rows.data(), width, depth, dst.data());
        for (int64_t k = 0; k < depth; ++k) {
          for (int r = 0; r < width; ++r) {
            ASSERT_EQ(dst[static_cast<size_t>(k * width + r)], static_cast<float>(r * 100 + k + 1))
                << target << " width " << width << " depth " << depth << " at k " << k
                << ", row " << r;
          }
        }
        ASSERT_EQ(dst.back(), -1.0f) << target << " width " << width << " depth " << depth
                                     << ": wrote past the panel";
      }
    }
  }
}

// The same for bfloat16 rows (widened one value at a time, A's widths 6
// and 8 by a fixed-width loop): values r + k/4 are exact in bfloat16.
TEST_F(GemmTest, InterleaveRowsWidensBFloat16EveryWidth) {
  for (int width = 1; width <= 12; ++width) {
    for (int64_t depth = 0; depth <= 9; ++depth) {
      std::vector<std::vector<BFloat16>> src(static_cast<size_t>(width));
      std::vector<const BFloat16*> rows;
      for (int r = 0; r < width; ++r) {
        for (int64_t k = 0; k < depth; ++k) {
          src[r].push_back(FromFloat<BFloat16>(static_cast<float>(r) + 0.25f * k));
        }
        rows.push_back(src[r].data());
      }
      std::vector<float> dst(static_cast<size_t>(depth * width + 1), -1.0f);
      gemm::InterleaveRows(rows.data(), width, depth, dst.data());
      for (int64_t k = 0; k < depth; ++k) {
        for (int r = 0; r < width; ++r) {
          ASSERT_EQ(dst[static_cast<size_t>(k * width + r)], static_cast<float>(r) + 0.25f * k)
              << "width " << width << " depth " << depth << " at k " << k << ", row " << r;
        }
      }
      ASSERT_EQ(dst.back(), -1.0f) << "width " << width << " depth " << depth;
    }
  }
}

// The micro-kernel that reads A in place (plain or transposed) leaves in
// its packed panel what MatrixA::Pack writes, in the set's layout
// (APanelIndex; MatrixA::Pack's is kInterleaved), for every tile height and
// depths around the unrolled steps and groups, for both layouts on every
// target. (Through C the GEMM tests only see the panel's effect; this names
// the value that differs.) Rows past m are unspecified by contract and not
// compared.
TEST_F(GemmTest, PackingAKernelPacksAsMatrixAPack) {
  // Room for the tallest tile (MR 12 on AVX-512) below kRow0, plus a row.
  constexpr int64_t kRowsA = 15, kColsA = 40, kRow0 = 2, kCol0 = 3;
  std::vector<float> a(static_cast<size_t>(kRowsA * kColsA));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) + 0.5f;
  auto check = [&](const gemm::MicroKernel& uk, const std::string& set) {
    ASSERT_LE(kRow0 + uk.mr, kRowsA) << set << ": the test's A is shorter than a tile";
    for (bool transposed : {false, true}) {
      const Matrix ma = transposed ? gemm::RowMajor(a.data(), TF_FLOAT, kColsA, kRowsA, true)
                                   : gemm::RowMajor(a.data(), TF_FLOAT, kRowsA, kColsA, false);
      for (int m = 1; m <= uk.mr; ++m) {
        for (int64_t kc : {1, 4, 6, 7, 37}) {
          std::vector<float> expected(static_cast<size_t>(kc * uk.mr));
          gemm::MatrixA(ma).Pack(kRow0, m, kCol0, kc, uk.mr, expected.data());
          std::vector<float> packed(expected.size(), -1.0f);
          std::vector<float> b_panel(static_cast<size_t>(kc * uk.nr), 1.0f);
          std::vector<float> c(static_cast<size_t>(m * uk.nr));
          uk.run_packing_a(kc,
                           static_cast<const float*>(ma.data) + kRow0 * ma.row_stride +
                               kCol0 * ma.col_stride,
                           ma.row_stride, ma.col_stride, packed.data(), b_panel.data(), 0,
                           nullptr, c.data(), uk.nr, m, uk.nr, false);
          for (int64_t k = 0; k < kc; ++k) {
            for (int r = 0; r < m; ++r) {
              const auto at = [&](gemm::APanels layout) {
                return static_cast<size_t>(gemm::APanelIndex(layout, kc, uk.mr, k, r));
              };
              ASSERT_EQ(packed[at(uk.a_panels)], expected[at(gemm::APanels::kInterleaved)])
                  << set << (transposed ? " A^T" : " A") << " m " << m << " kc " << kc
                  << " at k " << k << ", row " << r;
            }
          }
        }
      }
    }
  };
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    const gemm::MicroKernel interleaved = gemm::CurrentMicroKernel(false, gemm::APanels::kInterleaved);
    EXPECT_EQ(interleaved.a_panels, gemm::APanels::kInterleaved) << target;
    check(interleaved, target);
    // Grouped where the target has native FMA (the AVX2 and AVX-512 ones).
    const gemm::MicroKernel grouped = gemm::CurrentMicroKernel(false, gemm::APanels::kGroups);
    EXPECT_EQ(grouped.a_panels == gemm::APanels::kGroups, target.rfind("AVX", 0) == 0) << target;
    check(grouped, target + " (grouped set)");
    // The wide tile (6 x 64 on AVX-512; the tall one elsewhere).
    check(gemm::CurrentMicroKernel(false, gemm::APanels::kInterleaved, gemm::TileShape::kWide),
          target + " (wide)");
    check(gemm::CurrentMicroKernel(false, gemm::APanels::kGroups, gemm::TileShape::kWide),
          target + " (wide, grouped set)");
  }
}

// PackB's layout (vacc_gemm_pack.h) at every panel width the kernels use
// (MR of a transposed A, NR per target, a pair of AVX-512 panels)
// and for depths around its row groups (four rows, or 1 KiB per panel:
// PackedRowsPerPiece), from a block inside a row-major B, last panel
// partial or not: packed value by value, zeros past the block's columns.
TEST(PackB, LaysOutEveryWidthAndDepthAsTheHeaderSays) {
  constexpr int64_t kRows = 80, kCols = 90, kRow0 = 3, kCol0 = 5;
  std::vector<float> b(static_cast<size_t>(kRows * kCols));
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) + 0.25f;
  const Matrix mb = gemm::RowMajor(b.data(), TF_FLOAT, kRows, kCols, false);
  for (int nr : {6, 8, 16, 32, 64}) {
    for (int64_t kc : {1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 71}) {
      for (int64_t nc : {1, 15, 16, 17, 40, 64, 85}) {
        const int64_t panels = (nc + nr - 1) / nr;
        std::vector<float> packed(static_cast<size_t>(panels * kc * nr), -1.0f);
        gemm::PackB(mb, kRow0, kc, kCol0, nc, nr, packed.data());
        for (int64_t p = 0; p < panels; ++p) {
          for (int64_t k = 0; k < kc; ++k) {
            for (int64_t j = 0; j < nr; ++j) {
              const int64_t col = p * nr + j;
              const float want =
                  col < nc ? b[static_cast<size_t>((kRow0 + k) * kCols + kCol0 + col)] : 0.0f;
              ASSERT_EQ(packed[static_cast<size_t>(p * kc * nr + k * nr + j)], want)
                  << "nr " << nr << " kc " << kc << " nc " << nc << " panel " << p << " k " << k
                  << " lane " << j;
            }
          }
        }
      }
    }
  }
}

// The packed kernel's fetch of the next panel into L2 (MicroKernel::run's
// fetch_l2, NextPanelSlice in vacc_gemm.cc) only fetches: the tile it
// computes is bit for bit the one it computes without, full or edge,
// storing or accumulating, at depths around the unrolled steps, on every
// target; and the fetched memory (NaN, so that any use of it as data would
// show in C) is left as it was.
TEST_F(GemmTest, PackedKernelFetchingTheNextPanelComputesTheSameTile) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const gemm::TileShape shape : kTileShapes) {
      const gemm::MicroKernel uk = PackedKernel(shape);
      for (int64_t kc : {1, 4, 7, 37, 64}) {
        std::vector<float> a_panel(static_cast<size_t>(kc * uk.mr));
        std::vector<float> b_panel(static_cast<size_t>(kc * uk.nr));
        for (size_t i = 0; i < a_panel.size(); ++i) a_panel[i] = 0.25f * static_cast<float>(i % 7);
        for (size_t i = 0; i < b_panel.size(); ++i) b_panel[i] = 0.5f - static_cast<float>(i % 5);
        // All the kernel may fetch, and a line more.
        const size_t next_floats =
            static_cast<size_t>(gemm::FetchedFloats(kc) + gemm::kFetchLineFloats);
        const std::vector<float> nan_panel(next_floats, std::numeric_limits<float>::quiet_NaN());
        std::vector<float> next = nan_panel;
        for (int m : {1, uk.mr}) {
          for (int n : {1, uk.nr}) {
            for (bool accumulate : {false, true}) {
              std::vector<float> plain(static_cast<size_t>(uk.mr * uk.nr), 1.0f);
              std::vector<float> fetching = plain;
              uk.run(kc, a_panel.data(), b_panel.data(), plain.data(), uk.nr, m, n, accumulate,
                     nullptr, nullptr);
              uk.run(kc, a_panel.data(), b_panel.data(), fetching.data(), uk.nr, m, n, accumulate,
                     next.data(), nullptr);
              for (size_t i = 0; i < plain.size(); ++i) {
                ASSERT_EQ(std::memcmp(&plain[i], &fetching[i], sizeof(float)), 0)
                    << target << " " << uk.mr << "x" << uk.nr << " kc " << kc << " m " << m << " n "
                    << n << (accumulate ? " accumulating" : "") << ": C[" << i << "] " << plain[i]
                    << " without the fetch, " << fetching[i] << " with it";
              }
              ASSERT_EQ(std::memcmp(next.data(), nan_panel.data(), next_floats * sizeof(float)), 0)
                  << target << " " << uk.mr << "x" << uk.nr << " kc " << kc
                  << ": the fetched panel changed";
            }
          }
        }
      }
    }
  }
}

// The packed kernel's copy of B rows into the next panel (MicroKernel::
// run's copy, NextPanelCopy in vacc_gemm.cc): every row asked for lands in
// the panel's layout and nothing past it is written; the tile is bit for
// bit the one computed without the copy; at depths around the unrolled
// steps, with fewer rows than the k loop has iterations, as many, and more
// (the rest copied after the loop), a row every iteration or every third
// (PanelCopy::every), on every target.
TEST_F(GemmTest, PackedKernelCopyingTheNextPanelComputesTheSameTile) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const gemm::TileShape shape : kTileShapes) {
      const gemm::MicroKernel uk = PackedKernel(shape);
      constexpr int64_t kLdb = 100;  // B's rows, wider than a panel
      for (int64_t kc : {1, 4, 7, 37, 64}) {
        std::vector<float> a_panel(static_cast<size_t>(kc * uk.mr));
        std::vector<float> b_panel(static_cast<size_t>(kc * uk.nr));
        for (size_t i = 0; i < a_panel.size(); ++i) a_panel[i] = 0.25f * static_cast<float>(i % 7);
        for (size_t i = 0; i < b_panel.size(); ++i) b_panel[i] = 0.5f - static_cast<float>(i % 5);
        for (int64_t rows : {int64_t{0}, int64_t{1}, kc / 4, kc / 4 + 1, 2 * kc + 3}) {
          std::vector<float> b(static_cast<size_t>((rows + 1) * kLdb));
          for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) + 0.5f;
          for (int64_t every : {1, 3}) {
            // The destination, 64-byte aligned as a packed panel is, with a
            // row more to show a write past the end.
            std::vector<float> storage(static_cast<size_t>((rows + 1) * uk.nr + 16), -1.0f);
            const uintptr_t misaligned = reinterpret_cast<uintptr_t>(storage.data()) / 4 % 16;
            float* dst = storage.data() + (16 - misaligned) % 16;
            const gemm::PanelCopy copy{b.data() + 3, kLdb, dst, rows, every};
            for (bool accumulate : {false, true}) {
              std::vector<float> plain(static_cast<size_t>(uk.mr * uk.nr), 1.0f);
              std::vector<float> copying = plain;
              uk.run(kc, a_panel.data(), b_panel.data(), plain.data(), uk.nr, uk.mr, uk.nr,
                     accumulate, nullptr, nullptr);
              uk.run(kc, a_panel.data(), b_panel.data(), copying.data(), uk.nr, uk.mr, uk.nr,
                     accumulate, nullptr, &copy);
              ASSERT_EQ(std::memcmp(plain.data(), copying.data(), plain.size() * sizeof(float)), 0)
                  << target << " " << uk.mr << "x" << uk.nr << " kc " << kc << " rows " << rows
                  << " every " << every << ": the copy changed the tile";
              for (int64_t r = 0; r <= rows; ++r) {
                for (int j = 0; j < uk.nr; ++j) {
                  const float expected =
                      r < rows ? b[static_cast<size_t>(r * kLdb + 3 + j)] : -1.0f;
                  ASSERT_EQ(dst[r * uk.nr + j], expected)
                      << target << " " << uk.mr << "x" << uk.nr << " kc " << kc << " rows " << rows
                      << " every " << every << ": panel row " << r << ", column " << j
                      << (r == rows ? " (past the copy)" : "");
                }
              }
            }
          }
        }
      }
    }
  }
}

// The same for the row kernels reading B in place (RowsKernel::
// run_b_in_place and its pairs): fetching the next panel's rows and the
// next tile's A rows (InPlaceFetch in vacc_gemm_small_m.cc) changes no bit
// of the tile, at every height, depths around the unrolled steps, storing
// or accumulating, with more rows to fetch than the tile has steps for;
// and leaves the fetched rows (NaN) as they were.
TEST_F(GemmTest, RowKernelsFetchingTheNextPanelComputeTheSameTile) {
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    const gemm::RowsKernel rk = gemm::CurrentRowsKernel();
    for (const bool pair : {false, true}) {
      const int most = pair ? rk.pair_max_rows : rk.max_rows;
      const int64_t width = (pair ? 2 : 1) * rk.nr, ldb = 3 * rk.nr + 5;
      for (int64_t kc : {1, 2, 3, 37, 64}) {
        const int64_t fetch_rows = gemm::FetchedRows(kc) + 2;
        const std::vector<float> nan_rows(static_cast<size_t>(fetch_rows * ldb),
                                          std::numeric_limits<float>::quiet_NaN());
        std::vector<float> next = nan_rows;
        std::vector<float> b(static_cast<size_t>(kc * ldb));
        for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f - static_cast<float>(i % 5);
        for (int rows = 1; rows <= most; ++rows) {
          const int64_t lda = kc + 3;
          std::vector<float> a(static_cast<size_t>(rows * lda));
          for (size_t i = 0; i < a.size(); ++i) a[i] = 0.25f * static_cast<float>(i % 7);
          auto run = pair ? rk.run_b_in_place_pair[rows] : rk.run_b_in_place[rows];
          for (bool accumulate : {false, true}) {
            std::vector<float> plain(static_cast<size_t>(rows * width), 1.0f);
            std::vector<float> fetching = plain;
            run(kc, a.data(), lda, b.data(), ldb, plain.data(), width, accumulate, nullptr, 0);
            run(kc, a.data(), lda, b.data(), ldb, fetching.data(), width, accumulate, next.data(),
                fetch_rows);
            const std::string what = target + (pair ? " pair" : " single") + " rows " +
                                     std::to_string(rows) + " kc " + std::to_string(kc) +
                                     (accumulate ? " accumulating" : "");
            for (size_t i = 0; i < plain.size(); ++i) {
              ASSERT_EQ(std::memcmp(&plain[i], &fetching[i], sizeof(float)), 0)
                  << what << ": C[" << i << "] " << plain[i] << " without the fetch, "
                  << fetching[i] << " with it";
            }
            ASSERT_EQ(std::memcmp(next.data(), nan_rows.data(), nan_rows.size() * sizeof(float)),
                      0)
                << what << ": the fetched rows changed";
          }
        }
      }
    }
  }
}

// How the short-A path cuts the next B panel among a panel's row tiles
// (InPlaceFetch): consecutive runs from row 0, none longer than a tile
// fetches, none past the panel, and the whole panel when the tiles have
// the steps for it (else as much as they have).
TEST(InPlaceFetch, TilesFetchTheNextPanelInConsecutiveRuns) {
  for (int64_t tiles : {1, 2, 3, 43}) {
    for (int64_t kc : {1, 2, 9, 256, 784}) {
      for (int64_t next_kc : {1, 7, 256, 784, 1024}) {
        const std::string what = std::to_string(tiles) + " tiles of kc " + std::to_string(kc) +
                                 ", next panel " + std::to_string(next_kc) + " rows";
        int64_t covered = 0;
        for (int64_t t = 0; t < tiles; ++t) {
          const gemm::FetchRows f = gemm::InPlaceFetch(t, tiles, next_kc, kc);
          EXPECT_GE(f.count, 0) << what << ", tile " << t;
          EXPECT_LE(f.count, gemm::FetchedRows(kc)) << what << ", tile " << t;
          if (f.count > 0) {
            EXPECT_EQ(f.first, covered) << what << ", tile " << t;
            covered += f.count;
          }
        }
        EXPECT_EQ(covered, std::min(next_kc, tiles * gemm::FetchedRows(kc))) << what;
      }
    }
  }
}

TEST(HalfConversion, RoundsToNearestEven) {
  EXPECT_EQ(FromFloat<BFloat16>(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(FromFloat<BFloat16>(1.00390625f).bits, 0x3f80);
  EXPECT_EQ(FromFloat<BFloat16>(1.01171875f).bits, 0x3f82);  // 1 + 3*2^-8: up to even
  EXPECT_EQ(FromFloat<Half>(1.0f).bits, 0x3c00);
  EXPECT_EQ(FromFloat<Half>(65504.0f).bits, 0x7bff);
  EXPECT_EQ(FromFloat<Half>(65520.0f).bits, 0x7c00);  // rounds up to infinity
  EXPECT_EQ(FromFloat<Half>(5.9604645e-8f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(FromFloat<Half>(-2.0f).bits, 0xc000);
  EXPECT_EQ(ToFloat(Half{0x0001}), 5.9604645e-8f);
  EXPECT_EQ(ToFloat(Half{0x7bff}), 65504.0f);
  EXPECT_TRUE(std::isnan(ToFloat(FromFloat<Half>(std::nanf("")))));
  EXPECT_TRUE(std::isnan(ToFloat(FromFloat<BFloat16>(std::nanf("")))));
}

}  // namespace
}  // namespace vacc
