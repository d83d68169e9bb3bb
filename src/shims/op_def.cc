// SPDX-License-Identifier: Apache-2.0
// Op definitions from spec strings, checked as TensorFlow's OpDefBuilder and
// op registry check them, and node signatures resolved from an op's def the
// way TensorFlow's graph construction infers attrs from a node's inputs.
//
// Spec syntax (TensorFlow's REGISTER_OP syntax):
//   arg    name: T | name: N * T | name: Tlist | name: float | name: Ref(...)
//   attr   name: int | name: list(shape) | name: {float, int32} |
//          name: {'SAME', 'VALID'} | name: list({...}) | name: numbertype |
//          ... [>= minimum] [= default]   (default text as in attr_value.cc)
#include "shim_internal.h"

#include "op_def.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

namespace tfp_shims {
namespace {

using Kind = AttrValue::Kind;

// TensorFlow's named type sets (types.cc), usable alone ("T: numbertype")
// or inside braces.
const std::vector<TF_DataType>* NamedTypeSet(const std::string& name) {
  static const std::vector<TF_DataType> kReal = {TF_FLOAT, TF_DOUBLE, TF_INT32,  TF_INT64,
                                                 TF_UINT8, TF_INT16,  TF_INT8,   TF_UINT16,
                                                 TF_HALF,  TF_UINT32, TF_UINT64, TF_BFLOAT16};
  static const std::vector<TF_DataType> kNumber = {
      TF_FLOAT,  TF_DOUBLE, TF_INT64,     TF_INT32,      TF_UINT8,   TF_UINT16,
      TF_INT16,  TF_INT8,   TF_COMPLEX64, TF_COMPLEX128, TF_QINT8,   TF_QUINT8,
      TF_QINT32, TF_HALF,   TF_UINT32,    TF_UINT64,     TF_BFLOAT16};
  static const std::vector<TF_DataType> kQuantized = {TF_QINT8, TF_QUINT8, TF_QINT16, TF_QUINT16,
                                                      TF_QINT32};
  if (name == "numbertype" || name == "numerictype") return &kNumber;
  if (name == "realnumbertype" || name == "realnumerictype") return &kReal;
  if (name == "quantizedtype") return &kQuantized;
  return nullptr;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

// A cursor for the spec grammars. Ident() reads a run of [A-Za-z0-9_];
// callers check it against the rules for what it names.
class Scanner {
 public:
  explicit Scanner(const std::string& s) : s_(s) {}
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  bool Consume(const char* lit) {
    SkipSpace();
    size_t n = std::char_traits<char>::length(lit);
    if (s_.compare(pos_, n, lit) != 0) return false;
    pos_ += n;
    return true;
  }
  std::string Ident() {
    SkipSpace();
    size_t b = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
    }
    return s_.substr(b, pos_ - b);
  }
  // Text up to the `close` matching an already consumed opener, outside
  // quotes; false if there is none.
  bool UpTo(char close, std::string* out) {
    char quote = '\0';
    for (size_t i = pos_; i < s_.size(); ++i) {
      char c = s_[i];
      if (quote != '\0') {
        if (c == '\\')
          ++i;
        else if (c == quote)
          quote = '\0';
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == close) {
        *out = s_.substr(pos_, i - pos_);
        pos_ = i + 1;
        return true;
      }
    }
    return false;
  }
  std::string Rest() {
    std::string r = s_.substr(pos_);
    pos_ = s_.size();
    return Trim(r);
  }

 private:
  const std::string& s_;
  size_t pos_ = 0;
};

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLetter(char c) { return IsLower(c) || IsUpper(c); }

// Arg names: [a-z][a-z0-9_]*, as TensorFlow requires.
bool ValidArgName(const std::string& n) {
  if (n.empty() || !IsLower(n[0])) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return IsLower(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Attr names: [A-Za-z][A-Za-z0-9_]*.
bool ValidAttrName(const std::string& n) {
  if (n.empty() || !IsLetter(n[0])) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return IsLetter(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Op names: CamelCase words joined by '>' ("Foo>Bar"); names of internal
// ops start with '_' and are only required to be word characters.
bool ValidOpName(const std::string& n) {
  auto word = [](char c) {
    return IsLetter(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  };
  if (!n.empty() && n[0] == '_') return n.size() > 1 && std::all_of(n.begin(), n.end(), word);
  size_t i = 0;
  while (true) {
    if (i >= n.size() || !IsUpper(n[i])) return false;
    while (i < n.size() && word(n[i])) ++i;
    if (i == n.size()) return true;
    if (n[i] != '>') return false;
    ++i;
  }
}

std::string TypeSetText(const std::vector<TF_DataType>& types) {
  std::string s = "{";
  for (size_t i = 0; i < types.size(); ++i)
    s += (i > 0 ? ", " : "") + std::string(DataTypeName(types[i]));
  return s + "}";
}

std::string StringSetText(const std::vector<std::string>& strings) {
  AttrValue v;
  v.kind = Kind::kString;
  v.is_list = true;
  v.list_s = strings;
  std::string s = AttrValueText(v);  // "['a', 'b']"
  return "{" + s.substr(1, s.size() - 2) + "}";
}

std::string ArgSpecText(const ArgDef& a) {
  std::string t;
  if (!a.type_list_attr.empty()) {
    t = a.type_list_attr;
  } else {
    t = !a.type_attr.empty() ? a.type_attr : DataTypeName(a.type);
    if (!a.number_attr.empty()) t = a.number_attr + " * " + t;
  }
  if (a.is_ref) t = "Ref(" + t + ")";
  return a.name + ": " + t;
}

std::string AttrSpecText(const AttrDef& a) {
  std::string t = AttrTypeName(a.kind, a.is_list);
  std::string set;
  if (!a.allowed_types.empty()) set = TypeSetText(a.allowed_types);
  if (!a.allowed_strings.empty()) set = StringSetText(a.allowed_strings);
  if (!set.empty()) t = a.is_list ? "list(" + set + ")" : set;
  std::string s = a.name + ": " + t;
  if (a.has_minimum) s += " >= " + std::to_string(a.minimum);
  if (a.has_default) s += " = " + AttrValueText(a.default_value);
  return s;
}

// Whether `v` is a value `attr` accepts: kind, allowed values, minimum.
bool CheckAttrValue(const AttrDef& attr, const AttrValue& v, std::string* why) {
  if (v.kind != attr.kind || v.is_list != attr.is_list) {
    *why = "is a " + AttrTypeName(v.kind, v.is_list) + ", not a " +
           AttrTypeName(attr.kind, attr.is_list);
    return false;
  }
  if (!attr.allowed_types.empty()) {
    std::vector<TF_DataType> values = attr.is_list ? v.list_type : std::vector<TF_DataType>{v.type};
    for (TF_DataType dt : values) {
      if (std::find(attr.allowed_types.begin(), attr.allowed_types.end(), dt) ==
          attr.allowed_types.end()) {
        *why = "has type " + std::string(DataTypeName(dt)) + ", not one of the allowed " +
               TypeSetText(attr.allowed_types);
        return false;
      }
    }
  }
  if (!attr.allowed_strings.empty()) {
    std::vector<std::string> values = attr.is_list ? v.list_s : std::vector<std::string>{v.s};
    for (const auto& s : values) {
      if (std::find(attr.allowed_strings.begin(), attr.allowed_strings.end(), s) ==
          attr.allowed_strings.end()) {
        AttrValue one;
        one.kind = Kind::kString;
        one.s = s;
        *why = "is " + AttrValueText(one) + ", not one of the allowed " +
               StringSetText(attr.allowed_strings);
        return false;
      }
    }
  }
  if (attr.has_minimum) {
    int64_t n = attr.is_list ? v.ListSize() : v.i;
    if (n < attr.minimum) {
      *why = attr.is_list ? "has " + std::to_string(n) + " values, fewer than the minimum " +
                                std::to_string(attr.minimum)
                          : "is " + std::to_string(n) + ", less than the minimum " +
                                std::to_string(attr.minimum);
      return false;
    }
  }
  return true;
}

// Parses the inside of "{...}" (quoted strings, or type names and named
// type sets) into out's kind and allowed values.
bool ParseAllowed(const std::string& body, AttrDef* out, std::string* error) {
  std::string items = Trim(body);
  if (items.empty()) {
    *error = "an empty {} allows nothing";
    return false;
  }
  if (items[0] == '\'' || items[0] == '"') {
    AttrValue v;
    if (!ParseAttrValue("[" + items + "]", Kind::kString, true, &v, error)) return false;
    out->kind = Kind::kString;
    out->allowed_strings = v.list_s;
    return true;
  }
  out->kind = Kind::kType;
  size_t start = 0;
  while (start <= items.size()) {
    size_t comma = items.find(',', start);
    std::string item =
        Trim(items.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    TF_DataType dt;
    if (const auto* set = NamedTypeSet(item)) {
      out->allowed_types.insert(out->allowed_types.end(), set->begin(), set->end());
    } else if (ParseDataType(item, &dt)) {
      out->allowed_types.push_back(dt);
    } else {
      *error = "'" + item + "' is not a data type";
      return false;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

const AttrDef* FindIn(const std::vector<AttrDef>& attrs, const std::string& name) {
  for (const auto& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Checks one arg and resolves its type reference against the op's attrs.
bool ValidateArg(const OpDef& op, ArgDef* arg, const char* what, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = std::string(what) + " '" + arg->name + "': " + why;
    return false;
  };
  if (!ValidArgName(arg->name)) return fail("names must match [a-z][a-z0-9_]*");
  int sources = (arg->type != 0) + !arg->type_attr.empty() + !arg->type_list_attr.empty();
  if (sources != 1) return fail("needs exactly one of a type, a type attr or a list(type) attr");
  if (!arg->type_attr.empty()) {
    const AttrDef* a = FindIn(op.attrs, arg->type_attr);
    if (a == nullptr)
      return fail("refers to attr '" + arg->type_attr + "', which the op does not have");
    if (a->kind != Kind::kType) {
      return fail("refers to attr '" + a->name + "' of type " + AttrTypeName(a->kind, a->is_list) +
                  ", not type or list(type)");
    }
    if (a->is_list) std::swap(arg->type_attr, arg->type_list_attr);  // "x: Tlist"
  } else if (!arg->type_list_attr.empty()) {
    const AttrDef* a = FindIn(op.attrs, arg->type_list_attr);
    if (a == nullptr || a->kind != Kind::kType || !a->is_list) {
      return fail("refers to '" + arg->type_list_attr +
                  "', which is not a list(type) attr of the op");
    }
  }
  if (!arg->number_attr.empty()) {
    if (!arg->type_list_attr.empty()) return fail("a list(type) attr cannot be repeated with N *");
    const AttrDef* a = FindIn(op.attrs, arg->number_attr);
    if (a == nullptr)
      return fail("refers to attr '" + arg->number_attr + "', which the op does not have");
    if (a->kind != Kind::kInt || a->is_list) {
      return fail("its length attr '" + a->name + "' is a " + AttrTypeName(a->kind, a->is_list) +
                  ", not an int");
    }
    if (!a->has_minimum || a->minimum < 0) {
      return fail("its length attr '" + a->name + "' needs a minimum >= 0 (\"" + a->name +
                  ": int >= 0\")");
    }
  }
  return true;
}

std::string ArgLabel(const std::vector<std::string>& arg_names, size_t index) {
  return "input '" + arg_names[index] + "' (#" + std::to_string(index) + ")";
}

}  // namespace

bool ParseArgSpec(const std::string& spec, ArgDef* out, std::string* error) {
  std::string err;
  ArgDef a;
  Scanner s(spec);
  a.name = s.Ident();
  if (a.name.empty() || !s.Consume(":")) {
    err = "expected 'name: type'";
  } else {
    bool ref = s.Consume("Ref(");
    std::string first = s.Ident();
    std::string type = first;
    bool repeated = s.Consume("*");  // "N * T"
    if (repeated) {
      a.number_attr = first;
      type = s.Ident();
    }
    if (ref && !s.Consume(")")) {
      err = "Ref( without )";
    } else if (repeated && !ValidAttrName(a.number_attr)) {
      err = "expected a length attr name before '*'";
    } else if (type.empty()) {
      err = "expected a type or attr name after ':'";
    } else if (!s.AtEnd()) {
      err = "unexpected text after the type";
    } else if (!ValidArgName(a.name)) {
      err = "'" + a.name + "' is not an arg name ([a-z][a-z0-9_]*)";
    } else if (ParseDataType(type, &a.type)) {
      // a fixed type: "x: float"
    } else if (ValidAttrName(type)) {
      a.type_attr = type;  // or a list(type) attr: see ValidateOpDef
    } else {
      err = "'" + type + "' is neither a data type nor an attr name";
    }
    a.is_ref = ref;
  }
  if (!err.empty()) {
    if (error != nullptr) *error = "bad arg spec \"" + spec + "\": " + err;
    return false;
  }
  if (out != nullptr) *out = std::move(a);
  return true;
}

bool ParseAttrSpec(const std::string& spec, AttrDef* out, std::string* error) {
  std::string err;
  AttrDef a;
  Scanner s(spec);
  a.name = s.Ident();
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = "bad attr spec \"" + spec + "\": " + why;
    return false;
  };
  if (a.name.empty() || !s.Consume(":")) return fail("expected 'name: type'");
  if (!ValidAttrName(a.name))
    return fail("'" + a.name + "' is not an attr name ([A-Za-z][A-Za-z0-9_]*)");

  // The type: a name, a named type set, {allowed values}, or list(<one of those>).
  bool list = s.Consume("list(");
  if (s.Consume("{")) {
    std::string body;
    if (!s.UpTo('}', &body)) return fail("{ without }");
    if (!ParseAllowed(body, &a, &err)) return fail(err);
  } else {
    std::string t = s.Ident();
    if (const auto* set = NamedTypeSet(t)) {
      a.kind = Kind::kType;
      a.allowed_types = *set;
    } else {
      bool inner_list = false;
      if (!ParseAttrType(t, &a.kind, &inner_list)) {
        return fail(t.empty() ? "expected a type after ':'" : "unknown attr type '" + t + "'");
      }
    }
  }
  if (list && !s.Consume(")")) return fail("list( without )");
  a.is_list = list;

  if (s.Consume(">=")) {
    if (a.kind != Kind::kInt && !a.is_list) {
      return fail("a minimum applies to int and list attrs, not " +
                  AttrTypeName(a.kind, a.is_list));
    }
    std::string num = s.Ident();
    bool neg = num.empty() && s.Consume("-");
    if (neg) num = s.Ident();
    AttrValue m;
    if (!ParseAttrValue((neg ? "-" : "") + num, Kind::kInt, false, &m, nullptr)) {
      return fail("expected an integer after >=");
    }
    a.has_minimum = true;
    a.minimum = m.i;
  }
  if (s.Consume("=")) {
    std::string text = s.Rest();
    if (!ParseAttrValue(text, a.kind, a.is_list, &a.default_value, &err))
      return fail("default: " + err);
    std::string why;
    if (!CheckAttrValue(a, a.default_value, &why)) return fail("the default " + why);
    a.has_default = true;
  }
  if (!s.AtEnd()) return fail("unexpected text after the type");
  if (out != nullptr) *out = std::move(a);
  return true;
}

bool ValidateOpDef(OpDef* op, std::string* error) {
  std::string err;
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = "op '" + op->name + "': " + why;
    return false;
  };
  if (!ValidOpName(op->name)) {
    return fail("invalid op name (CamelCase: [A-Z][A-Za-z0-9_]*, or _ for internal ops)");
  }
  std::set<std::string> names;  // attrs and args share one namespace, as in TensorFlow
  for (const auto& a : op->attrs) {
    if (!ValidAttrName(a.name)) return fail("invalid attr name '" + a.name + "'");
    if (!names.insert(a.name).second) return fail("duplicate name '" + a.name + "'");
    if (a.kind == Kind::kNone) return fail("attr '" + a.name + "' has no type");
    std::string why;
    if (a.has_default && !CheckAttrValue(a, a.default_value, &why)) {
      return fail("attr '" + a.name + "': the default " + why);
    }
  }
  for (auto* args : {&op->inputs, &op->outputs}) {
    const char* what = args == &op->inputs ? "input" : "output";
    for (auto& arg : *args) {
      if (!ValidateArg(*op, &arg, what, &err)) return fail(err);
      if (!names.insert(arg.name).second) return fail("duplicate name '" + arg.name + "'");
    }
  }
  return true;
}

const AttrDef* OpDef::FindAttr(const std::string& attr) const { return FindIn(attrs, attr); }

std::string OpDef::Signature() const {
  std::string s = name + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i > 0 ? ", " : "") + ArgSpecText(inputs[i]);
  s += ") -> (";
  for (size_t i = 0; i < outputs.size(); ++i) s += (i > 0 ? ", " : "") + ArgSpecText(outputs[i]);
  s += ")";
  for (size_t i = 0; i < attrs.size(); ++i) s += (i > 0 ? ", " : "; ") + AttrSpecText(attrs[i]);
  return s;
}

bool ResolveNode(const OpDef& op, const AttrMap& given, const std::vector<TF_DataType>& input_types,
                 NodeSignature* out, TF_Status* status) {
  auto fail = [&](const std::string& why) {
    std::string msg = "op '" + op.name + "': " + why;
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
    return false;
  };
  AttrMap attrs;
  for (const auto& kv : given) {
    const AttrDef* def = op.FindAttr(kv.first);
    if (def == nullptr && !kv.first.empty() && kv.first[0] == '_') {
      // Internal attrs ("_kernel" picks a kernel label, "_class", ...) ride
      // along on any node in TensorFlow, undeclared.
      attrs[kv.first] = kv.second;
      continue;
    }
    if (def == nullptr) return fail("has no attr '" + kv.first + "'");
    if (kv.second.kind != def->kind || kv.second.is_list != def->is_list) {
      return fail("attr '" + kv.first + "' is a " + AttrTypeName(def->kind, def->is_list) +
                  ", given a " + AttrTypeName(kv.second.kind, kv.second.is_list));
    }
    attrs[kv.first] = kv.second;
  }

  // How many inputs each arg takes: known from given attrs, else inferred
  // from the total -- possible when the unknown counts all hang on one attr.
  std::vector<int64_t> counts(op.inputs.size(), -1);
  int64_t known = 0;
  std::map<std::string, int64_t> unknown;  // length attr -> args using it
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const ArgDef& arg = op.inputs[i];
    const std::string& len_attr = !arg.number_attr.empty() ? arg.number_attr : arg.type_list_attr;
    if (len_attr.empty()) {
      counts[i] = 1;
    } else if (attrs.count(len_attr) != 0) {
      const AttrValue& v = attrs[len_attr];
      counts[i] = arg.number_attr.empty() ? v.ListSize() : v.i;
      if (counts[i] < 0)
        return fail("attr '" + len_attr + "' = " + std::to_string(v.i) + " is negative");
    } else {
      ++unknown[len_attr];
      continue;
    }
    known += counts[i];
  }
  const int64_t given_n = static_cast<int64_t>(input_types.size());
  if (unknown.size() > 1) {
    std::string list;
    for (const auto& kv : unknown) list += (list.empty() ? "'" : ", '") + kv.first + "'";
    return fail("cannot tell how " + std::to_string(given_n) + " inputs split between attrs " +
                list + "; give them explicitly");
  }
  int64_t per_arg = 0;
  if (unknown.empty()) {
    if (given_n != known) {
      return fail("takes " + std::to_string(known) + " inputs, given " + std::to_string(given_n));
    }
  } else {
    const auto& u = *unknown.begin();
    int64_t rest = given_n - known;
    if (rest < 0 || rest % u.second != 0) {
      return fail("given " + std::to_string(given_n) + " inputs, which does not fit its arg" +
                  " lengths (attr '" + u.first + "')");
    }
    per_arg = rest / u.second;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (counts[i] < 0) counts[i] = per_arg;
    }
    const AttrDef* def = op.FindAttr(u.first);
    if (def != nullptr && def->kind == Kind::kInt) {
      AttrValue n;
      n.kind = Kind::kInt;
      n.i = per_arg;
      attrs[u.first] = n;
    }
  }

  // Types: check fixed ones, check or infer attr-given ones.
  NodeSignature sig;
  sig.input_types = input_types;
  size_t next = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const ArgDef& arg = op.inputs[i];
    bool infer_list = !arg.type_list_attr.empty() && attrs.count(arg.type_list_attr) == 0;
    AttrValue inferred_list;
    inferred_list.kind = Kind::kType;
    inferred_list.is_list = true;
    for (int64_t j = 0; j < counts[i]; ++j, ++next) {
      sig.input_arg.push_back(arg.name);
      TF_DataType dt = input_types[next];
      std::string label = ArgLabel(sig.input_arg, next);
      if (!arg.type_list_attr.empty()) {
        if (infer_list) {
          inferred_list.list_type.push_back(dt);
        } else if (attrs[arg.type_list_attr].list_type[static_cast<size_t>(j)] != dt) {
          return fail(label + " has type " + DataTypeName(dt) + " but attr '" + arg.type_list_attr +
                      "' says " +
                      DataTypeName(attrs[arg.type_list_attr].list_type[static_cast<size_t>(j)]));
        }
      } else if (!arg.type_attr.empty()) {
        auto it = attrs.find(arg.type_attr);
        if (it == attrs.end()) {
          AttrValue t;
          t.kind = Kind::kType;
          t.type = dt;
          attrs[arg.type_attr] = t;
        } else if (it->second.type != dt) {
          return fail(label + " has type " + DataTypeName(dt) + " but attr '" + arg.type_attr +
                      "' is " + DataTypeName(it->second.type));
        }
      } else if (arg.type != dt) {
        return fail(label + " has type " + DataTypeName(dt) + ", expected " +
                    DataTypeName(arg.type));
      }
    }
    if (infer_list) attrs[arg.type_list_attr] = inferred_list;
  }

  // Defaults, then every attr must be set and acceptable.
  for (const auto& def : op.attrs) {
    if (attrs.count(def.name) == 0) {
      if (!def.has_default) {
        return fail("attr '" + def.name +
                    "' is not given, has no default and the inputs do not determine it");
      }
      attrs[def.name] = def.default_value;
    }
    std::string why;
    if (!CheckAttrValue(def, attrs[def.name], &why)) return fail("attr '" + def.name + "' " + why);
  }

  for (const auto& arg : op.outputs) {
    std::vector<TF_DataType> types;
    if (!arg.type_list_attr.empty()) {
      types = attrs[arg.type_list_attr].list_type;
    } else {
      TF_DataType dt = !arg.type_attr.empty() ? attrs[arg.type_attr].type : arg.type;
      int64_t n = !arg.number_attr.empty() ? attrs[arg.number_attr].i : 1;
      if (n < 0)
        return fail("attr '" + arg.number_attr + "' = " + std::to_string(n) + " is negative");
      types.assign(static_cast<size_t>(n), dt);
    }
    for (TF_DataType dt : types) {
      sig.output_types.push_back(dt);
      sig.output_arg.push_back(arg.name);
    }
  }
  sig.attrs = std::move(attrs);
  if (out != nullptr) *out = std::move(sig);
  TF_SetStatus(status, TF_OK, "");
  return true;
}

}  // namespace tfp_shims
