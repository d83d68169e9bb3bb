// SPDX-License-Identifier: Apache-2.0
// TF_DataTypeSize: the size of one element of the C++ type each TF_DataType
// names. Types without a fixed-size plain representation (string, resource,
// variant) and unknown values are 0, as in TensorFlow: callers treat 0 as
// "cannot compute a byte size".
#include "shim_internal.h"

#include <complex>
#include <cstdint>

#include "tensorflow/c/tf_datatype.h"

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_DataTypeSize);
size_t TF_DataTypeSize(TF_DataType dt) {
  switch (dt) {
    case TF_FLOAT: return sizeof(float);
    case TF_DOUBLE: return sizeof(double);
    case TF_INT32: return sizeof(int32_t);
    case TF_UINT8: return sizeof(uint8_t);
    case TF_INT16: return sizeof(int16_t);
    case TF_INT8: return sizeof(int8_t);
    case TF_COMPLEX64: return sizeof(std::complex<float>);
    case TF_INT64: return sizeof(int64_t);
    case TF_BOOL: return sizeof(bool);
    case TF_QINT8: return sizeof(int8_t);      // quantized wrappers of the
    case TF_QUINT8: return sizeof(uint8_t);    // same-width integer
    case TF_QINT32: return sizeof(int32_t);
    case TF_QINT16: return sizeof(int16_t);
    case TF_QUINT16: return sizeof(uint16_t);
    case TF_BFLOAT16: return 2;                // 16-bit floats
    case TF_HALF: return 2;
    case TF_UINT16: return sizeof(uint16_t);
    case TF_COMPLEX128: return sizeof(std::complex<double>);
    case TF_UINT32: return sizeof(uint32_t);
    case TF_UINT64: return sizeof(uint64_t);
    // 8-bit floats and the sub-byte types: one element per byte in memory.
    case TF_FLOAT8_E5M2:
    case TF_FLOAT8_E4M3FN:
    case TF_FLOAT8_E4M3FNUZ:
    case TF_FLOAT8_E4M3B11FNUZ:
    case TF_FLOAT8_E5M2FNUZ:
    case TF_INT4:
    case TF_UINT4:
    case TF_INT2:
    case TF_UINT2:
    case TF_FLOAT4_E2M1FN:
      return 1;
    case TF_STRING:
    case TF_RESOURCE:
    case TF_VARIANT:
    default:
      return 0;
  }
}

}  // extern "C"
