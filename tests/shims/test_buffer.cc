// SPDX-License-Identifier: Apache-2.0
// TF_Buffer semantics of libtfplugin_shims.
#include "shim_internal.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tensorflow/c/tf_buffer.h"

namespace {

int g_freed = 0;
void CountingFree(void*, size_t) { ++g_freed; }

TEST(Buffer, NewIsEmpty) {
  TF_Buffer* b = TF_NewBuffer();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->data, nullptr);
  EXPECT_EQ(b->length, 0u);
  EXPECT_EQ(b->data_deallocator, nullptr);
  TF_DeleteBuffer(b);
  TF_DeleteBuffer(nullptr);
}

TEST(Buffer, FromStringCopies) {
  char src[] = "proto bytes";
  TF_Buffer* b = TF_NewBufferFromString(src, sizeof src);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->length, sizeof src);
  EXPECT_NE(b->data, static_cast<const void*>(src));
  src[0] = 'X';
  EXPECT_EQ(std::memcmp(b->data, "proto bytes", sizeof src), 0);
  TF_Buffer view = TF_GetBuffer(b);
  EXPECT_EQ(view.data, b->data);
  EXPECT_EQ(view.length, b->length);
  TF_DeleteBuffer(b);
}

TEST(Buffer, FromEmptyString) {
  TF_Buffer* b = TF_NewBufferFromString(nullptr, 0);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->length, 0u);
  TF_DeleteBuffer(b);
}

TEST(Buffer, DeleteUsesCallersDeallocatorOnce) {
  static char data[4];
  TF_Buffer* b = TF_NewBuffer();
  b->data = data;
  b->length = sizeof data;
  b->data_deallocator = CountingFree;
  g_freed = 0;
  TF_DeleteBuffer(b);
  EXPECT_EQ(g_freed, 1);
}

TEST(Buffer, GetNull) {
  TF_Buffer z = TF_GetBuffer(nullptr);
  EXPECT_EQ(z.data, nullptr);
  EXPECT_EQ(z.length, 0u);
}

}  // namespace
