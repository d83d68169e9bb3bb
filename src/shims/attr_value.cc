// SPDX-License-Identifier: Apache-2.0
// Attr values as text: the forms op specs write defaults in (TensorFlow's
// REGISTER_OP syntax where it has a short one) and a command line would.
// AttrValueText writes exactly what tools/tf_opdefs.py writes into abi/ops,
// so a built-in default reads back to the same text.
//
//   int     3, -1              float   0.0001, 1e-05, inf, nan
//   bool    true, false        type    DT_FLOAT (or float)
//   string  'SAME' (C escapes; "..." and bare words are read too)
//   shape   [2, ?], [] (scalar), ? (unknown rank)
//   tensor  Tensor(DT_UINT8, [4], [255, 0, 0, 255])   (bool/int/float types)
//   func    'name'
//   list    [v, v, ...]
#include "shim_internal.h"

#include "attr_value.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace tfp_shims {
namespace {

struct TypeNameEntry {
  TF_DataType dt;
  const char* name;
};

// TensorFlow's DataTypeString names: the DT_ enum name's tail, lower case.
constexpr TypeNameEntry kTypeNames[] = {
    {TF_FLOAT, "float"},
    {TF_DOUBLE, "double"},
    {TF_INT32, "int32"},
    {TF_UINT8, "uint8"},
    {TF_INT16, "int16"},
    {TF_INT8, "int8"},
    {TF_STRING, "string"},
    {TF_COMPLEX64, "complex64"},
    {TF_INT64, "int64"},
    {TF_BOOL, "bool"},
    {TF_QINT8, "qint8"},
    {TF_QUINT8, "quint8"},
    {TF_QINT32, "qint32"},
    {TF_BFLOAT16, "bfloat16"},
    {TF_QINT16, "qint16"},
    {TF_QUINT16, "quint16"},
    {TF_UINT16, "uint16"},
    {TF_COMPLEX128, "complex128"},
    {TF_HALF, "half"},
    {TF_RESOURCE, "resource"},
    {TF_VARIANT, "variant"},
    {TF_UINT32, "uint32"},
    {TF_UINT64, "uint64"},
    {TF_FLOAT8_E5M2, "float8_e5m2"},
    {TF_FLOAT8_E4M3FN, "float8_e4m3fn"},
    {TF_FLOAT8_E4M3FNUZ, "float8_e4m3fnuz"},
    {TF_FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz"},
    {TF_FLOAT8_E5M2FNUZ, "float8_e5m2fnuz"},
    {TF_INT4, "int4"},
    {TF_UINT4, "uint4"},
    {TF_INT2, "int2"},
    {TF_UINT2, "uint2"},
    {TF_FLOAT4_E2M1FN, "float4_e2m1fn"},
};

struct KindName {
  AttrValue::Kind kind;
  const char* name;
};

constexpr KindName kKindNames[] = {
    {AttrValue::Kind::kString, "string"}, {AttrValue::Kind::kInt, "int"},
    {AttrValue::Kind::kFloat, "float"},   {AttrValue::Kind::kBool, "bool"},
    {AttrValue::Kind::kType, "type"},     {AttrValue::Kind::kShape, "shape"},
    {AttrValue::Kind::kTensor, "tensor"}, {AttrValue::Kind::kFunc, "func"},
};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n\r");
  return s.substr(b, e - b + 1);
}

// ---------------------------------------------------------------- tensors ---
// Element encodings a tensor default can be written in (the types whose
// values TensorFlow's TensorProto holds as plain numbers).
enum class Elem { kNone, kBool, kSigned, kUnsigned, kFloat, kDouble };

Elem ElemOf(TF_DataType dt) {
  switch (dt) {
    case TF_BOOL:
      return Elem::kBool;
    case TF_INT8:
    case TF_INT16:
    case TF_INT32:
    case TF_INT64:
      return Elem::kSigned;
    case TF_UINT8:
    case TF_UINT16:
    case TF_UINT32:
    case TF_UINT64:
      return Elem::kUnsigned;
    case TF_FLOAT:
      return Elem::kFloat;
    case TF_DOUBLE:
      return Elem::kDouble;
    default:
      return Elem::kNone;
  }
}

// Byte width of the encodable types (TF_DataTypeSize lives in the C API).
size_t ElemSize(TF_DataType dt) {
  switch (dt) {
    case TF_BOOL:
    case TF_INT8:
    case TF_UINT8:
      return 1;
    case TF_INT16:
    case TF_UINT16:
      return 2;
    case TF_INT32:
    case TF_UINT32:
    case TF_FLOAT:
      return 4;
    case TF_INT64:
    case TF_UINT64:
    case TF_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

// Little-endian, as TensorFlow's tensor_content is on the hosts we run on.
void PutLE(uint64_t bits, size_t n, std::vector<uint8_t>* out) {
  for (size_t i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(bits >> (8 * i)));
}

uint64_t GetLE(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// ------------------------------------------------------------ formatting ---

// Shortest %.<p>g text that reads back as the same value: 10, not 1e+01.
template <typename T>
std::string ShortestFloat(T v, int max_precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string best;
  char buf[64];
  for (int p = 1; p <= max_precision; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, static_cast<double>(v));
    T back = sizeof(T) == sizeof(float) ? static_cast<T>(std::strtof(buf, nullptr))
                                        : static_cast<T>(std::strtod(buf, nullptr));
    if (back == v && (best.empty() || std::strlen(buf) < best.size())) best = buf;
  }
  return best;
}

// Single-quoted with C escapes; `|` escaped too so abi/ops fields split on it.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c == '|' || c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "'";
}

std::string TypeText(TF_DataType dt) {
  std::string s = "DT_";
  for (const char* p = DataTypeName(dt); *p != '\0'; ++p) {
    s += static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
  }
  return s;
}


std::string TensorText(const TensorValue& t) {
  std::string out = "Tensor(" + TypeText(t.dtype) + ", [";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(t.dims[i]);
  }
  out += "], [";
  size_t n = ElemSize(t.dtype);
  Elem e = ElemOf(t.dtype);
  for (size_t off = 0; n > 0 && off + n <= t.bytes.size(); off += n) {
    if (off > 0) out += ", ";
    uint64_t bits = GetLE(&t.bytes[off], n);
    switch (e) {
      case Elem::kBool:
        out += bits != 0 ? "true" : "false";
        break;
      case Elem::kSigned: {
        // Sign-extend from n bytes.
        int shift = static_cast<int>(64 - 8 * n);
        out += std::to_string(static_cast<int64_t>(bits << shift) >> shift);
        break;
      }
      case Elem::kUnsigned:
        out += std::to_string(bits);
        break;
      case Elem::kFloat: {
        uint32_t b32 = static_cast<uint32_t>(bits);
        float f;
        std::memcpy(&f, &b32, sizeof f);
        out += ShortestFloat(f, 9);
        break;
      }
      case Elem::kDouble: {
        double d;
        std::memcpy(&d, &bits, sizeof d);
        out += ShortestFloat(d, 17);
        break;
      }
      case Elem::kNone:
        break;
    }
  }
  return out + "])";
}

// --------------------------------------------------------------- parsing ---

// A cursor over the text with the error of the first failure.
class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}

  void SkipSpace() {
    while (pos_ < s_.size() && std::strchr(" \t\n\r", s_[pos_]) != nullptr) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  bool Expect(char c) {
    if (Consume(c)) return true;
    return Fail(std::string("expected '") + c + "'");
  }
  // A bare token: up to a delimiter of the enclosing syntax.
  std::string Token() {
    SkipSpace();
    size_t b = pos_;
    while (pos_ < s_.size() && std::strchr(",[]() \t\n\r", s_[pos_]) == nullptr) ++pos_;
    return s_.substr(b, pos_ - b);
  }
  // Bare text up to `,` or `]` (a list's unquoted string), trimmed.
  std::string UntilListDelimiter() {
    SkipSpace();
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ']') ++pos_;
    return Trim(s_.substr(b, pos_ - b));
  }
  std::string Rest() {
    SkipSpace();
    std::string r = Trim(s_.substr(pos_));
    pos_ = s_.size();
    return r;
  }

  bool Quoted(std::string* out);

  bool Fail(const std::string& why) {
    if (error_.empty()) {
      error_ = why + " at offset " + std::to_string(pos_) + " of \"" + s_ + "\"";
    }
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  const std::string& s_;
  size_t pos_ = 0;
  std::string error_;
};

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A '...' or "..." string with C escapes (\n \t \r \\ \' \" \ooo \xHH).
bool Reader::Quoted(std::string* out) {
  char q = Peek();
  if (q != '\'' && q != '"') return Fail("expected a quoted string");
  ++pos_;
  out->clear();
  while (pos_ < s_.size() && s_[pos_] != q) {
    char c = s_[pos_++];
    if (c != '\\') {
      *out += c;
      continue;
    }
    if (pos_ >= s_.size()) break;
    char e = s_[pos_++];
    switch (e) {
      case 'n':
        *out += '\n';
        break;
      case 't':
        *out += '\t';
        break;
      case 'r':
        *out += '\r';
        break;
      case '\\':
      case '\'':
      case '"':
      case '?':
        *out += e;
        break;
      case 'x': {
        int v = 0, n = 0;
        for (; n < 2 && pos_ < s_.size() && HexDigit(s_[pos_]) >= 0; ++n) {
          v = v * 16 + HexDigit(s_[pos_++]);
        }
        if (n == 0) return Fail("\\x without hex digits");
        *out += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int n = 1; n < 3 && pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '7'; ++n) {
            v = v * 8 + (s_[pos_++] - '0');
          }
          if (v > 0xff) return Fail("octal escape out of range");
          *out += static_cast<char>(v);
        } else {
          return Fail(std::string("unknown escape \\") + e);
        }
    }
  }
  if (pos_ >= s_.size()) return Fail("unterminated string");
  ++pos_;  // closing quote
  return true;
}

bool ParseInt(const std::string& tok, int64_t* out) {
  if (tok.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(tok.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseUint(const std::string& tok, uint64_t* out) {
  if (tok.empty() || tok[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(tok.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

template <typename T>
bool ParseReal(const std::string& tok, T* out) {
  if (tok.empty()) return false;
  char* end = nullptr;
  // ERANGE (underflow to a denormal/zero) still yields the nearest value.
  T v = sizeof(T) == sizeof(float) ? static_cast<T>(std::strtof(tok.c_str(), &end))
                                   : static_cast<T>(std::strtod(tok.c_str(), &end));
  if (*end != '\0') return false;
  *out = v;
  return true;
}

bool ParseBool(const std::string& tok, bool* out) {
  if (tok != "true" && tok != "false") return false;
  *out = tok == "true";
  return true;
}

bool ReadShape(Reader* r, Shape* out) {
  *out = Shape();
  if (r->Consume('?')) {
    out->unknown_rank = true;
    return true;
  }
  if (!r->Expect('[')) return false;
  if (r->Consume(']')) return true;
  do {
    if (r->Consume('?')) {
      out->dims.push_back(-1);
      continue;
    }
    std::string tok = r->Token();
    int64_t d = 0;
    if (!ParseInt(tok, &d) || d < -1) return r->Fail("bad dimension '" + tok + "'");
    out->dims.push_back(d);
  } while (r->Consume(','));
  return r->Expect(']');
}

bool ReadType(Reader* r, TF_DataType* out) {
  std::string tok = r->Token();
  if (!ParseDataType(tok, out)) return r->Fail("unknown data type '" + tok + "'");
  return true;
}

bool ReadTensor(Reader* r, TensorValue* out) {
  *out = TensorValue();
  if (r->Token() != "Tensor" || !r->Expect('(')) {
    return r->Fail("expected Tensor(<type>, [dims], [values])");
  }
  if (!ReadType(r, &out->dtype)) return false;
  Elem e = ElemOf(out->dtype);
  if (e == Elem::kNone) {
    return r->Fail(std::string("tensors of type ") + DataTypeName(out->dtype) +
                   " have no text form");
  }
  if (!r->Expect(',') || !r->Expect('[')) return false;
  int64_t count = 1;
  if (!r->Consume(']')) {
    do {
      std::string tok = r->Token();
      int64_t d = 0;
      if (!ParseInt(tok, &d) || d < 0) return r->Fail("bad tensor dimension '" + tok + "'");
      if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
        return r->Fail("tensor too large");
      count *= d;
      out->dims.push_back(d);
    } while (r->Consume(','));
    if (!r->Expect(']')) return false;
  }
  if (!r->Expect(',') || !r->Expect('[')) return false;
  size_t n = ElemSize(out->dtype);
  int64_t got = 0;
  if (!r->Consume(']')) {
    do {
      std::string tok = r->Token();
      uint64_t bits = 0;
      bool ok = false;
      switch (e) {
        case Elem::kBool: {
          bool b = false;
          ok = ParseBool(tok, &b);
          bits = b ? 1 : 0;
          break;
        }
        case Elem::kSigned: {
          int64_t v = 0;
          int64_t lim = static_cast<int64_t>((uint64_t{1} << (8 * n - 1)) - 1);
          ok = ParseInt(tok, &v) && (n == 8 || (v <= lim && v >= -lim - 1));
          bits = static_cast<uint64_t>(v);
          break;
        }
        case Elem::kUnsigned: {
          ok = ParseUint(tok, &bits) && (n == 8 || bits < (uint64_t{1} << (8 * n)));
          break;
        }
        case Elem::kFloat: {
          float f = 0;
          uint32_t b32 = 0;
          ok = ParseReal(tok, &f);
          std::memcpy(&b32, &f, sizeof b32);
          bits = b32;
          break;
        }
        case Elem::kDouble: {
          double d = 0;
          ok = ParseReal(tok, &d);
          std::memcpy(&bits, &d, sizeof bits);
          break;
        }
        case Elem::kNone:
          break;
      }
      if (!ok) {
        return r->Fail("bad " + std::string(DataTypeName(out->dtype)) + " value '" + tok + "'");
      }
      PutLE(bits, n, &out->bytes);
      ++got;
    } while (r->Consume(','));
    if (!r->Expect(']')) return false;
  }
  if (got != count) {
    return r->Fail("tensor has " + std::to_string(got) + " values for " + std::to_string(count) +
                   " elements");
  }
  return r->Expect(')');
}

// One scalar of `kind`; `in_list`: a bare string ends at `,` or `]`.
bool ReadScalar(Reader* r, AttrValue::Kind kind, bool in_list, AttrValue* v) {
  using K = AttrValue::Kind;
  switch (kind) {
    case K::kString:
    case K::kFunc: {
      std::string s;
      char c = r->Peek();
      if (c == '\'' || c == '"') {
        if (!r->Quoted(&s)) return false;
      } else {
        s = in_list ? r->UntilListDelimiter() : r->Rest();
        if (s.empty()) return r->Fail("expected a string");
      }
      v->s = s;
      return true;
    }
    case K::kInt: {
      std::string tok = r->Token();
      if (!ParseInt(tok, &v->i)) return r->Fail("bad int '" + tok + "'");
      return true;
    }
    case K::kFloat: {
      std::string tok = r->Token();
      if (!ParseReal(tok, &v->f)) return r->Fail("bad float '" + tok + "'");
      return true;
    }
    case K::kBool: {
      std::string tok = r->Token();
      if (!ParseBool(tok, &v->b)) return r->Fail("bad bool '" + tok + "' (true or false)");
      return true;
    }
    case K::kType:
      return ReadType(r, &v->type);
    case K::kShape:
      return ReadShape(r, &v->shape);
    case K::kTensor:
      return ReadTensor(r, &v->tensor);
    case K::kNone:
      break;
  }
  return r->Fail("attr has no type");
}

void AppendToList(AttrValue::Kind kind, const AttrValue& one, AttrValue* list) {
  using K = AttrValue::Kind;
  switch (kind) {
    case K::kString:
    case K::kFunc:
      list->list_s.push_back(one.s);
      break;
    case K::kInt:
      list->list_i.push_back(one.i);
      break;
    case K::kFloat:
      list->list_f.push_back(one.f);
      break;
    case K::kBool:
      list->list_b.push_back(one.b);
      break;
    case K::kType:
      list->list_type.push_back(one.type);
      break;
    case K::kShape:
      list->list_shape.push_back(one.shape);
      break;
    case K::kTensor:
      list->list_tensor.push_back(one.tensor);
      break;
    case K::kNone:
      break;
  }
}

// The scalar value of `v` (a scalar attr, or element `i` of a list attr).
std::string ElementText(const AttrValue& v, int i) {
  using K = AttrValue::Kind;
  size_t k = static_cast<size_t>(i);
  bool l = v.is_list;
  switch (v.kind) {
    case K::kString:
    case K::kFunc:
      return Quote(l ? v.list_s[k] : v.s);
    case K::kInt:
      return std::to_string(l ? v.list_i[k] : v.i);
    case K::kFloat:
      return ShortestFloat(l ? v.list_f[k] : v.f, 9);
    case K::kBool:
      return (l ? v.list_b[k] : v.b) ? "true" : "false";
    case K::kType:
      return TypeText(l ? v.list_type[k] : v.type);
    case K::kShape:
      return ShapeText(l ? v.list_shape[k] : v.shape);
    case K::kTensor:
      return TensorText(l ? v.list_tensor[k] : v.tensor);
    case K::kNone:
      break;
  }
  return "";
}

}  // namespace

int AttrValue::ListSize() const {
  if (!is_list) return -1;
  switch (kind) {
    case Kind::kString:
    case Kind::kFunc:
      return static_cast<int>(list_s.size());
    case Kind::kInt:
      return static_cast<int>(list_i.size());
    case Kind::kFloat:
      return static_cast<int>(list_f.size());
    case Kind::kBool:
      return static_cast<int>(list_b.size());
    case Kind::kType:
      return static_cast<int>(list_type.size());
    case Kind::kShape:
      return static_cast<int>(list_shape.size());
    case Kind::kTensor:
      return static_cast<int>(list_tensor.size());
    case Kind::kNone:
      break;
  }
  return 0;
}

std::string AttrTypeName(AttrValue::Kind kind, bool is_list) {
  std::string base = "none";
  for (const auto& k : kKindNames) {
    if (k.kind == kind) base = k.name;
  }
  return is_list ? "list(" + base + ")" : base;
}

bool ParseAttrType(const std::string& name, AttrValue::Kind* kind, bool* is_list) {
  std::string s = Trim(name);
  bool list = false;
  if (s.size() > 6 && s.compare(0, 4, "list") == 0 && s.back() == ')') {
    std::string inner = Trim(s.substr(4));
    if (inner.empty() || inner[0] != '(') return false;
    s = Trim(inner.substr(1, inner.size() - 2));
    list = true;
  }
  for (const auto& k : kKindNames) {
    if (s == k.name) {
      *kind = k.kind;
      *is_list = list;
      return true;
    }
  }
  return false;
}

bool ParseAttrValue(const std::string& text, AttrValue::Kind kind, bool is_list, AttrValue* out,
                    std::string* error) {
  AttrValue v;
  v.kind = kind;
  v.is_list = is_list;
  Reader r(text);
  bool ok = true;
  if (kind == AttrValue::Kind::kNone) {
    ok = r.Fail("attr has no type");
  } else if (!is_list) {
    ok = ReadScalar(&r, kind, false, &v);
  } else if (!r.Consume('[')) {
    ok = r.Fail("a list value is written [v, ...]");
  } else if (!r.Consume(']')) {
    do {
      AttrValue one;
      ok = ReadScalar(&r, kind, true, &one);
      if (ok) AppendToList(kind, one, &v);
    } while (ok && r.Consume(','));
    ok = ok && r.Expect(']');
  }
  if (ok && !r.AtEnd()) ok = r.Fail("unexpected text after the value");
  if (!ok) {
    if (error != nullptr) {
      *error = "cannot read a " + AttrTypeName(kind, is_list) + " value: " + r.error();
    }
    return false;
  }
  if (out != nullptr) *out = std::move(v);
  return true;
}

std::string AttrValueText(const AttrValue& v) {
  if (!v.is_list) return ElementText(v, 0);
  std::string out = "[";
  for (int i = 0, n = v.ListSize(); i < n; ++i) {
    if (i > 0) out += ", ";
    out += ElementText(v, i);
  }
  return out + "]";
}

const char* DataTypeName(TF_DataType dt) {
  for (const auto& e : kTypeNames) {
    if (e.dt == dt) return e.name;
  }
  return "invalid";
}

bool ParseDataType(const std::string& name, TF_DataType* out) {
  std::string lower = name;
  if (name.size() > 3 && name.compare(0, 3, "DT_") == 0) {
    // DT_FLOAT: the enum spelling, upper case only (as TensorFlow writes it).
    lower = name.substr(3);
    for (char& c : lower) {
      if (c >= 'a' && c <= 'z') return false;
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
  }
  for (const auto& e : kTypeNames) {
    if (lower == e.name) {
      if (out != nullptr) *out = e.dt;
      return true;
    }
  }
  return false;
}


std::string ShapeText(const Shape& s) {
  if (s.unknown_rank) return "?";
  std::string out = "[";
  for (size_t i = 0; i < s.dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += s.dims[i] < 0 ? "?" : std::to_string(s.dims[i]);
  }
  return out + "]";
}

}  // namespace tfp_shims
