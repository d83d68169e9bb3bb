// SPDX-License-Identifier: Apache-2.0
// Elementwise ops: AddV2, Sub, Mul, RealDiv with NumPy broadcasting; Relu;
// Identity. See reference.h.
#include <algorithm>
#include <cstdint>
#include <string>

#include "reference.h"

namespace tfp_reference {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool BroadcastShape(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  Shape r(rank);
  for (size_t d = 0; d < rank; ++d) {
    // Dimension d of the result, counted from the left; the inputs align on the right.
    const int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) return false;
    r[d] = da == 1 ? db : da;
  }
  *out = r;
  return true;
}

bool BinaryFromOp(const std::string& op, Binary* out) {
  if (op == "AddV2") *out = Binary::kAdd;
  else if (op == "Sub") *out = Binary::kSub;
  else if (op == "Mul") *out = Binary::kMul;
  else if (op == "RealDiv") *out = Binary::kDiv;
  else return false;
  return true;
}

namespace {

// The offset in a tensor of `shape` of the element that broadcasts to the
// result's element with multi-index `index` (of rank `out_rank`).
int64_t SourceOffset(const Shape& shape, const Shape& index) {
  const size_t skip = index.size() - shape.size();
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t i = shape[d] == 1 ? 0 : index[skip + d];
    offset = offset * shape[d] + i;
  }
  return offset;
}

template <typename T>
T Apply(Binary op, T a, T b) {
  switch (op) {
    case Binary::kAdd: return a + b;
    case Binary::kSub: return a - b;
    case Binary::kMul: return a * b;
    case Binary::kDiv: return a / b;
  }
  return T{};
}

}  // namespace

template <typename T>
void BinaryOp(Binary op, const T* x, const Shape& xs, const T* y, const Shape& ys, T* out,
              const Shape& out_shape) {
  const int64_t n = NumElements(out_shape);
  Shape index(out_shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = Apply(op, x[SourceOffset(xs, index)], y[SourceOffset(ys, index)]);
    // Next multi-index, last dimension fastest.
    for (size_t d = out_shape.size(); d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
}

template <typename T>
void Relu(const T* x, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] < T{0} ? T{0} : x[i];
}

template <typename T>
void Identity(const T* x, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i];
}

template void BinaryOp<float>(Binary, const float*, const Shape&, const float*, const Shape&,
                              float*, const Shape&);
template void BinaryOp<int32_t>(Binary, const int32_t*, const Shape&, const int32_t*,
                                const Shape&, int32_t*, const Shape&);
template void Relu<float>(const float*, int64_t, float*);
template void Relu<int32_t>(const int32_t*, int64_t, int32_t*);
template void Identity<float>(const float*, int64_t, float*);
template void Identity<int32_t>(const int32_t*, int64_t, int32_t*);

}  // namespace tfp_reference
