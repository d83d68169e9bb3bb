// SPDX-License-Identifier: Apache-2.0
// An op attribute's value, as the shims hold it: what a NodeDef's AttrValue
// holds in TensorFlow, for the kinds the C API can read (kernel construction
// getters, shape inference) and hosts can set.
#ifndef TFPLUGIN_SHIMS_ATTR_VALUE_H_
#define TFPLUGIN_SHIMS_ATTR_VALUE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensorflow/c/tf_datatype.h"

namespace tfp_shims {

// A shape as TensorFlow's TensorShapeProto: unknown rank, or dims where -1 is
// an unknown dimension.
struct Shape {
  bool unknown_rank = false;
  std::vector<int64_t> dims;
  bool operator==(const Shape& o) const { return unknown_rank == o.unknown_rank && dims == o.dims; }
};

// A host tensor value (for "tensor" attrs): dtype, shape, raw little-endian bytes.
struct TensorValue {
  TF_DataType dtype = static_cast<TF_DataType>(0);
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  bool operator==(const TensorValue& o) const { return dtype == o.dtype && dims == o.dims && bytes == o.bytes; }
};

struct AttrValue {
  // The attr type names TensorFlow's op definitions use.
  enum class Kind { kNone, kString, kInt, kFloat, kBool, kType, kShape, kTensor, kFunc };
  Kind kind = Kind::kNone;
  bool is_list = false;  // "list(<kind>)": the vectors below hold the values

  std::string s;  // kString, kFunc (the function's name)
  int64_t i = 0;
  float f = 0;
  bool b = false;
  TF_DataType type = static_cast<TF_DataType>(0);
  Shape shape;
  TensorValue tensor;

  std::vector<std::string> list_s;
  std::vector<int64_t> list_i;
  std::vector<float> list_f;
  std::vector<bool> list_b;
  std::vector<TF_DataType> list_type;
  std::vector<Shape> list_shape;
  std::vector<TensorValue> list_tensor;

  // Number of values in a list attr (-1 for a scalar attr).
  int ListSize() const;

  // Same kind and value (a host reuses its kernel while attrs are equal).
  bool operator==(const AttrValue& o) const {
    return kind == o.kind && is_list == o.is_list && s == o.s && i == o.i && f == o.f && b == o.b &&
           type == o.type && shape == o.shape && tensor == o.tensor && list_s == o.list_s &&
           list_i == o.list_i && list_f == o.list_f && list_b == o.list_b && list_type == o.list_type &&
           list_shape == o.list_shape && list_tensor == o.list_tensor;
  }
  bool operator!=(const AttrValue& o) const { return !(*this == o); }
};

using AttrMap = std::map<std::string, AttrValue>;

// "int", "list(type)", ...: the type name an AttrValue of `kind` has.
std::string AttrTypeName(AttrValue::Kind kind, bool is_list);
// Parses an attr type name ("float", "list(shape)"); false if unknown.
bool ParseAttrType(const std::string& name, AttrValue::Kind* kind, bool* is_list);

// Parses a value of the given attr type from text, in the forms TensorFlow's
// op specs write defaults and a command line would: 3, -1.5, true, float,
// "abc" or abc, [1, 2], [float, int32], [2, 3] or [?, 3] or ? for shapes.
// On failure returns false and says why in *error.
bool ParseAttrValue(const std::string& text, AttrValue::Kind kind, bool is_list, AttrValue* out,
                    std::string* error);
// The value as the text ParseAttrValue reads.
std::string AttrValueText(const AttrValue& v);

// TensorFlow's names for data types: "float", "int32", "bfloat16", ...
const char* DataTypeName(TF_DataType dt);  // "invalid" for unknown values
// "[2, ?, 3]", "?" for an unknown rank: how the shims' messages spell shapes.
std::string ShapeText(const Shape& s);
// Accepts TensorFlow's names and the DT_ forms ("DT_FLOAT"); false if unknown.
bool ParseDataType(const std::string& name, TF_DataType* out);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_ATTR_VALUE_H_
