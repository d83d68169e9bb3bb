// SPDX-License-Identifier: Apache-2.0
//
// vacc's elementwise bodies (kernels/vacc_elementwise.h): every SIMD target
// this machine has against the scalar reference bodies, on odd and tail
// sizes and extreme values; the 16-bit float conversions; broadcasting plans
// and their runs against plain index arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/vacc_broadcast.h"
#include "kernels/vacc_elementwise.h"
#include "kernels/vacc_half.h"
#include "kernels/vacc_simd.h"
#include "vacc_compute_units.h"
#include "vacc_kernel_test_util.h"

namespace vacc {
namespace {

using vacc_test::ForEachSimdTarget;
using vacc_test::Near;
using vacc_test::Values;

struct UnaryCase {
  UnaryOp op;
  const char* name;
  double rel;  // tolerance of SIMD vs scalar (0: exact); the math functions
               // differ from libm by a few ulp, 1e-5 is ~80 ulp of slack
  double abs;
};

const UnaryCase kUnary[] = {
    {UnaryOp::kRelu, "Relu", 0, 0},        {UnaryOp::kRelu6, "Relu6", 0, 0},
    {UnaryOp::kElu, "Elu", 1e-5, 1e-30},   {UnaryOp::kSigmoid, "Sigmoid", 1e-5, 1e-30},
    {UnaryOp::kTanh, "Tanh", 1e-5, 1e-30}, {UnaryOp::kNeg, "Neg", 0, 0},
    {UnaryOp::kExp, "Exp", 1e-5, 1e-30},   {UnaryOp::kLog, "Log", 1e-5, 1e-30},
    {UnaryOp::kSqrt, "Sqrt", 0, 0},        {UnaryOp::kRsqrt, "Rsqrt", 0, 0},
    {UnaryOp::kSquare, "Square", 0, 0},
};

// Sizes around every vector width (4, 8, 16 floats) and the tail paths.
const size_t kSizes[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1027};

// Output buffers for both store kinds, streaming at both widths
// (StreamingWidth: the host picks one, both must give the same values):
// streaming stores need an output aligned to their vector (64 bytes covers
// every target), a misaligned one (by a float, or by 32 bytes for 512-bit
// vectors) must fall back to plain stores.
struct OutputCase {
  Stores stores;
  StreamingWidth width;
  size_t misalign;  // floats past a 64-byte boundary
  const char* name;
};
const OutputCase kOutputs[] = {
    {Stores::kCached, StreamingWidth::kTargetVector, 0, "cached"},
    {Stores::kStreaming, StreamingWidth::kTargetVector, 0, "streaming full width, aligned"},
    {Stores::kStreaming, StreamingWidth::kTargetVector, 1, "streaming full width, misaligned"},
    {Stores::kStreaming, StreamingWidth::kTargetVector, 8, "streaming full width, 32 bytes off"},
    {Stores::kStreaming, StreamingWidth::k256Bit, 0, "streaming 256-bit, aligned"},
    {Stores::kStreaming, StreamingWidth::k256Bit, 8, "streaming 256-bit, 32 bytes off"},
    {Stores::kStreaming, StreamingWidth::k256Bit, 1, "streaming 256-bit, misaligned"}};

// Streaming stores of `width` while in scope; then the host's own again.
class ScopedStreamingWidth {
 public:
  explicit ScopedStreamingWidth(StreamingWidth width) { SetStreamingWidth(width); }
  ~ScopedStreamingWidth() { SetStreamingWidth(saved_); }

 private:
  const StreamingWidth saved_ = CurrentStreamingWidth();
};

// n floats set to `fill` plus one guard element, starting `misalign` floats
// past a 64-byte boundary.
class OutputBuffer {
 public:
  OutputBuffer(size_t n, size_t misalign, float fill) : storage_(n + 1 + 16 + misalign, fill) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + (64 - p % 64) % 64 / sizeof(float) + misalign;
  }
  float* data() { return data_; }
  float& operator[](size_t i) { return data_[i]; }

 private:
  std::vector<float> storage_;
  float* data_;
};

TEST(VaccElementwise, UnaryF32SimdMatchesScalarOnEveryTarget) {
  const std::vector<float> x = Values(1027, -20.0f, 20.0f, true);
  for (const UnaryCase& c : kUnary) {
    SCOPED_TRACE(c.name);
    std::vector<float> want(x.size());
    scalar::UnaryF32(c.op, x.data(), want.data(), x.size());
    ForEachSimdTarget([&](const std::string&) {
      for (const OutputCase& out : kOutputs) {
        SCOPED_TRACE(out.name);
        const ScopedStreamingWidth width(out.width);
        for (size_t n : kSizes) {
          OutputBuffer got(n, out.misalign, 12345.0f);  // the extra element must stay
          UnaryF32(c.op, x.data(), got.data(), n, out.stores);
          for (size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(Near(got[i], want[i], c.rel, c.abs)) << c.name << "(" << x[i] << ") n=" << n;
          }
          EXPECT_EQ(got[n], 12345.0f) << "wrote past n=" << n;
        }
      }
    });
  }
}

TEST(VaccElementwise, UnaryF32KnownValuesAndNaN) {
  // TensorFlow's semantics on the edges, on every target and the scalar body.
  const float x[] = {NAN, -1.0f, 0.0f, 7.0f, -INFINITY, INFINITY};
  auto check = [&](const std::string& target) {
    SCOPED_TRACE(target);
    float y[6];
    UnaryF32(UnaryOp::kRelu, x, y, 6);
    EXPECT_TRUE(std::isnan(y[0]));  // NaN stays NaN
    EXPECT_EQ(y[1], 0.0f);
    EXPECT_EQ(y[3], 7.0f);
    EXPECT_EQ(y[5], INFINITY);
    const float negative_zero = -0.0f;  // x < 0 is false: kept, sign and all
    UnaryF32(UnaryOp::kRelu, &negative_zero, y, 1);
    EXPECT_TRUE(y[0] == 0.0f && std::signbit(y[0]));
    UnaryF32(UnaryOp::kRelu6, &negative_zero, y, 1);
    EXPECT_TRUE(y[0] == 0.0f && std::signbit(y[0]));
    UnaryF32(UnaryOp::kRelu6, x, y, 6);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[3], 6.0f);
    EXPECT_EQ(y[4], 0.0f);
    UnaryF32(UnaryOp::kSigmoid, x, y, 6);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[4], 0.0f);
    EXPECT_EQ(y[5], 1.0f);
    UnaryF32(UnaryOp::kTanh, x, y, 6);
    EXPECT_EQ(y[4], -1.0f);
    EXPECT_EQ(y[5], 1.0f);
    UnaryF32(UnaryOp::kElu, x, y, 6);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[4], -1.0f);
    EXPECT_NEAR(y[1], std::expm1(-1.0f), 1e-6);
    UnaryF32(UnaryOp::kLog, x, y, 6);
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], -INFINITY);
    UnaryF32(UnaryOp::kExp, x, y, 6);
    EXPECT_EQ(y[4], 0.0f);
    EXPECT_EQ(y[5], INFINITY);
  };
  ForEachSimdTarget(check);
  std::string error;
  ASSERT_TRUE(SelectSimd("scalar", &error)) << error;
  check("scalar");
  ASSERT_TRUE(SelectSimd("best", &error)) << error;
}

TEST(VaccElementwise, UnaryI32WrapsLikeTensorFlow) {
  std::vector<int32_t> x = {0, 1, -1, 46341, INT32_MIN, INT32_MAX, -7};
  for (int i = 0; i < 40; ++i) x.push_back(i * 977 - 20000);
  for (UnaryOp op : {UnaryOp::kNeg, UnaryOp::kSquare}) {
    std::vector<int32_t> want(x.size());
    scalar::UnaryI32(op, x.data(), want.data(), x.size());
    EXPECT_EQ(want[2], 1);
    EXPECT_EQ(want[4], op == UnaryOp::kNeg ? INT32_MIN : 0);  // wrapped
    ForEachSimdTarget([&](const std::string&) {
      for (size_t n : kSizes) {
        if (n > x.size()) continue;
        std::vector<int32_t> got(n);
        UnaryI32(op, x.data(), got.data(), n);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "x=" << x[i];
      }
    });
  }
}

struct BinaryCase {
  BinaryOp op;
  const char* name;
  // SIMD vs scalar: one correctly rounded operation is exact; where a
  // target fuses a multiply-add (AVX2's FMA) it rounds once where the scalar
  // body rounds twice: a few ulp of the terms (inputs here are within +-8).
  double rel, abs;
};
const BinaryCase kBinary[] = {
    {BinaryOp::kAdd, "AddV2", 0, 0},         {BinaryOp::kSub, "Sub", 0, 0},
    {BinaryOp::kMul, "Mul", 0, 0},           {BinaryOp::kDiv, "RealDiv", 0, 0},
    {BinaryOp::kMax, "Maximum", 0, 0},       {BinaryOp::kMin, "Minimum", 0, 0},
    {BinaryOp::kSquaredDiff, "SquaredDifference", 0, 0},
    {BinaryOp::kReluGrad, "ReluGrad", 0, 0}, {BinaryOp::kRelu6Grad, "Relu6Grad", 0, 0},
    {BinaryOp::kEluGrad, "EluGrad", 1e-6, 1e-5},
    {BinaryOp::kSigmoidGrad, "SigmoidGrad", 1e-6, 1e-4},
    {BinaryOp::kTanhGrad, "TanhGrad", 1e-6, 1e-4},
};

TEST(VaccElementwise, BinaryF32SimdMatchesScalarInEveryForm) {
  const std::vector<float> a = Values(1027, -8.0f, 8.0f, true, 1);
  std::vector<float> b = Values(1027, -8.0f, 8.0f, false, 2);
  // Extremes against each other too, shifted so every pair meets.
  const std::vector<float> ext = Values(20, 0, 1, true);
  for (size_t i = 0; i < ext.size(); ++i) b[40 + i] = ext[(i + 3) % ext.size()];
  for (const BinaryCase& c : kBinary) {
    for (Operands form : {Operands::kVectorVector, Operands::kScalarVector, Operands::kVectorScalar}) {
      SCOPED_TRACE(std::string(c.name) + " form " + std::to_string(static_cast<int>(form)));
      for (size_t s = 0; s < 4; ++s) {  // scalar operands: a plain value, NaN, -0, inf
        const size_t off = form == Operands::kVectorVector ? 0 : s == 0 ? 30 : s == 1 ? 4 : s == 2 ? 1 : 2;
        const float* pa = form == Operands::kScalarVector ? a.data() + off : a.data();
        const float* pb = form == Operands::kVectorScalar ? a.data() + off : b.data();
        std::vector<float> want(a.size());
        scalar::BinaryF32(c.op, form, pa, pb, want.data(), a.size());
        ForEachSimdTarget([&](const std::string&) {
          for (const OutputCase& out : kOutputs) {
            SCOPED_TRACE(out.name);
            const ScopedStreamingWidth width(out.width);
            for (size_t n : kSizes) {
              OutputBuffer got(n, out.misalign, 12345.0f);
              BinaryF32(c.op, form, pa, pb, got.data(), n, out.stores);
              for (size_t i = 0; i < n; ++i) {
                const float va = form == Operands::kScalarVector ? pa[0] : pa[i];
                const float vb = form == Operands::kVectorScalar ? pb[0] : pb[i];
                ASSERT_TRUE(Near(got[i], want[i], c.rel, c.abs)) << c.name << "(" << va << ", " << vb << ")";
              }
              EXPECT_EQ(got[n], 12345.0f);
            }
          }
        });
        if (form == Operands::kVectorVector) break;
      }
    }
  }
}

TEST(VaccElementwise, MaximumMinimumPropagateNaN) {
  const float a[] = {NAN, 1.0f, 2.0f, -0.0f};
  const float b[] = {1.0f, NAN, 3.0f, 0.0f};
  ForEachSimdTarget([&](const std::string&) {
    float y[4];
    BinaryF32(BinaryOp::kMax, Operands::kVectorVector, a, b, y, 4);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], 3.0f);
    EXPECT_TRUE(y[3] == 0.0f && std::signbit(y[3]));  // a tie keeps a: -0
    BinaryF32(BinaryOp::kMin, Operands::kVectorVector, a, b, y, 4);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_TRUE(std::isnan(y[1]));
    EXPECT_EQ(y[2], 2.0f);
    EXPECT_TRUE(y[3] == 0.0f && std::signbit(y[3]));
  });
}

TEST(VaccElementwise, ActivationGradientsFollowTensorFlowInputOrder) {
  // ReluGrad(gradients, features), EluGrad(gradients, outputs),
  // SigmoidGrad(y, dy), TanhGrad(y, dy).
  const float g[] = {2.0f, 2.0f, 2.0f}, f[] = {-1.0f, 0.5f, 7.0f};
  float y[3];
  BinaryF32(BinaryOp::kReluGrad, Operands::kVectorVector, g, f, y, 3);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(y[2], 2.0f);
  BinaryF32(BinaryOp::kRelu6Grad, Operands::kVectorVector, g, f, y, 3);
  EXPECT_EQ(y[2], 0.0f);
  const float out[] = {-0.5f, 0.0f, 3.0f};
  BinaryF32(BinaryOp::kEluGrad, Operands::kVectorVector, g, out, y, 3);
  EXPECT_EQ(y[0], 1.0f);  // 2 * (-0.5 + 1)
  EXPECT_EQ(y[2], 2.0f);
  const float sy[] = {0.25f, 0.5f, 1.0f}, dy[] = {4.0f, 4.0f, 4.0f};
  BinaryF32(BinaryOp::kSigmoidGrad, Operands::kVectorVector, sy, dy, y, 3);
  EXPECT_EQ(y[0], 0.75f);  // 4 * 0.25 * 0.75
  EXPECT_EQ(y[2], 0.0f);
  BinaryF32(BinaryOp::kTanhGrad, Operands::kVectorVector, sy, dy, y, 3);
  EXPECT_EQ(y[1], 3.0f);  // 4 * (1 - 0.25)
}

TEST(VaccElementwise, BinaryI32SimdMatchesScalar) {
  std::vector<int32_t> a = {INT32_MAX, INT32_MIN, -1, 0, 65536, 46341};
  std::vector<int32_t> b = {1, -1, INT32_MIN, 0, 65536, -46341};
  for (int i = 0; i < 60; ++i) {
    a.push_back(i * 7919 - 200000);
    b.push_back(100000 - i * 104729);
  }
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kMax,
                      BinaryOp::kMin, BinaryOp::kSquaredDiff}) {
    for (Operands form : {Operands::kVectorVector, Operands::kScalarVector, Operands::kVectorScalar}) {
      std::vector<int32_t> want(a.size());
      scalar::BinaryI32(op, form, a.data(), b.data(), want.data(), a.size());
      ForEachSimdTarget([&](const std::string&) {
        for (size_t n : kSizes) {
          if (n > a.size()) continue;
          std::vector<int32_t> got(n);
          BinaryI32(op, form, a.data(), b.data(), got.data(), n);
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << "op " << static_cast<int>(op);
        }
      });
    }
  }
}

TEST(VaccHalf, Bfloat16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(F32ToBf16(1.00390625f), 0x3f80);
  // 1 + 3*2^-8 ties between 1+2^-7 (odd) and 1+2^-6: up.
  EXPECT_EQ(F32ToBf16(1.01171875f), 0x3f82);
  EXPECT_EQ(F32ToBf16(-INFINITY), 0xff80);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(NAN))));
  EXPECT_EQ(F32ToBf16(FLT_MAX), 0x7f80);  // rounds up to inf
  for (uint32_t h = 0; h < 0x10000; ++h) {  // every bfloat16 survives a round trip
    const float f = Bf16ToF32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(F32ToBf16(f), h);
    }
  }
}

TEST(VaccHalf, Float16RoundTripsAndRounds) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // the tie rounds to even: inf
  EXPECT_EQ(F32ToF16(5.9604645e-08f), 0x0001);  // 2^-24, the smallest subnormal
  EXPECT_EQ(F32ToF16(2.9802322e-08f), 0x0000);  // 2^-25: a tie, to even (0)
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(F32ToF16(1.0f + 1.0f / 2048), 0x3c00);  // tie to even
  EXPECT_EQ(F32ToF16(1.0f + 3.0f / 2048), 0x3c02);
  EXPECT_EQ(F16ToF32(0x0001), 5.9604645e-08f);
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (!std::isnan(f)) {
      ASSERT_EQ(F32ToF16(f), h) << std::hex << h;
    } else {
      ASSERT_TRUE(std::isnan(F16ToF32(F32ToF16(f))));
    }
  }
}

TEST(VaccElementwise, HalfTypesComputeInFloatAndRound) {
  // Sigmoid on bfloat16 and half: the float result of the widened input,
  // rounded once (tolerance: one unit in the last place of the type).
  for (TF_DataType t : {TF_BFLOAT16, TF_HALF}) {
    const std::vector<float> x = Values(2000, -6.0f, 6.0f, false);
    std::vector<uint16_t> hx(x.size()), hy(x.size());
    FloatToHalf(t, x.data(), hx.data(), x.size());
    UnaryAny(UnaryOp::kSigmoid, t, hx.data(), hy.data(), x.size());
    std::vector<float> fx(x.size()), fy(x.size());
    HalfToFloat(t, hx.data(), fx.data(), x.size());
    HalfToFloat(t, hy.data(), fy.data(), x.size());
    const double ulp = t == TF_BFLOAT16 ? 1.0 / 128 : 1.0 / 1024;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(Near(fy[i], 1.0f / (1.0f + std::exp(-fx[i])), ulp, 0)) << fx[i];
    }
    // A broadcast scalar through the same blocks.
    const uint16_t two = t == TF_BFLOAT16 ? F32ToBf16(2.0f) : F32ToF16(2.0f);
    BinaryAny(BinaryOp::kMul, Operands::kVectorScalar, t, hx.data(), &two, hy.data(), x.size());
    HalfToFloat(t, hy.data(), fy.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(fy[i], 2.0f * fx[i]);
  }
}

TEST(VaccBroadcast, PlansCollapseDimensions) {
  BroadcastPlan p;
  ASSERT_TRUE(PlanBroadcast({2, 3, 4}, {2, 3, 4}, &p));
  EXPECT_EQ(p.dims, (std::vector<int64_t>{24}));
  ASSERT_TRUE(PlanBroadcast({5, 6, 7}, {7}, &p));  // rows
  EXPECT_EQ(p.dims, (std::vector<int64_t>{30, 7}));
  EXPECT_EQ(p.b_strides, (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(PlanBroadcast({}, {3, 4}, &p));  // a scalar
  EXPECT_EQ(p.dims, (std::vector<int64_t>{12}));
  EXPECT_EQ(p.a_strides, (std::vector<int64_t>{0}));
  ASSERT_TRUE(PlanBroadcast({4, 1}, {1, 5}, &p));  // outer product
  EXPECT_EQ(p.out_shape, (Shape{4, 5}));
  EXPECT_EQ(p.dims, (std::vector<int64_t>{4, 5}));
  EXPECT_FALSE(PlanBroadcast({2, 3}, {4}, &p));
  ASSERT_TRUE(PlanBroadcast({0, 3}, {3}, &p));
  EXPECT_EQ(p.num_elements(), 0u);
}

// The element of `shape` (right-aligned in `out`) that out index `flat` reads.
int64_t SourceIndex(const Shape& shape, const Shape& out, int64_t flat) {
  int64_t src = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t i = flat % out[d];
    flat /= out[d];
    const size_t skip = out.size() - shape.size();
    if (d >= skip) {
      const int64_t dim = shape[d - skip];
      src += (dim == 1 ? 0 : i) * stride;
      stride *= dim;
    }
  }
  return src;
}

TEST(VaccBroadcast, RunsMatchIndexArithmeticOnEveryTarget) {
  const std::pair<Shape, Shape> cases[] = {
      {{3, 1, 5}, {1, 4, 1}}, {{2, 3, 4, 5}, {3, 1, 5}}, {{7, 129}, {129}}, {{129, 1}, {129, 3}},
      {{}, {17}}, {{17}, {}}, {{2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2}}, {{1000, 3}, {1000, 1}},
      {{64, 300}, {64, 300}}, {{1, 1}, {1}}, {{2, 1, 5}, {2, 3, 5}},
  };
  ComputeUnits units(2, std::chrono::microseconds(0));
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(ShapeText(sa) + " vs " + ShapeText(sb));
    BroadcastPlan p;
    ASSERT_TRUE(PlanBroadcast(sa, sb, &p));
    const std::vector<float> a = Values(static_cast<size_t>(NumElements(sa)), -4, 4, false, 3);
    const std::vector<float> b = Values(static_cast<size_t>(NumElements(sb)), -4, 4, false, 4);
    std::vector<float> want(p.num_elements());
    for (size_t i = 0; i < want.size(); ++i) {
      want[i] = a[SourceIndex(sa, p.out_shape, i)] - b[SourceIndex(sb, p.out_shape, i)];
    }
    ForEachSimdTarget([&](const std::string&) {
      std::vector<float> got(want.size(), NAN);
      RunBinary(BinaryOp::kSub, p, TF_FLOAT, a.data(), b.data(), got.data(), units);
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
      // Chunks that start mid-row: every split point gives the same result.
      std::vector<float> piece(want.size(), NAN);
      for (size_t begin = 0; begin < want.size(); begin += 7) {
        const size_t end = begin + 7 < want.size() ? begin + 7 : want.size();
        ForEachRun(p, begin, end, [&](size_t ia, size_t ib, size_t io, size_t n, Operands form) {
          BinaryF32(BinaryOp::kSub, form, a.data() + ia, b.data() + ib, piece.data() + io, n);
        });
      }
      EXPECT_EQ(piece, want);
      // The same pieces as row blocks (ForEachRowBlock, what RunBinary
      // runs): consecutive whole rows merged, one BinaryRowsAny each.
      std::fill(piece.begin(), piece.end(), NAN);
      for (size_t begin = 0; begin < want.size(); begin += 301) {
        const size_t end = begin + 301 < want.size() ? begin + 301 : want.size();
        ForEachRowBlock(p, begin, end,
                        [&](size_t ia, int64_t a_step, size_t ib, int64_t b_step, size_t io,
                            size_t rows, size_t n, Operands form) {
                          BinaryRowsAny(BinaryOp::kSub, form, TF_FLOAT, a.data() + ia, a_step,
                                        b.data() + ib, b_step, piece.data() + io, rows, n);
                        });
      }
      EXPECT_EQ(piece, want);
    });
  }
}

// Row blocks cover exactly the runs ForEachRun gives, in order, and merge
// rows where the steps allow: [7, 129] + [129] is one block of 7 rows
// (b's step 0), [3, 1, 5] - [1, 4, 1] blocks of 4 rows (a's step 0, b's 1),
// [2, 1, 5] - [2, 3, 5] blocks of 3 (where a moves to its next row and b
// keeps its step), and a chunk starting mid-row splits off its partial
// first row.
TEST(VaccBroadcast, RowBlocksMergeWholeRowsAndCoverEveryRun) {
  struct Case {
    Shape a, b;
    size_t begin, end;
    std::vector<size_t> block_rows;
  };
  const Case cases[] = {
      {{7, 129}, {129}, 0, 7 * 129, {7}},
      {{7, 129}, {129}, 100, 7 * 129, {1, 6}},
      {{7, 129}, {129}, 100, 5 * 129 + 3, {1, 4, 1}},
      {{3, 1, 5}, {1, 4, 1}, 0, 60, {4, 4, 4}},
      {{2, 1, 5}, {2, 3, 5}, 0, 30, {3, 3}},  // a's step breaks alone
      {{64, 300}, {64, 300}, 0, 64 * 300, {1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeText(c.a) + " vs " + ShapeText(c.b) + " [" + std::to_string(c.begin) +
                 ", " + std::to_string(c.end) + ")");
    BroadcastPlan p;
    ASSERT_TRUE(PlanBroadcast(c.a, c.b, &p));
    std::vector<std::array<size_t, 4>> runs, expanded;
    ForEachRun(p, c.begin, c.end, [&](size_t ia, size_t ib, size_t io, size_t n, Operands) {
      runs.push_back({ia, ib, io, n});
    });
    std::vector<size_t> rows_seen;
    ForEachRowBlock(p, c.begin, c.end,
                    [&](size_t ia, int64_t a_step, size_t ib, int64_t b_step, size_t io,
                        size_t rows, size_t n, Operands) {
                      rows_seen.push_back(rows);
                      for (size_t r = 0; r < rows; ++r) {
                        const int64_t ri = static_cast<int64_t>(r);
                        expanded.push_back({static_cast<size_t>(static_cast<int64_t>(ia) + ri * a_step),
                                            static_cast<size_t>(static_cast<int64_t>(ib) + ri * b_step),
                                            io + r * n, n});
                      }
                    });
    EXPECT_EQ(expanded, runs);
    EXPECT_EQ(rows_seen, c.block_rows);
  }
}

// Outputs of kStreamingStoreBytes and more are written with streaming
// stores in larger chunks, across the units: in place and out of place, a
// unary op, a same-shape binary op and a bias-like broadcast all match the
// scalar reference (each unit fences its stores before reporting done).
// A row every row of out meets (a bias) is read from a copy when it sits at
// out's offset within a 4 KiB page (RepeatedRowAwayFrom, against 4K
// aliasing). Placed there on purpose: rows of 128, 1024 and 1536 floats
// (copied), 100 (rows at too many offsets: read in place); the repeated row
// as a or as b (Sub tells them apart), cached and streaming stores, every
// target.
TEST(VaccElementwise, RepeatedRowAtOutsPageOffsetMatchesTheReference) {
  constexpr size_t kPage = 4096 / sizeof(float), kRows = 6;
  for (size_t n : {size_t{128}, size_t{1024}, size_t{1536}, size_t{100}}) {
    // Page-aligned slots: the row, the other operand, out.
    std::vector<float> memory((n * (2 * kRows + 1) / kPage + 4) * kPage + kPage);
    float* base = memory.data() + (kPage - reinterpret_cast<uintptr_t>(memory.data()) %
                                               4096 / sizeof(float)) % kPage;
    float* row = base;
    float* other = base + (n / kPage + 1) * kPage;
    float* out = other + (n * kRows / kPage + 1) * kPage;
    const std::vector<float> r = Values(n, -3, 3, false, 8);
    const std::vector<float> o = Values(n * kRows, -3, 3, false, 9);
    std::copy(r.begin(), r.end(), row);
    std::copy(o.begin(), o.end(), other);
    for (bool row_is_a : {true, false}) {
      for (Stores stores : {Stores::kCached, Stores::kStreaming}) {
        SCOPED_TRACE("n " + std::to_string(n) + (row_is_a ? ", row - rows" : ", rows - row") +
                     (stores == Stores::kStreaming ? ", streaming" : ", cached"));
        ForEachSimdTarget([&](const std::string&) {
          std::fill(out, out + n * kRows, NAN);
          BinaryRowsAny(BinaryOp::kSub, Operands::kVectorVector, TF_FLOAT,
                        row_is_a ? row : other, row_is_a ? 0 : static_cast<int64_t>(n),
                        row_is_a ? other : row, row_is_a ? static_cast<int64_t>(n) : 0, out,
                        kRows, n, stores);
          for (size_t i = 0; i < n * kRows; ++i) {
            const float want = row_is_a ? r[i % n] - o[i] : o[i] - r[i % n];
            ASSERT_EQ(out[i], want) << "element " << i;
          }
        });
      }
    }
    EXPECT_TRUE(std::equal(r.begin(), r.end(), row)) << "the row itself is not written";
  }
}

TEST(VaccElementwise, LargeOutputsStreamAndMatchTheReference) {
  ASSERT_EQ(StoresFor(kStreamingStoreBytes - 1), Stores::kCached);
  ASSERT_EQ(StoresFor(kStreamingStoreBytes), Stores::kStreaming);
  // The width measured faster on each vendor's cores (vacc_elementwise.h).
  EXPECT_EQ(CurrentStreamingWidth(),
            HostCpuIsAmd() ? StreamingWidth::k256Bit : StreamingWidth::kTargetVector);
  const size_t channels = 1000;  // rows of 4000 bytes: runs not vector-aligned
  const size_t n = (kStreamingStoreBytes / sizeof(float) / channels + 3) * channels;
  ASSERT_GE(n * sizeof(float), kStreamingStoreBytes);
  const std::vector<float> x = Values(n, -10.0f, 10.0f, false, 5);
  const std::vector<float> bias = Values(channels, -1.0f, 1.0f, false, 6);
  std::vector<float> want_relu(n), want_add(n), want_bias(n);
  scalar::UnaryF32(UnaryOp::kRelu, x.data(), want_relu.data(), n);
  scalar::BinaryF32(BinaryOp::kAdd, Operands::kVectorVector, x.data(), x.data(), want_add.data(), n);
  for (size_t i = 0; i < n; ++i) want_bias[i] = x[i] + bias[i % channels];
  BroadcastPlan same, rows;
  ASSERT_TRUE(PlanBroadcast({static_cast<int64_t>(n)}, {static_cast<int64_t>(n)}, &same));
  ASSERT_TRUE(PlanBroadcast({static_cast<int64_t>(n / channels), static_cast<int64_t>(channels)},
                            {static_cast<int64_t>(channels)}, &rows));
  ComputeUnits units(2, std::chrono::microseconds(0));
  ForEachSimdTarget([&](const std::string&) {
    std::vector<float> got(n, NAN);
    RunUnary(UnaryOp::kRelu, TF_FLOAT, x.data(), got.data(), n, units);
    EXPECT_EQ(got, want_relu) << "Relu";
    std::vector<float> in_place = x;
    RunUnary(UnaryOp::kRelu, TF_FLOAT, in_place.data(), in_place.data(), n, units);
    EXPECT_EQ(in_place, want_relu) << "Relu in place";
    std::fill(got.begin(), got.end(), NAN);
    RunBinary(BinaryOp::kAdd, same, TF_FLOAT, x.data(), x.data(), got.data(), units);
    EXPECT_EQ(got, want_add) << "AddV2";
    std::fill(got.begin(), got.end(), NAN);
    RunBinary(BinaryOp::kAdd, rows, TF_FLOAT, x.data(), bias.data(), got.data(), units);
    EXPECT_EQ(got, want_bias) << "BiasAdd-like rows";
  });
}

}  // namespace
}  // namespace vacc
