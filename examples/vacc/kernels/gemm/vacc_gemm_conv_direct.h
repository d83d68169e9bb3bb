// SPDX-License-Identifier: Apache-2.0
//
// Conv2D forward without gathering patches for most pixels. In NHWC an
// output pixel's receptive field is KH runs of KW*Cin contiguous input
// values (no horizontal dilation), and the pixels of one output row are
// stride_w*Cin values apart: so a tile of up to 6 pixels of a row whose
// patches lie wholly inside the input is an A operand in place, read by the
// segmented RowsKernel. Pixels whose patch touches the padding (the image
// border) run the same way over a small copy of the input columns they
// read, with zeros for the padding: no pixel's patch is gathered.
//
// This matters most where gathering is most of the work: an RGB stem
// (7x7x3 patches, K = 147) spends a third of its time packing A through
// implicit im2col.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_CONV_DIRECT_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_CONV_DIRECT_H_

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/vacc_conv.h"

namespace vacc {
namespace gemm {

// True when DirectConv2D computes this convolution: float32 input, no
// horizontal dilation, a patch of at least one value.
bool DirectConvApplies(const ConvGeometry& g, TF_DataType x_dtype);

// y [N*OH*OW, out_c] = conv(x, filter), filter as the K x out_c matrix `w`
// (any dtype Gemm takes). Split across `units`.
void DirectConv2D(const ConvGeometry& g, const float* x, const Matrix& w, float* y,
                  ComputeUnits* units);

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_CONV_DIRECT_H_
