// SPDX-License-Identifier: Apache-2.0
// TF_Buffer: a plain struct the caller may fill in itself, so deletion must
// go through its own data_deallocator (if any) and never assume who
// allocated `data`. TF_NewBufferFromString copies, so the caller keeps its
// bytes.
#include "shim_internal.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "tensorflow/c/tf_buffer.h"

namespace {
void FreeData(void* data, size_t) { std::free(data); }
}  // namespace

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NewBuffer);
TF_Buffer* TF_NewBuffer(void) { return new (std::nothrow) TF_Buffer{nullptr, 0, nullptr}; }

TFP_SHIM_IMPLEMENTED(TF_NewBufferFromString);
TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  TF_Buffer* buf = TF_NewBuffer();
  if (buf == nullptr) return nullptr;
  if (proto_len == 0) return buf;
  void* copy = std::malloc(proto_len);
  if (copy == nullptr || proto == nullptr) {
    std::free(copy);
    delete buf;
    return nullptr;
  }
  std::memcpy(copy, proto, proto_len);
  buf->data = copy;
  buf->length = proto_len;
  buf->data_deallocator = FreeData;
  return buf;
}

TFP_SHIM_IMPLEMENTED(TF_DeleteBuffer);
void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->data_deallocator != nullptr) {
    buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
  }
  delete buffer;
}

TFP_SHIM_IMPLEMENTED(TF_GetBuffer);
TF_Buffer TF_GetBuffer(TF_Buffer* buffer) {
  // A copy of the struct: the data stays owned by `buffer`.
  return buffer != nullptr ? *buffer : TF_Buffer{nullptr, 0, nullptr};
}

}  // extern "C"
