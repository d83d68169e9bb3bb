// SPDX-License-Identifier: Apache-2.0
// TF_Status / TSL_Status semantics of libtfplugin_shims.
#include "shim_internal.h"  // first: makes TSL_* (unavailable in 2.21) callable

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>

namespace {

void Collect(const char* k, const char* v, void* cap) {
  (*static_cast<std::map<std::string, std::string>*>(cap))[k] = v;
}

TEST(Status, NewIsOk) {
  TF_Status* s = TF_NewStatus();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(TF_GetCode(s), TF_OK);
  EXPECT_STREQ(TF_Message(s), "");
  TF_DeleteStatus(s);
}

TEST(Status, SetAndReset) {
  TF_Status* s = TF_NewStatus();
  TF_SetStatus(s, TF_INVALID_ARGUMENT, "bad thing");
  EXPECT_EQ(TF_GetCode(s), TF_INVALID_ARGUMENT);
  EXPECT_STREQ(TF_Message(s), "bad thing");
  TF_SetStatus(s, TF_OK, "ignored");
  EXPECT_EQ(TF_GetCode(s), TF_OK);
  EXPECT_STREQ(TF_Message(s), "");
  TF_SetStatus(s, TF_INTERNAL, nullptr);
  EXPECT_EQ(TF_GetCode(s), TF_INTERNAL);
  EXPECT_STREQ(TF_Message(s), "");
  TF_DeleteStatus(s);
}

TEST(Status, Payloads) {
  TF_Status* s = TF_NewStatus();
  std::map<std::string, std::string> got;
  TF_SetPayload(s, "k", "v");  // OK status: dropped
  TF_ForEachPayload(s, Collect, &got);
  EXPECT_TRUE(got.empty());

  TF_SetStatus(s, TF_ABORTED, "x");
  TF_SetPayload(s, "a", "1");
  TF_SetPayload(s, "b", "2");
  TF_SetPayload(s, "a", "3");  // replaces
  TF_ForEachPayload(s, Collect, &got);
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"a", "3"}, {"b", "2"}}));

  TF_SetStatus(s, TF_ABORTED, "y");  // a new status has no payloads
  got.clear();
  TF_ForEachPayload(s, Collect, &got);
  EXPECT_TRUE(got.empty());
  TF_DeleteStatus(s);
}

TEST(Status, FromIOError) {
  TF_Status* s = TF_NewStatus();
  TF_SetStatusFromIOError(s, ENOENT, "open foo");
  EXPECT_EQ(TF_GetCode(s), TF_NOT_FOUND);
  EXPECT_EQ(std::string(TF_Message(s)).rfind("open foo; ", 0), 0u) << TF_Message(s);
  TF_SetStatusFromIOError(s, EACCES, "ctx");
  EXPECT_EQ(TF_GetCode(s), TF_PERMISSION_DENIED);
  TF_SetStatusFromIOError(s, ENOMEM, "ctx");
  EXPECT_EQ(TF_GetCode(s), TF_RESOURCE_EXHAUSTED);
  TF_SetStatusFromIOError(s, 0, "ctx");
  EXPECT_EQ(TF_GetCode(s), TF_OK);
  TF_SetStatusFromIOError(s, 99999, "ctx");
  EXPECT_EQ(TF_GetCode(s), TF_UNKNOWN);
  TF_DeleteStatus(s);
}

TEST(Status, NullIsHarmless) {
  TF_SetStatus(nullptr, TF_INTERNAL, "x");
  TF_SetPayload(nullptr, "k", "v");
  TF_SetStatusFromIOError(nullptr, EIO, "x");
  TF_ForEachPayload(nullptr, Collect, nullptr);
  EXPECT_EQ(TF_GetCode(nullptr), TF_OK);
  EXPECT_STREQ(TF_Message(nullptr), "");
  TF_DeleteStatus(nullptr);
}

TEST(Status, TslIsTheSameObject) {
  TSL_Status* s = TSL_NewStatus();
  TSL_SetStatus(s, TSL_DATA_LOSS, "lost");
  EXPECT_EQ(TF_GetCode(s), TF_DATA_LOSS);  // TF_Status is TSL_Status
  EXPECT_STREQ(TSL_Message(s), "lost");
  TSL_SetPayload(s, "k", "v");
  std::map<std::string, std::string> got;
  TSL_ForEachPayload(s, Collect, &got);
  EXPECT_EQ(got["k"], "v");
  TSL_SetStatusFromIOError(s, ETIMEDOUT, "t");
  EXPECT_EQ(TSL_GetCode(s), TSL_DEADLINE_EXCEEDED);
  TSL_DeleteStatus(s);
}

}  // namespace
