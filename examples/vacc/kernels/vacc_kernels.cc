// SPDX-License-Identifier: Apache-2.0
//
// TF_InitKernel: TensorFlow calls it once, after SE_InitPlugin, to collect
// the plugin's kernels. Each op family registers its own (vacc_kernel_list.h).
#include "kernels/vacc_kernel_list.h"
#include "tensorflow/c/kernels.h"

extern "C" __attribute__((visibility("default"))) void TF_InitKernel(void) {
  vacc::RegisterElementwiseUnaryKernels();
  vacc::RegisterMatMulKernels();
  vacc::RegisterPoolKernels();
  vacc::RegisterPoolGradKernels();
  vacc::RegisterConvKernels();
  vacc::RegisterElementwiseBinaryKernels();
  vacc::RegisterReduceKernels();
  vacc::RegisterBiasKernels();
  vacc::RegisterSoftmaxKernels();
  vacc::RegisterCastKernels();
  vacc::RegisterShapeKernels();
  vacc::RegisterTransposeKernels();
  vacc::RegisterConcatKernels();
  vacc::RegisterVariableKernels();
}
