// SPDX-License-Identifier: Apache-2.0
// TF_Tensor and TF_DataTypeSize semantics of libtfplugin_shims.
#include "shim_internal.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tensorflow/c/tf_tensor.h"

namespace {

struct Dealloc {
  int calls = 0;
  void* last = nullptr;
};
void CountingDealloc(void* data, size_t, void* arg) {
  auto* d = static_cast<Dealloc*>(arg);
  ++d->calls;
  d->last = data;
}

alignas(64) float g_aligned[16];

TEST(DataType, Sizes) {
  EXPECT_EQ(TF_DataTypeSize(TF_FLOAT), 4u);
  EXPECT_EQ(TF_DataTypeSize(TF_DOUBLE), 8u);
  EXPECT_EQ(TF_DataTypeSize(TF_INT8), 1u);
  EXPECT_EQ(TF_DataTypeSize(TF_UINT16), 2u);
  EXPECT_EQ(TF_DataTypeSize(TF_INT64), 8u);
  EXPECT_EQ(TF_DataTypeSize(TF_BOOL), 1u);
  EXPECT_EQ(TF_DataTypeSize(TF_HALF), 2u);
  EXPECT_EQ(TF_DataTypeSize(TF_BFLOAT16), 2u);
  EXPECT_EQ(TF_DataTypeSize(TF_COMPLEX64), 8u);
  EXPECT_EQ(TF_DataTypeSize(TF_COMPLEX128), 16u);
  EXPECT_EQ(TF_DataTypeSize(TF_QINT32), 4u);
  EXPECT_EQ(TF_DataTypeSize(TF_FLOAT8_E4M3FN), 1u);
  EXPECT_EQ(TF_DataTypeSize(TF_INT4), 1u);
  EXPECT_EQ(TF_DataTypeSize(TF_STRING), 0u);
  EXPECT_EQ(TF_DataTypeSize(TF_RESOURCE), 0u);
  EXPECT_EQ(TF_DataTypeSize(TF_VARIANT), 0u);
  EXPECT_EQ(TF_DataTypeSize(static_cast<TF_DataType>(0)), 0u);
  EXPECT_EQ(TF_DataTypeSize(static_cast<TF_DataType>(1000)), 0u);
}

TEST(Tensor, Allocate) {
  const int64_t dims[] = {2, 3};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 2, 6 * sizeof(float));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(TF_TensorType(t), TF_FLOAT);
  EXPECT_EQ(TF_NumDims(t), 2);
  EXPECT_EQ(TF_Dim(t, 0), 2);
  EXPECT_EQ(TF_Dim(t, 1), 3);
  EXPECT_EQ(TF_Dim(t, 2), -1);
  EXPECT_EQ(TF_Dim(t, -1), -1);
  EXPECT_EQ(TF_TensorElementCount(t), 6);
  EXPECT_EQ(TF_TensorByteSize(t), 6 * sizeof(float));
  ASSERT_NE(TF_TensorData(t), nullptr);
  EXPECT_TRUE(TF_TensorIsAligned(t));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(TF_TensorData(t)) % TF_TensorDefaultAlignment(), 0u);
  std::memset(TF_TensorData(t), 0, TF_TensorByteSize(t));  // ASan: whole range usable
  EXPECT_EQ(TF_TensorMaybeMove(t), t);  // shims-owned, sole reference
  TF_DeleteTensor(t);
  TF_DeleteTensor(nullptr);
}

TEST(Tensor, Scalar) {
  TF_Tensor* t = TF_AllocateTensor(TF_INT32, nullptr, 0, 4);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(TF_NumDims(t), 0);
  EXPECT_EQ(TF_TensorElementCount(t), 1);
  TF_DeleteTensor(t);
}

TEST(Tensor, AllocateRejectsBadShapes) {
  const int64_t neg[] = {2, -1};
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, neg, 2, 64), nullptr);
  const int64_t dims[] = {4};
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, dims, 4 - 5, 64), nullptr);  // num_dims < 0
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, nullptr, 1, 64), nullptr);
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, dims, 1, 15), nullptr);  // 4 floats need 16
  const int64_t huge[] = {INT64_MAX, 2};
  EXPECT_EQ(TF_AllocateTensor(TF_FLOAT, huge, 2, 64), nullptr);
}

TEST(Tensor, NewTensorDeallocatesOnceAtDelete) {
  Dealloc d;
  const int64_t dims[] = {16};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 1, g_aligned, sizeof g_aligned, CountingDealloc, &d);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(TF_TensorData(t), g_aligned);  // aligned: no copy
  EXPECT_EQ(d.calls, 0);
  EXPECT_EQ(TF_TensorMaybeMove(t), nullptr);  // caller's memory: cannot move
  TF_DeleteTensor(t);
  EXPECT_EQ(d.calls, 1);
  EXPECT_EQ(d.last, g_aligned);
}

TEST(Tensor, NewTensorFailureDeallocatesOnce) {
  Dealloc d;
  const int64_t neg[] = {-3};
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, neg, 1, g_aligned, sizeof g_aligned, CountingDealloc, &d),
            nullptr);
  EXPECT_EQ(d.calls, 1);
  const int64_t big[] = {100};
  EXPECT_EQ(TF_NewTensor(TF_FLOAT, big, 1, g_aligned, sizeof g_aligned, CountingDealloc, &d),
            nullptr);
  EXPECT_EQ(d.calls, 2);
}

TEST(Tensor, NewTensorCopiesMisalignedData) {
  Dealloc d;
  char* raw = static_cast<char*>(std::aligned_alloc(64, 128));
  char* misaligned = raw + 4;
  for (int i = 0; i < 8; ++i) misaligned[i] = static_cast<char>(i);
  const int64_t dims[] = {2};
  TF_Tensor* t = TF_NewTensor(TF_INT32, dims, 1, misaligned, 8, CountingDealloc, &d);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(d.calls, 1);  // copied, caller's buffer released at once
  EXPECT_NE(TF_TensorData(t), misaligned);
  EXPECT_TRUE(TF_TensorIsAligned(t));
  EXPECT_EQ(std::memcmp(TF_TensorData(t), misaligned, 8), 0);
  std::free(raw);
  TF_DeleteTensor(t);
  EXPECT_EQ(d.calls, 1);  // never again
}

TEST(Tensor, NullDeallocator) {
  const int64_t dims[] = {16};
  TF_Tensor* t = TF_NewTensor(TF_FLOAT, dims, 1, g_aligned, sizeof g_aligned, nullptr, nullptr);
  ASSERT_NE(t, nullptr);
  TF_DeleteTensor(t);
}

TEST(Tensor, EmptyTensorHasNoBytes) {
  const int64_t dims[] = {0, 5};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 2, 0);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(TF_TensorElementCount(t), 0);
  EXPECT_EQ(TF_TensorByteSize(t), 0u);
  EXPECT_TRUE(TF_TensorIsAligned(t));
  TF_DeleteTensor(t);
}

TEST(Tensor, SetShape) {
  const int64_t dims[] = {6};
  TF_Tensor* t = TF_AllocateTensor(TF_FLOAT, dims, 1, 24);
  const int64_t two_by_three[] = {2, 3};
  TF_SetShape(t, two_by_three, 2);
  EXPECT_EQ(TF_NumDims(t), 2);
  EXPECT_EQ(TF_Dim(t, 1), 3);
  const int64_t neg[] = {-1};
  TF_SetShape(t, neg, 1);  // ignored
  EXPECT_EQ(TF_NumDims(t), 2);
  TF_SetShape(nullptr, two_by_three, 2);
  TF_DeleteTensor(t);
}

TEST(Tensor, BitcastSharesStorage) {
  Dealloc d;
  const int64_t dims[] = {4};
  TF_Tensor* from = TF_NewTensor(TF_FLOAT, dims, 1, g_aligned, 16, CountingDealloc, &d);
  TF_Tensor* to = TF_AllocateTensor(TF_INT32, dims, 1, 16);
  ASSERT_NE(from, nullptr);
  ASSERT_NE(to, nullptr);
  TF_Status* s = TF_NewStatus();
  const int64_t bytes[] = {2, 8};
  TF_TensorBitcastFrom(from, TF_UINT8, to, bytes, 2, s);
  ASSERT_EQ(TF_GetCode(s), TF_OK) << TF_Message(s);
  EXPECT_EQ(TF_TensorType(to), TF_UINT8);
  EXPECT_EQ(TF_TensorElementCount(to), 16);
  EXPECT_EQ(TF_TensorData(to), TF_TensorData(from));
  TF_DeleteTensor(from);
  EXPECT_EQ(d.calls, 0);  // `to` still holds it
  TF_DeleteTensor(to);
  EXPECT_EQ(d.calls, 1);
  TF_DeleteStatus(s);
}

TEST(Tensor, BitcastErrors) {
  const int64_t dims[] = {4};
  TF_Tensor* from = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  TF_Tensor* to = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  void* to_data = TF_TensorData(to);
  TF_Status* s = TF_NewStatus();
  const int64_t three[] = {3};
  TF_TensorBitcastFrom(from, TF_INT32, to, three, 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  EXPECT_EQ(TF_TensorData(to), to_data);  // unchanged on error
  const int64_t neg[] = {-4};
  TF_TensorBitcastFrom(from, TF_INT32, to, neg, 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  TF_TensorBitcastFrom(from, TF_STRING, to, dims, 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  TF_TensorBitcastFrom(nullptr, TF_INT32, to, dims, 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  TF_TensorBitcastFrom(from, TF_INT32, to, dims, 1, s);
  EXPECT_EQ(TF_GetCode(s), TF_OK);
  EXPECT_EQ(TF_TensorMaybeMove(from), nullptr);  // shared now: cannot move
  TF_DeleteTensor(from);
  TF_DeleteTensor(to);
  TF_DeleteStatus(s);
}

TEST(Tensor, NullTensorGetters) {
  EXPECT_EQ(TF_NumDims(nullptr), 0);
  EXPECT_EQ(TF_Dim(nullptr, 0), -1);
  EXPECT_EQ(TF_TensorByteSize(nullptr), 0u);
  EXPECT_EQ(TF_TensorData(nullptr), nullptr);
  EXPECT_EQ(TF_TensorElementCount(nullptr), 0);
  EXPECT_EQ(TF_TensorMaybeMove(nullptr), nullptr);
}

}  // namespace
