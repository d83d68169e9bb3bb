// SPDX-License-Identifier: Apache-2.0
//
// Every op family's registration function, called by TF_InitKernel. One
// family per file; add yours here and in vacc_kernels.cc.
#ifndef VACC_KERNELS_VACC_KERNEL_LIST_H_
#define VACC_KERNELS_VACC_KERNEL_LIST_H_

namespace vacc {

void RegisterElementwiseUnaryKernels();  // vacc_elementwise_unary.cc
void RegisterMatMulKernels();            // vacc_matmul.cc: MatMul, BatchMatMulV2
void RegisterPoolKernels();              // vacc_pool.cc
void RegisterPoolGradKernels();          // vacc_pool_grad.cc
void RegisterConvKernels();              // vacc_conv_kernels.cc: Conv2D and its gradients
void RegisterElementwiseBinaryKernels();  // vacc_elementwise_binary.cc
void RegisterReduceKernels();            // vacc_reduce.cc
void RegisterBiasKernels();              // vacc_bias.cc
void RegisterSoftmaxKernels();           // vacc_softmax.cc
void RegisterCastKernels();              // vacc_cast.cc
void RegisterShapeKernels();             // vacc_shape_ops.cc
void RegisterTransposeKernels();         // vacc_transpose.cc
void RegisterConcatKernels();            // vacc_concat.cc
// vacc_variables.cc: only where TensorFlow exports its variable helpers
// (2.6-2.18); false, registering nothing, elsewhere.
bool RegisterVariableKernels();

}  // namespace vacc

#endif  // VACC_KERNELS_VACC_KERNEL_LIST_H_
