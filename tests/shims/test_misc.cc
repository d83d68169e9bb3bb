// SPDX-License-Identifier: Apache-2.0
// TF_Version / emulated release, and the generated unimplemented functions.
#include "shim_internal.h"

#include <gtest/gtest.h>

#include <string>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/experimental/grappler/grappler.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/kernels_experimental.h"

// Only TensorFlow 2.5 declared it; the shims still define it.
extern "C" const TF_GrapplerItem* TF_GetGrapplerItem(TF_Buffer*, TF_Status*);

namespace {

TEST(Version, DefaultIsNewestAndSelectable) {
  EXPECT_STREQ(tfp_shims_release(), TFPLUGIN_TF_RELEASE);
  EXPECT_STREQ(TF_Version(), TFPLUGIN_TF_VERSION);
  EXPECT_EQ(tfp_shims_set_release("2.16"), 0);
  EXPECT_STREQ(tfp_shims_release(), "2.16");
  EXPECT_EQ(std::string(TF_Version()).rfind("2.16.", 0), 0u) << TF_Version();
  EXPECT_EQ(tfp_shims_set_release("1.0"), -1);
  EXPECT_EQ(tfp_shims_set_release(nullptr), -1);
  EXPECT_STREQ(tfp_shims_release(), "2.16");  // unchanged
  EXPECT_EQ(tfp_shims_set_release(TFPLUGIN_TF_RELEASE), 0);
}

TEST(Unimplemented, SetsStatusNamingItselfAndCounts) {
  tfp_shims_reset_unimplemented_calls();
  EXPECT_EQ(tfp_shims_unimplemented_calls(), 0u);
  EXPECT_EQ(tfp_shims_last_unimplemented(), nullptr);
  TF_Status* s = TF_NewStatus();
  TF_GetSerializedConfigProto(nullptr, nullptr, s);
  EXPECT_EQ(TF_GetCode(s), TF_UNIMPLEMENTED);
  EXPECT_STREQ(TF_Message(s), "TF_GetSerializedConfigProto is not implemented by the tfplugin shims");
  EXPECT_EQ(tfp_shims_unimplemented_calls(), 1u);
  EXPECT_STREQ(tfp_shims_last_unimplemented(), "TF_GetSerializedConfigProto");
  TF_DeleteStatus(s);
}

TEST(Unimplemented, ReturnsZeroAndToleratesNullStatus) {
  tfp_shims_reset_unimplemented_calls();
  EXPECT_EQ(TF_NewGraphProperties(nullptr), nullptr);
  EXPECT_EQ(TF_GetInputByName, &TF_GetInputByName);  // exists though 2.21 lacks it
  TF_Status* s = TF_NewStatus();
  EXPECT_EQ(TF_GetGrapplerItem(nullptr, s), nullptr);  // only ever in 2.5
  EXPECT_EQ(TF_GetCode(s), TF_UNIMPLEMENTED);
  EXPECT_STREQ(TF_Message(s), "TF_GetGrapplerItem is not implemented by the tfplugin shims");
  TF_NewFunctionLibraryDefinition(nullptr, nullptr);  // NULL status: no crash
  EXPECT_EQ(tfp_shims_unimplemented_calls(), 3u);
  TF_DeleteStatus(s);
}

}  // namespace
