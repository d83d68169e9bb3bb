// SPDX-License-Identifier: Apache-2.0
//
// vacc's Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter work (the
// implicit-im2col GEMM on every Highway target, and the scalar bodies)
// against a direct convolution in double written here from the definition,
// over padding/stride/dilation geometries: SAME with even kernels (more
// padding after than before), dilations, explicit padding, strides, 1x1,
// empty tensors, K beyond one KC block.
//
// Tolerances, relative to sum |products| of each output element:
// float32 1e-5 * max(1, K/64); bfloat16 1e-2; half 2e-3 (see test_vacc_gemm.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_conv_winograd.h"
#include "kernels/gemm/vacc_gemm_conv_winograd_s2.h"
#include "kernels/gemm/vacc_gemm_conv_winograd_s2_rows.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "kernels/gemm/vacc_gemm_winograd_s2_transform.h"
#include "kernels/vacc_half.h"
#include "kernels/vacc_conv.h"
#include "kernels/vacc_simd.h"
#include "vacc_compute_units.h"

namespace vacc {
namespace {

struct Case {
  const char* name;
  Shape input;   // NHWC
  Shape filter;  // HWIO
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  Padding padding;
  std::vector<int64_t> pads;  // explicit: top, bottom, left, right
};

const Case kCases[] = {
    {"same_3x3", {1, 5, 5, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, Padding::kSame, {}},
    {"same_even_4x4", {2, 6, 7, 2}, {4, 4, 2, 3}, 1, 1, 1, 1, Padding::kSame, {}},
    {"same_even_2x2_stride2", {1, 7, 6, 3}, {2, 2, 3, 5}, 2, 2, 1, 1, Padding::kSame, {}},
    {"valid_stride_2x3", {1, 7, 9, 3}, {3, 3, 3, 2}, 2, 3, 1, 1, Padding::kValid, {}},
    {"same_dilation_2", {2, 8, 8, 3}, {3, 3, 3, 4}, 1, 1, 2, 2, Padding::kSame, {}},
    {"valid_dilation_2x3", {1, 9, 10, 2}, {2, 3, 2, 3}, 1, 1, 2, 3, Padding::kValid, {}},
    {"explicit_stride_2", {1, 6, 5, 4}, {2, 3, 4, 3}, 2, 2, 1, 1, Padding::kExplicit, {1, 2, 0, 3}},
    {"explicit_dilated", {2, 5, 5, 2}, {3, 2, 2, 2}, 1, 2, 2, 1, Padding::kExplicit, {2, 0, 1, 1}},
    {"1x1_plain_gemm", {2, 4, 4, 8}, {1, 1, 8, 5}, 1, 1, 1, 1, Padding::kValid, {}},
    {"1x1_stride_2", {1, 5, 5, 8}, {1, 1, 8, 5}, 2, 2, 1, 1, Padding::kSame, {}},
    {"stem_7x7_stride_2", {1, 20, 20, 3}, {7, 7, 3, 8}, 2, 2, 1, 1, Padding::kSame, {}},
    {"k_over_kc_5x5x16", {1, 15, 15, 16}, {5, 5, 16, 20}, 2, 2, 1, 1, Padding::kSame, {}},
    {"many_pixels", {3, 17, 19, 5}, {3, 3, 5, 7}, 1, 1, 1, 1, Padding::kSame, {}},
    // Float32 convolutions without horizontal dilation read interior pixels in
    // place (vacc_gemm_conv_direct.h): a kernel row longer than KC (3*100)
    // is split; wide rows give interior runs of every tile size; a filter
    // wider than the input leaves no interior pixel at all.
    {"kernel_row_over_kc", {1, 6, 9, 100}, {3, 3, 100, 20}, 1, 1, 1, 1, Padding::kSame, {}},
    {"wide_rows_stride_3", {2, 7, 40, 3}, {3, 5, 3, 17}, 2, 3, 1, 1, Padding::kSame, {}},
    {"filter_wider_than_input", {1, 6, 3, 2}, {2, 5, 2, 3}, 1, 1, 1, 1, Padding::kSame, {}},
    // Border pixels run over copies of the input columns they read, zeros
    // in the padding (CopyWindow): wide borders make windows of several
    // tiles, padding on one side only leaves the other window empty, and
    // rows that read only padding are zeros between rows that run.
    {"wide_border_seams", {2, 6, 12, 3}, {3, 5, 3, 10}, 1, 1, 1, 1, Padding::kExplicit, {1, 2, 7, 8}},
    {"explicit_right_pad_only", {1, 5, 13, 4}, {3, 3, 4, 9}, 1, 2, 1, 1, Padding::kExplicit, {0, 1, 0, 4}},
    // Rows near the top and bottom run in place over the kernel rows that
    // read the input: with one K block per kernel row (3*50 values), the
    // first block of the top row reads only padding and is skipped; with
    // padding taller than the kernel, whole rows read only padding.
    {"block_per_kernel_row_top_pad", {1, 6, 10, 50}, {3, 3, 50, 7}, 1, 1, 1, 1, Padding::kSame, {}},
    {"pad_taller_than_kernel", {1, 5, 9, 3}, {3, 3, 3, 5}, 1, 1, 1, 1, Padding::kExplicit, {4, 3, 1, 1}},
    {"dilated_rows_in_padding", {2, 9, 11, 2}, {3, 3, 2, 4}, 2, 1, 3, 1, Padding::kExplicit, {5, 4, 1, 2}},
    // 64 output channels and more: on AVX-512 the direct convolution runs
    // pairs of panels as one tile (run_pair) with a filter packed 2*NR
    // wide, then single panels for the rest (100 = a pair, a full panel
    // and 4 columns), also over K blocks that are pieces of a kernel row or
    // are skipped in the top padding.
    {"stem_pairs_64", {1, 20, 20, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    // A row of 35 pixels: several pair tiles side by side in one part (the
    // rows above fit a part in one tile).
    {"stem_pairs_wide_row", {1, 9, 70, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    {"pair_and_singles_100", {2, 9, 11, 5}, {3, 3, 5, 100}, 2, 1, 1, 1, Padding::kSame, {}},
    {"pairs_kernel_row_over_kc", {1, 6, 9, 100}, {3, 3, 100, 130}, 2, 2, 1, 1, Padding::kSame, {}},
    {"pairs_block_per_kernel_row", {1, 6, 10, 50}, {3, 3, 50, 64}, 1, 1, 1, 1, Padding::kSame, {}},
    {"empty_batch", {0, 5, 5, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, Padding::kSame, {}},
    {"empty_cout", {1, 5, 5, 3}, {3, 3, 3, 0}, 1, 1, 1, 1, Padding::kSame, {}},
    {"empty_cin", {1, 5, 5, 0}, {3, 3, 0, 4}, 1, 1, 1, 1, Padding::kSame, {}},
    {"valid_too_small", {1, 2, 2, 1}, {3, 3, 1, 1}, 1, 1, 1, 1, Padding::kValid, {}},
};

ConvGeometry GeometryOf(const Case& c) {
  ConvGeometry g;
  g.batch = c.input[0];
  g.in_h = c.input[1];
  g.in_w = c.input[2];
  g.in_c = c.input[3];
  g.k_h = c.filter[0];
  g.k_w = c.filter[1];
  g.out_c = c.filter[3];
  g.stride_h = c.stride_h;
  g.stride_w = c.stride_w;
  g.dilation_h = c.dilation_h;
  g.dilation_w = c.dilation_w;
  std::string error;
  EXPECT_TRUE(ComputeConvOutput(c.padding, c.pads, &g, &error)) << c.name << ": " << error;
  return g;
}

// Values exact in every dtype (multiples of 1/8 in [-1, 1]).
struct Buffer {
  TF_DataType dtype;
  Shape shape;
  std::vector<float> f32;
  std::vector<uint16_t> bits;
  Buffer(TF_DataType t, const Shape& s, std::mt19937* rng) : dtype(t), shape(s) {
    std::uniform_int_distribution<int> dist(-8, 8);
    for (int64_t i = 0; i < NumElements(s); ++i) {
      const float v = static_cast<float>(dist(*rng)) / 8.0f;
      if (t == TF_FLOAT) f32.push_back(v);
      else bits.push_back(t == TF_BFLOAT16 ? FromFloat<BFloat16>(v).bits : FromFloat<Half>(v).bits);
    }
    if (t == TF_FLOAT) f32.resize(static_cast<size_t>(NumElements(s)) + 1);  // never empty
    else bits.resize(static_cast<size_t>(NumElements(s)) + 1);
  }
  Tensor tensor() {
    return Tensor{dtype, shape, dtype == TF_FLOAT ? static_cast<void*>(f32.data()) : bits.data()};
  }
  double at(int64_t i) const { return gemm::LoadAsFloat(dtype == TF_FLOAT ? static_cast<const void*>(f32.data()) : bits.data(), dtype, i); }
};

double Tolerance(TF_DataType t, int64_t k) {
  if (t == TF_BFLOAT16) return 1e-2;
  if (t == TF_HALF) return 2e-3;
  return 1e-5 * std::max<double>(1.0, static_cast<double>(k) / 64.0);
}

// Direct convolution: calls visit(x index, w index, y index) for every
// product term of the definition.
template <typename F>
void ForEachTerm(const ConvGeometry& g, F&& visit) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t kh = 0; kh < g.k_h; ++kh)
          for (int64_t kw = 0; kw < g.k_w; ++kw) {
            const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
            const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
            if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
            for (int64_t ci = 0; ci < g.in_c; ++ci)
              for (int64_t co = 0; co < g.out_c; ++co)
                visit(((n * g.in_h + ih) * g.in_w + iw) * g.in_c + ci,
                      ((kh * g.k_w + kw) * g.in_c + ci) * g.out_c + co,
                      ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + co);
          }
}

void Compare(const std::string& what, const Buffer& got, const std::vector<double>& exact,
             const std::vector<double>& magnitude, double tol) {
  int failures = 0;
  for (size_t i = 0; i < exact.size() && failures < 5; ++i) {
    const double bound = tol * std::max(magnitude[i], 1.0);
    const double v = got.at(static_cast<int64_t>(i));
    if (!(std::fabs(v - exact[i]) <= bound)) {
      ADD_FAILURE() << what << ": element " << i << " = " << v << ", expected " << exact[i]
                    << " (bound " << bound << ")";
      ++failures;
    }
  }
}

void CheckCase(const Case& c, TF_DataType t, ComputeUnits& units, const std::string& target) {
  const ConvGeometry g = GeometryOf(c);
  const std::string what = std::string(c.name) + " " + DataTypeName(t) + " on " + target;
  std::mt19937 rng(7);
  Buffer x(t, g.InputShape(), &rng), w(t, g.FilterShape(), &rng), dy(t, g.OutputShape(), &rng);
  const double tol = Tolerance(t, g.k_h * g.k_w * g.in_c);

  std::vector<double> y_ref(static_cast<size_t>(NumElements(g.OutputShape()))), y_mag(y_ref.size());
  std::vector<double> dx_ref(static_cast<size_t>(NumElements(g.InputShape()))), dx_mag(dx_ref.size());
  std::vector<double> dw_ref(static_cast<size_t>(NumElements(g.FilterShape()))), dw_mag(dw_ref.size());
  ForEachTerm(g, [&](int64_t xi, int64_t wi, int64_t yi) {
    const double p = x.at(xi) * w.at(wi), q = dy.at(yi) * w.at(wi), r = x.at(xi) * dy.at(yi);
    y_ref[yi] += p;
    y_mag[yi] += std::fabs(p);
    dx_ref[xi] += q;
    dx_mag[xi] += std::fabs(q);
    dw_ref[wi] += r;
    dw_mag[wi] += std::fabs(r);
  });

  // Outputs start as NaN: every element must be written.
  auto fresh = [&](const Shape& s) {
    Buffer b(t, s, &rng);
    for (float& v : b.f32) v = std::nanf("");
    for (uint16_t& v : b.bits) v = 0x7fc0;  // NaN in bf16 and half alike
    return b;
  };
  Buffer y = fresh(g.OutputShape()), dx = fresh(g.InputShape()), dw = fresh(g.FilterShape());
  ASSERT_TRUE(Conv2DWork(g, x.tensor(), w.tensor(), y.tensor(), units).ok());
  ASSERT_TRUE(Conv2DBackpropInputWork(g, dy.tensor(), w.tensor(), dx.tensor(), units).ok());
  ASSERT_TRUE(Conv2DBackpropFilterWork(g, x.tensor(), dy.tensor(), dw.tensor(), units).ok());
  Compare(what + " Conv2D", y, y_ref, y_mag, tol);
  // The gradients sum over N*OH*OW or KH*KW*Cout terms: scale float32's bound by those.
  Compare(what + " Conv2DBackpropInput", dx, dx_ref, dx_mag,
          t == TF_FLOAT ? 1e-5 * std::max<double>(1.0, g.k_h * g.k_w * g.out_c / 64.0) : tol);
  Compare(what + " Conv2DBackpropFilter", dw, dw_ref, dw_mag,
          t == TF_FLOAT ? 1e-5 * std::max<double>(1.0, g.batch * g.out_h * g.out_w / 64.0) : tol);
}

class ConvTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::string error;
    SelectSimd("best", &error);
  }
  static std::vector<std::string> Bodies() {
    std::vector<std::string> all = AvailableSimdTargets();
    all.push_back("scalar");
    return all;
  }
  static void Select(const std::string& target) {
    std::string error;
    ASSERT_TRUE(SelectSimd(target, &error)) << error;
  }
};

TEST_F(ConvTest, Float32EveryGeometryEveryBody) {
  ComputeUnits units(2, std::chrono::microseconds(50));
  for (const std::string& body : Bodies()) {
    Select(body);
    for (const Case& c : kCases) CheckCase(c, TF_FLOAT, units, body);
  }
}

TEST_F(ConvTest, HalfTypesOnBestAndScalar) {
  ComputeUnits units(3, std::chrono::microseconds(50));
  for (const std::string body : {"best", "scalar"}) {
    Select(body);
    for (TF_DataType t : {TF_BFLOAT16, TF_HALF}) {
      for (const Case& c : kCases) CheckCase(c, t, units, body);
    }
  }
}

// The cases above use values exact in every dtype, so any path computes
// them almost exactly; here values are arbitrary floats, so this measures
// rounding. Winograd's transforms sum several inputs (V) and filter taps
// (U) before multiplying, which could make its error a few times a direct
// sum's; it must stay within float32's tolerance, unscaled by K (1e-5 of
// sum |x * w|). Measured 1e-7 on every SIMD target, 2e-7 for the scalar
// reference's sequential sums (the test prints it).
void ExpectRoundingWithinFloat32(const ConvGeometry& g, const std::vector<std::string>& bodies) {
  ComputeUnits units(2, std::chrono::microseconds(50));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(NumElements(g.InputShape()))),
      w(static_cast<size_t>(NumElements(g.FilterShape()))),
      y(static_cast<size_t>(NumElements(g.OutputShape())));
  for (float& v : x) v = dist(rng);
  for (float& v : w) v = dist(rng);
  std::vector<double> exact(y.size()), magnitude(y.size());
  ForEachTerm(g, [&](int64_t xi, int64_t wi, int64_t yi) {
    const double p = static_cast<double>(x[static_cast<size_t>(xi)]) * w[static_cast<size_t>(wi)];
    exact[static_cast<size_t>(yi)] += p;
    magnitude[static_cast<size_t>(yi)] += std::fabs(p);
  });
  for (const std::string& body : bodies) {
    std::string error;
    ASSERT_TRUE(SelectSimd(body, &error)) << error;
    std::fill(y.begin(), y.end(), std::nanf(""));
    ASSERT_TRUE(Conv2DWork(g, Tensor{TF_FLOAT, g.InputShape(), x.data()},
                           Tensor{TF_FLOAT, g.FilterShape(), w.data()},
                           Tensor{TF_FLOAT, g.OutputShape(), y.data()}, units)
                    .ok());
    double worst = 0.0;
    for (size_t i = 0; i < y.size(); ++i) {
      const double relative = std::fabs(y[i] - exact[i]) / magnitude[i];
      worst = std::isnan(relative) ? INFINITY : std::max(worst, relative);
    }
    EXPECT_LE(worst, 1e-5) << "on " << body;
    ::testing::Test::RecordProperty("worst_relative_error_" + body, std::to_string(worst));
    std::printf("worst |y - exact| / sum|x w| on %s: %.2g\n", body.c_str(), worst);
  }
}

TEST_F(ConvTest, Float32WinogradRoundingOnArbitraryValues) {
  ConvGeometry g;
  g.batch = 4; g.in_h = 14; g.in_w = 13; g.in_c = 64; g.k_h = g.k_w = 3; g.out_c = 48;
  std::string error;
  ASSERT_TRUE(ComputeConvOutput(Padding::kSame, {}, &g, &error)) << error;
  ASSERT_TRUE(gemm::WinogradConvApplies(g, TF_FLOAT));
  ExpectRoundingWithinFloat32(g, Bodies());
}

// The same for the stride-2 Winograds, whose transforms scale and sum
// several terms: a 7x7 stride-2 RGB stem of 64 channels on a 64x64 image
// (256 2x2 tiles; rows of 8 4-pixel tiles). The 2-D F(2x2, 4x4)
// (vacc_gemm_conv_winograd_s2.h) runs where the target has the pair
// kernels (AVX-512), F(4, 4) along rows (vacc_gemm_conv_winograd_s2_rows.h)
// on AVX2, the direct path on the others. Measured 4e-7 on AVX3, 5.9e-7 on
// AVX2, against 2.1e-7 for the direct path and the scalar reference (the
// test prints it).
TEST_F(ConvTest, Float32Stride2WinogradRoundingOnArbitraryValues) {
  ConvGeometry g;
  g.batch = 1; g.in_h = g.in_w = 64; g.in_c = 3; g.k_h = g.k_w = 7; g.out_c = 64;
  g.stride_h = g.stride_w = 2;
  std::string error;
  ASSERT_TRUE(ComputeConvOutput(Padding::kSame, {}, &g, &error)) << error;
  ExpectRoundingWithinFloat32(g, Bodies());
}

// conv(g, x, w, y), a path called directly, on case c's random values
// against the exact sums (float32's tolerance for KH*KW*Cin terms); every
// output element must be written.
template <class Conv>
void CheckCalledDirectly(const Case& c, const std::string& what, Conv&& conv) {
  const ConvGeometry g = GeometryOf(c);
  std::mt19937 rng(5);
  Buffer x(TF_FLOAT, g.InputShape(), &rng), w(TF_FLOAT, g.FilterShape(), &rng);
  std::vector<double> exact(static_cast<size_t>(NumElements(g.OutputShape()))),
      magnitude(exact.size());
  ForEachTerm(g, [&](int64_t xi, int64_t wi, int64_t yi) {
    const double p = x.at(xi) * w.at(wi);
    exact[static_cast<size_t>(yi)] += p;
    magnitude[static_cast<size_t>(yi)] += std::fabs(p);
  });
  Buffer y(TF_FLOAT, g.OutputShape(), &rng);
  std::fill(y.f32.begin(), y.f32.end(), std::nanf(""));
  conv(g, x.f32.data(), w.f32.data(), y.f32.data());
  Compare(what, y, exact, magnitude, Tolerance(TF_FLOAT, g.k_h * g.k_w * g.in_c));
}

// Winograd's F(2x2, 3x3) (vacc_gemm_conv_winograd.h), called directly:
// Conv2D routes only large convolutions to it, which would make these
// checks slow, but it is right for any 3x3 stride-1 shape. Odd output
// sizes leave half tiles, channels not a multiple of a vector leave a
// scalar tail, Cin beyond KC is two K blocks, 300 x 70 channels are three
// column chunks (the last of 6 columns), Cout of 16 takes the half-width
// kernels, 330 tiles of 16 channels are two blocks, and a 1x1 output is
// one tile of which three pixels fall past the edge.
const Case kWinogradCases[] = {
    {"same_odd", {2, 7, 9, 19}, {3, 3, 19, 40}, 1, 1, 1, 1, Padding::kSame, {}},
    {"valid", {1, 8, 11, 24}, {3, 3, 24, 33}, 1, 1, 1, 1, Padding::kValid, {}},
    {"explicit", {1, 5, 6, 16}, {3, 3, 16, 16}, 1, 1, 1, 1, Padding::kExplicit, {2, 0, 1, 3}},
    {"k_blocks_and_chunks", {1, 4, 5, 300}, {3, 3, 300, 70}, 1, 1, 1, 1, Padding::kSame, {}},
    {"blocks", {3, 20, 22, 16}, {3, 3, 16, 16}, 1, 1, 1, 1, Padding::kSame, {}},
    {"one_pixel", {1, 1, 1, 5}, {3, 3, 5, 3}, 1, 1, 1, 1, Padding::kSame, {}},
};

TEST_F(ConvTest, WinogradEveryShapeEveryTarget) {
  ComputeUnits units(2, std::chrono::microseconds(50));
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    for (const Case& c : kWinogradCases) {
      CheckCalledDirectly(c, std::string("Winograd ") + c.name + " on " + target,
                          [&](const ConvGeometry& g, const float* x, const float* w, float* y) {
                            gemm::WinogradConv2D(g, x, w, y, &units);
                          });
    }
  }
}

// n square images of hw x hw x cin, SAME padding, a k x k filter to cout
// channels: what the "which convolutions take a path" tests ask about.
ConvGeometry SquareSameGeometry(int64_t n, int64_t hw, int64_t cin, int64_t cout, int64_t k,
                                int64_t stride, int64_t dilation) {
  ConvGeometry g;
  g.batch = n; g.in_h = g.in_w = hw; g.in_c = cin; g.out_c = cout;
  g.k_h = g.k_w = k; g.stride_h = g.stride_w = stride;
  g.dilation_h = g.dilation_w = dilation;
  std::string error;
  EXPECT_TRUE(ComputeConvOutput(Padding::kSame, {}, &g, &error)) << error;
  return g;
}

// The same for one image.
ConvGeometry OneImageGeometry(int64_t hw, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                              int64_t dilation) {
  return SquareSameGeometry(1, hw, cin, cout, k, stride, dilation);
}

// Which convolutions Conv2D gives Winograd: float32 3x3 stride 1, with
// enough channels and tiles to pay for the transforms.
TEST(ConvPathTest, WinogradTakesLargeFloat3x3Stride1Only) {
  auto geometry = SquareSameGeometry;
  EXPECT_TRUE(gemm::WinogradConvApplies(geometry(8, 56, 64, 64, 3, 1, 1), TF_FLOAT));
  EXPECT_TRUE(gemm::WinogradConvApplies(geometry(4, 7, 512, 512, 3, 1, 1), TF_FLOAT));
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(8, 56, 64, 64, 3, 1, 1), TF_BFLOAT16));
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(8, 56, 64, 64, 3, 2, 1), TF_FLOAT));
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(8, 56, 64, 64, 3, 1, 2), TF_FLOAT));
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(8, 56, 64, 64, 5, 1, 1), TF_FLOAT));
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(8, 56, 8, 8, 3, 1, 1), TF_FLOAT));   // channels
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(2, 7, 512, 512, 3, 1, 1), TF_FLOAT)); // 32 tiles
  EXPECT_FALSE(gemm::WinogradConvApplies(geometry(1, 16, 64, 64, 3, 1, 1), TF_FLOAT));  // 64 x 64
}

// The stride-2 Winograd (vacc_gemm_conv_winograd_s2.h), called directly on
// every target that has what it needs (the pair kernels and 4 Cin lanes:
// AVX-512): odd output sizes leave half tiles and tiles reading past the
// image on two sides, VALID and explicit padding move the phases, 128
// channels are two pairs of panels, one and two input channels leave
// phase lanes unused, 240 tiles are ten blocks (the last partial), and a
// 2x1 output is one tile with two pixels past the edge.
const Case kStride2WinogradCases[] = {
    {"same_odd", {2, 21, 23, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    {"valid", {1, 27, 30, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kValid, {}},
    {"explicit_128", {1, 20, 22, 4}, {7, 7, 4, 128}, 2, 2, 1, 1, Padding::kExplicit, {3, 0, 1, 4}},
    {"one_channel", {1, 16, 16, 1}, {7, 7, 1, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    {"blocks", {1, 61, 58, 2}, {7, 7, 2, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    {"one_tile", {1, 3, 2, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kSame, {}},
};

// Every case on every target where `runs(g)` says the path can: `conv`
// called directly against the exact sums. Returns how many ran.
template <size_t kCount, class Runs, class Conv>
int CheckOnEveryTarget(const Case (&cases)[kCount], const std::string& path, Runs&& runs,
                       Conv&& conv) {
  int ran = 0;
  for (const std::string& target : AvailableSimdTargets()) {
    std::string error;
    EXPECT_TRUE(SelectSimd(target, &error)) << error;
    for (const Case& c : cases) {
      if (!runs(GeometryOf(c))) continue;
      ++ran;
      CheckCalledDirectly(c, path + " " + c.name + " on " + target, conv);
    }
  }
  return ran;
}

TEST_F(ConvTest, Stride2WinogradEveryShapeEveryTarget) {
  ComputeUnits units(2, std::chrono::microseconds(50));
  const int ran = CheckOnEveryTarget(
      kStride2WinogradCases, "stride-2 Winograd",
      [](const ConvGeometry& g) {
        return gemm::CurrentRowsKernel().pair_max_rows > 0 &&
               4 * g.in_c <= gemm::Stride2MaxPhaseChannels();
      },
      [&](const ConvGeometry& g, const float* x, const float* w, float* y) {
        gemm::Stride2WinogradConv2D(g, x, w, y, &units);
      });
  if (ran == 0) GTEST_SKIP() << "no SIMD target here has the pair kernels (AVX-512)";
}

// What neither stride-2 Winograd takes, on any target: another dtype,
// stride 1, a 5x5 filter, dilation, 5 input channels.
void ExpectNotStride2WinogradShapes(bool (*applies)(const ConvGeometry&, TF_DataType)) {
  EXPECT_FALSE(applies(OneImageGeometry(224, 3, 64, 7, 2, 1), TF_HALF));
  EXPECT_FALSE(applies(OneImageGeometry(224, 3, 64, 7, 1, 1), TF_FLOAT));
  EXPECT_FALSE(applies(OneImageGeometry(224, 3, 64, 5, 2, 1), TF_FLOAT));
  EXPECT_FALSE(applies(OneImageGeometry(224, 3, 64, 7, 2, 2), TF_FLOAT));
  EXPECT_FALSE(applies(OneImageGeometry(224, 5, 64, 7, 2, 1), TF_FLOAT));
}

// Which convolutions Conv2D gives the stride-2 Winograd: float32 7x7
// stride 2 without dilation, 1-4 input channels, output channels in whole
// pairs of panels, at least 64 tiles; only on a target with the pair
// kernels, on AMD.
TEST_F(ConvTest, Stride2WinogradTakesLargeFloat7x7Stride2Only) {
  auto geometry = OneImageGeometry;
  Select("best");
  const gemm::RowsKernel kernel = gemm::CurrentRowsKernel();
  const bool pairs = kernel.pair_max_rows > 0 && HostCpuIsAmd();
  EXPECT_EQ(gemm::Stride2WinogradConvApplies(geometry(224, 3, 64, 7, 2, 1), TF_FLOAT), pairs);
  EXPECT_EQ(gemm::Stride2WinogradConvApplies(geometry(32, 4, 128, 7, 2, 1), TF_FLOAT), pairs);
  ExpectNotStride2WinogradShapes(gemm::Stride2WinogradConvApplies);
  EXPECT_FALSE(gemm::Stride2WinogradConvApplies(geometry(224, 3, 48, 7, 2, 1), TF_FLOAT));
  // 14 x 14 outputs are 49 tiles, 16 x 16 are 64.
  EXPECT_FALSE(gemm::Stride2WinogradConvApplies(geometry(28, 3, 64, 7, 2, 1), TF_FLOAT));
  EXPECT_EQ(gemm::Stride2WinogradConvApplies(geometry(32, 3, 64, 7, 2, 1), TF_FLOAT), pairs);
}

// The stride-2 Winograd along output rows (vacc_gemm_conv_winograd_s2_rows.h),
// called directly on every target whose vectors hold 2 Cin phase channels:
// output widths that are not multiples of 4 leave tiles of 1-3 pixels,
// tiles read past the image on both sides, VALID and explicit padding move
// the phases, 3 bands of 8 output rows (the last partial) read padding
// rows at the top and bottom, Cout of 40 leaves a partial panel and a
// scalar tail in the transforms, and one and two input channels leave
// phase lanes unused. Row tiles run as 6s and 5s or 7s (28 tiles) and
// shorter (2-7 tiles).
const Case kStride2RowWinogradCases[] = {
    {"same_odd", {2, 37, 45, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kSame, {}},
    {"valid", {1, 27, 40, 3}, {7, 7, 3, 64}, 2, 2, 1, 1, Padding::kValid, {}},
    {"explicit_40", {1, 20, 50, 4}, {7, 7, 4, 40}, 2, 2, 1, 1, Padding::kExplicit, {3, 0, 1, 4}},
    {"one_channel", {1, 16, 32, 1}, {7, 7, 1, 16}, 2, 2, 1, 1, Padding::kSame, {}},
    {"two_channels_28_tiles", {1, 9, 224, 2}, {7, 7, 2, 24}, 2, 2, 1, 1, Padding::kSame, {}},
};

TEST_F(ConvTest, Stride2RowWinogradEveryShapeEveryTarget) {
  ComputeUnits units(2, std::chrono::microseconds(50));
  const int ran = CheckOnEveryTarget(
      kStride2RowWinogradCases, "stride-2 row Winograd",
      [](const ConvGeometry& g) { return 2 * g.in_c <= gemm::Stride2RowMaxPhaseChannels(); },
      [&](const ConvGeometry& g, const float* x, const float* w, float* y) {
        gemm::Stride2RowWinogradConv2D(g, x, w, y, &units);
      });
  if (ran == 0) GTEST_SKIP() << "no SIMD target here holds 2 Cin phase channels in a vector";
}

// The row Winograd's tiles of an output row cover it at each target's
// tallest tile (6 with 16 vector registers, 8 with AVX-512's 32: with 8 it
// once kept only the 6s and dropped the rest), in as few tiles as tiles
// of that height need, heights at most one apart. Checked here on every
// machine, not only where the AVX-512 kernels run.
TEST(Stride2RowTileHeights, CoverTheRowEvenlyAtEachTallestTile) {
  for (const int most : {6, 8}) {
    for (int64_t tiles = 0; tiles <= 60; ++tiles) {
      const std::string what = "most " + std::to_string(most) + " tiles " + std::to_string(tiles);
      const std::vector<int> heights = gemm::Stride2RowTileHeights(tiles, most);
      EXPECT_EQ(static_cast<int64_t>(heights.size()), gemm::CeilDiv(tiles, int64_t{most})) << what;
      int64_t sum = 0;
      for (const int h : heights) {
        EXPECT_GE(h, 1) << what;
        EXPECT_LE(h, most) << what;
        EXPECT_LE(h - heights.back(), 1) << what;
        sum += h;
      }
      EXPECT_EQ(sum, tiles) << what;
    }
  }
  EXPECT_EQ(gemm::Stride2RowTileHeights(28, 6), (std::vector<int>{6, 6, 6, 5, 5}));  // the stem
  EXPECT_EQ(gemm::Stride2RowTileHeights(28, 8), (std::vector<int>{7, 7, 7, 7}));
}

// Which convolutions the stride-2 row Winograd takes: those of the 2-D
// one's shape (float32 7x7 stride 2, no dilation) on a target with 2 Cin
// lanes, with rows of at least 8 tiles (Conv2D asks the 2-D one first).
TEST_F(ConvTest, Stride2RowWinogradTakesFloat7x7Stride2Only) {
  auto geometry = OneImageGeometry;
  for (const std::string& target : AvailableSimdTargets()) {
    Select(target);
    SCOPED_TRACE(target);
    const bool lanes = 6 <= gemm::Stride2RowMaxPhaseChannels();  // 2 Cin at RGB
    EXPECT_EQ(gemm::Stride2RowWinogradConvApplies(geometry(224, 3, 64, 7, 2, 1), TF_FLOAT), lanes);
    EXPECT_EQ(gemm::Stride2RowWinogradConvApplies(geometry(224, 3, 48, 7, 2, 1), TF_FLOAT), lanes);
    ExpectNotStride2WinogradShapes(gemm::Stride2RowWinogradConvApplies);
    // 60 x 60 inputs give rows of 30 outputs, 8 tiles of 4; 56 x 56, 7.
    EXPECT_FALSE(gemm::Stride2RowWinogradConvApplies(geometry(56, 3, 64, 7, 2, 1), TF_FLOAT));
    EXPECT_EQ(gemm::Stride2RowWinogradConvApplies(geometry(60, 3, 64, 7, 2, 1), TF_FLOAT), lanes);
  }
}

TEST(ConvGeometryTest, TensorFlowsPaddingRules) {
  ConvGeometry g;
  std::string error;
  // SAME, even kernel: 3 padding rows needed, 1 before and 2 after.
  g.in_h = 5; g.in_w = 6; g.k_h = 4; g.k_w = 2; g.stride_h = 1; g.stride_w = 2;
  ASSERT_TRUE(ComputeConvOutput(Padding::kSame, {}, &g, &error)) << error;
  EXPECT_EQ(g.out_h, 5);
  EXPECT_EQ(g.pad_top, 1);
  EXPECT_EQ(g.out_w, 3);   // ceil(6 / 2)
  EXPECT_EQ(g.pad_left, 0);  // (3-1)*2 + 2 - 6 = 0
  // VALID with dilation: effective filter (3-1)*2+1 = 5.
  g = ConvGeometry{};
  g.in_h = 9; g.in_w = 4; g.k_h = 3; g.k_w = 1; g.dilation_h = 2;
  ASSERT_TRUE(ComputeConvOutput(Padding::kValid, {}, &g, &error)) << error;
  EXPECT_EQ(g.out_h, 5);
  EXPECT_EQ(g.out_w, 4);
  // EXPLICIT: (6 + 1 + 2 - 2 + 2) / 2 = 4.
  g = ConvGeometry{};
  g.in_h = 6; g.in_w = 1; g.k_h = 2; g.k_w = 1; g.stride_h = 2;
  ASSERT_TRUE(ComputeConvOutput(Padding::kExplicit, {1, 2, 0, 0}, &g, &error)) << error;
  EXPECT_EQ(g.out_h, 4);
  EXPECT_EQ(g.pad_top, 1);
  // A filter much larger than the input: negative, an error naming sizes.
  g = ConvGeometry{};
  g.in_h = 2; g.in_w = 2; g.k_h = 5; g.k_w = 1;
  EXPECT_FALSE(ComputeConvOutput(Padding::kValid, {}, &g, &error));
  EXPECT_NE(error.find("height"), std::string::npos) << error;
}

}  // namespace
}  // namespace vacc
