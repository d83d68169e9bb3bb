/* SPDX-License-Identifier: Apache-2.0
 * A stand-in plugin: imports TensorFlow C API functions (implemented and
 * unimplemented ones) the way a real plugin does, to be dlopen'ed RTLD_NOW. */
#include "tensorflow/c/c_api.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

__attribute__((visibility("default"))) int fake_plugin_run(void);

int fake_plugin_run(void) {
  TF_Status *s = TF_NewStatus();
  int64_t dims[1] = {4};
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims, 1, 16);
  int ok = t != NULL && TF_TensorByteSize(t) == 16 && TF_Version()[0] == '2';
  TF_DeleteTensor(t);
  TF_GetSerializedConfigProto(NULL, NULL, s); /* not implemented by the shims */
  ok = ok && TF_GetCode(s) == TF_UNIMPLEMENTED;
  TF_DeleteStatus(s);
  return ok ? 0 : 1;
}
