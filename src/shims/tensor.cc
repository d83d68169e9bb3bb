// SPDX-License-Identifier: Apache-2.0
// TF_Tensor: dtype + shape over a reference-counted buffer, so that
// TF_TensorBitcastFrom can share storage the way TensorFlow does and the
// caller's deallocator runs exactly once, when the last tensor lets go.
//
// Rules followed (TensorFlow's documented C API behaviour):
//  - TF_NewTensor takes ownership of `data` even when it fails: on failure
//    (bad shape, `len` too small for the shape) it returns NULL and the
//    deallocator has already run, so the caller never leaks nor double-frees.
//    TensorFlow aborts on negative dims; the shims return NULL instead.
//  - Data not aligned to TF_TensorDefaultAlignment() is copied into aligned
//    storage (and the deallocator runs at once), for every type that can be
//    memcpy'd; string/resource/variant keep the caller's pointer.
//  - TF_TensorMaybeMove hands the tensor back only if its storage belongs to
//    TensorFlow (TF_AllocateTensor or an aligned copy) and no other tensor
//    shares it; otherwise NULL, the documented "cannot move" answer.
#include "shim_internal.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "tensorflow/c/tf_tensor.h"

namespace {

// Eigen's maximum alignment on x86-64 builds of TensorFlow (AVX-512).
constexpr size_t kAlignment = 64;

struct Storage {
  void* data = nullptr;
  size_t len = 0;
  void (*deallocator)(void*, size_t, void*) = nullptr;
  void* deallocator_arg = nullptr;
  bool owned = false;  // allocated by the shims (not the caller's memory)
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (deallocator != nullptr) deallocator(data, len, deallocator_arg);
  }
};

void FreeAligned(void* data, size_t, void*) { std::free(data); }

void* AllocateAligned(size_t len) {
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes,
  // so an empty tensor still has a distinct, aligned, non-NULL pointer.
  size_t rounded = (len + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < len) return nullptr;  // overflow
  return std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
}

bool CanMemcpy(TF_DataType dt) {
  return dt != TF_STRING && dt != TF_RESOURCE && dt != TF_VARIANT;
}

}  // namespace

struct TF_Tensor {
  TF_DataType dtype;
  std::vector<int64_t> dims;
  std::shared_ptr<Storage> storage;

  int64_t ElementCount() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

namespace {

TF_Tensor* Create(TF_DataType dtype, const int64_t* dims, int num_dims,
                  std::shared_ptr<Storage> storage) {
  int64_t count = 0;
  if (!tfp_shims::ElementCount(dims, num_dims, &count)) return nullptr;
  size_t elem = TF_DataTypeSize(dtype);
  if (elem > 0 && count > 0 &&
      (static_cast<uint64_t>(count) > SIZE_MAX / elem || storage->len < elem * static_cast<size_t>(count))) {
    return nullptr;
  }
  auto* t = new (std::nothrow) TF_Tensor{dtype, std::vector<int64_t>(dims, dims + num_dims),
                                         std::move(storage)};
  return t;  // NULL on allocation failure; `storage` then released its data
}

}  // namespace

extern "C" {

}  // extern "C"

namespace tfp_shims {

bool ElementCount(const int64_t* dims, int num_dims, int64_t* count) {
  if (num_dims < 0 || (num_dims > 0 && dims == nullptr)) return false;
  int64_t n = 1;
  for (int i = 0; i < num_dims; ++i) {
    if (dims[i] < 0) return false;
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return false;
    n *= dims[i];
  }
  *count = n;
  return true;
}

std::vector<int64_t> Dims(const TF_Tensor* t) { return t != nullptr ? t->dims : std::vector<int64_t>(); }

TF_Tensor* WrapBuffer(TF_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
                      void (*dealloc)(void*, size_t, void*), void* arg) {
  auto storage = std::make_shared<Storage>();
  storage->data = data;
  storage->len = len;
  storage->deallocator = dealloc;
  storage->deallocator_arg = arg;
  return Create(dtype, dims, num_dims, std::move(storage));
}

TF_Tensor* ShareTensor(const TF_Tensor* t) {
  if (t == nullptr) return nullptr;
  return new (std::nothrow) TF_Tensor{t->dtype, t->dims, t->storage};
}

bool BufferIsUnique(const TF_Tensor* t) {
  return t != nullptr && t->storage != nullptr && t->storage.use_count() == 1;
}

}  // namespace tfp_shims

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_TensorDefaultAlignment);
size_t TF_TensorDefaultAlignment(void) { return kAlignment; }

TFP_SHIM_IMPLEMENTED(TF_NewTensor);
TF_Tensor* TF_NewTensor(TF_DataType dtype, const int64_t* dims, int num_dims, void* data,
                        size_t len, void (*deallocator)(void*, size_t, void*),
                        void* deallocator_arg) {
  auto storage = std::make_shared<Storage>();
  if (CanMemcpy(dtype) && reinterpret_cast<uintptr_t>(data) % kAlignment != 0) {
    void* copy = AllocateAligned(len);
    if (copy == nullptr) {
      if (deallocator != nullptr) deallocator(data, len, deallocator_arg);
      return nullptr;
    }
    if (len > 0) std::memcpy(copy, data, len);
    if (deallocator != nullptr) deallocator(data, len, deallocator_arg);
    storage->data = copy;
    storage->len = len;
    storage->deallocator = FreeAligned;
    storage->owned = true;
  } else {
    storage->data = data;
    storage->len = len;
    storage->deallocator = deallocator;
    storage->deallocator_arg = deallocator_arg;
  }
  // On failure `storage` goes out of scope here and runs the deallocator once.
  return Create(dtype, dims, num_dims, std::move(storage));
}

TFP_SHIM_IMPLEMENTED(TF_AllocateTensor);
TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims, int num_dims, size_t len) {
  void* data = AllocateAligned(len);
  if (data == nullptr) return nullptr;
  auto storage = std::make_shared<Storage>();
  storage->data = data;
  storage->len = len;
  storage->deallocator = FreeAligned;
  storage->owned = true;
  return Create(dtype, dims, num_dims, std::move(storage));
}

TFP_SHIM_IMPLEMENTED(TF_DeleteTensor);
void TF_DeleteTensor(TF_Tensor* t) { delete t; }

TFP_SHIM_IMPLEMENTED(TF_TensorMaybeMove);
TF_Tensor* TF_TensorMaybeMove(TF_Tensor* t) {
  if (t == nullptr || t->storage == nullptr) return nullptr;
  return t->storage->owned && t->storage.use_count() == 1 ? t : nullptr;
}

TFP_SHIM_IMPLEMENTED(TF_TensorType);
TF_DataType TF_TensorType(const TF_Tensor* t) {
  return t != nullptr ? t->dtype : static_cast<TF_DataType>(0);
}

TFP_SHIM_IMPLEMENTED(TF_SetShape);
void TF_SetShape(TF_Tensor* t, const int64_t* dims, int num_dims) {
  int64_t count = 0;
  // No status to report to: an invalid shape leaves the tensor unchanged.
  if (t == nullptr || !tfp_shims::ElementCount(dims, num_dims, &count)) return;
  t->dims.assign(dims, dims + num_dims);
}

TFP_SHIM_IMPLEMENTED(TF_NumDims);
int TF_NumDims(const TF_Tensor* t) { return t != nullptr ? static_cast<int>(t->dims.size()) : 0; }

TFP_SHIM_IMPLEMENTED(TF_Dim);
int64_t TF_Dim(const TF_Tensor* t, int dim_index) {
  // Out of range: -1, a value no real dimension has (TensorFlow aborts).
  if (t == nullptr || dim_index < 0 || static_cast<size_t>(dim_index) >= t->dims.size()) return -1;
  return t->dims[static_cast<size_t>(dim_index)];
}

TFP_SHIM_IMPLEMENTED(TF_TensorByteSize);
size_t TF_TensorByteSize(const TF_Tensor* t) {
  // The storage's size, like TensorFlow's; an empty tensor has no bytes.
  if (t == nullptr || t->storage == nullptr || t->ElementCount() == 0) return 0;
  return t->storage->len;
}

TFP_SHIM_IMPLEMENTED(TF_TensorData);
void* TF_TensorData(const TF_Tensor* t) {
  return t != nullptr && t->storage != nullptr ? t->storage->data : nullptr;
}

TFP_SHIM_IMPLEMENTED(TF_TensorElementCount);
int64_t TF_TensorElementCount(const TF_Tensor* t) { return t != nullptr ? t->ElementCount() : 0; }

TFP_SHIM_IMPLEMENTED(TF_TensorIsAligned);
bool TF_TensorIsAligned(const TF_Tensor* t) {
  if (t == nullptr) return false;
  // Strings are never read as raw memory and empty tensors touch none.
  if (t->dtype == TF_STRING || t->ElementCount() == 0) return true;
  return reinterpret_cast<uintptr_t>(TF_TensorData(t)) % kAlignment == 0;
}

TFP_SHIM_IMPLEMENTED(TF_TensorBitcastFrom);
void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type, TF_Tensor* to,
                          const int64_t* new_dims, int num_new_dims, TF_Status* status) {
  TF_SetStatus(status, TF_OK, "");
  if (from == nullptr || to == nullptr) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_TensorBitcastFrom: NULL tensor");
    return;
  }
  int64_t new_count = 0;
  if (!tfp_shims::ElementCount(new_dims, num_new_dims, &new_count)) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TF_TensorBitcastFrom: invalid shape");
    return;
  }
  size_t in_size = TF_DataTypeSize(from->dtype);
  size_t out_size = TF_DataTypeSize(type);
  if (!CanMemcpy(from->dtype) || !CanMemcpy(type) || in_size == 0 || out_size == 0) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "TF_TensorBitcastFrom: only plain (memcpy-able) types can be bitcast");
    return;
  }
  // Same number of bytes on both sides; an overflowing product cannot match.
  uint64_t in_bytes = 0, out_bytes = 0;
  bool overflow = __builtin_mul_overflow(in_size, static_cast<uint64_t>(from->ElementCount()), &in_bytes);
  overflow |= __builtin_mul_overflow(out_size, static_cast<uint64_t>(new_count), &out_bytes);
  if (overflow || in_bytes != out_bytes) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "TF_TensorBitcastFrom: the new type and shape do not cover the same bytes");
    return;
  }
  to->dtype = type;
  to->dims.assign(new_dims, new_dims + num_new_dims);
  to->storage = from->storage;  // shared: freed when both tensors are gone
}

}  // extern "C"
