// SPDX-License-Identifier: Apache-2.0
// The op registry: TensorFlow's own ops from the compiled-in table
// (builtin_ops.inc, generated from abi/ops/tf-<release>.txt), plus the ops
// plugins register through ops.h.
//
// Built-in ops are parsed on first lookup, not at load time: a host touches
// a handful of the ~2000 ops, and a plugin library's load should stay cheap.
// Parsed defs are cached and never freed, so their pointers stay valid.
// One mutex guards both caches; parsing one op under it is microseconds.
#include "shim_internal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "op_def.h"

namespace tfp_shims {
namespace {

// One op of the table: specs joined by '|' (a spec never holds a bare '|':
// tools/tf_opdefs.py escapes it inside strings), flags joined by ','.
struct BuiltinOpSpec {
  const char* name;
  const char* inputs;
  const char* outputs;
  const char* attrs;
  const char* flags;
  int deprecated_version;  // 0: not deprecated
};

#define TFP_BUILTIN_OPS_SOURCE(release, source)
#define TFP_BUILTIN_OP(name, inputs, outputs, attrs, flags, deprecated) \
  {name, inputs, outputs, attrs, flags, deprecated},
constexpr BuiltinOpSpec kBuiltinOps[] = {
#include "builtin_ops.inc"
};
#undef TFP_BUILTIN_OP
#undef TFP_BUILTIN_OPS_SOURCE

#define TFP_BUILTIN_OPS_SOURCE(release, source) constexpr char kBuiltinRelease[] = release;
#define TFP_BUILTIN_OP(...)
#include "builtin_ops.inc"
#undef TFP_BUILTIN_OP
#undef TFP_BUILTIN_OPS_SOURCE

// The table is sorted by name (the generator checks), for binary search.
const BuiltinOpSpec* FindBuiltin(const std::string& name) {
  auto it = std::lower_bound(
      std::begin(kBuiltinOps), std::end(kBuiltinOps), name,
      [](const BuiltinOpSpec& op, const std::string& n) { return n.compare(op.name) > 0; });
  return it != std::end(kBuiltinOps) && name == it->name ? it : nullptr;
}

std::vector<std::string> Split(const char* joined, char sep) {
  std::vector<std::string> out;
  if (*joined == '\0') return out;
  const char* start = joined;
  for (const char* p = joined;; ++p) {
    if (*p == sep || *p == '\0') {
      out.emplace_back(start, static_cast<size_t>(p - start));
      if (*p == '\0') break;
      start = p + 1;
    }
  }
  return out;
}

// Builds the def of a table entry with the parsers plugin specs go through.
bool ParseBuiltin(const BuiltinOpSpec& spec, OpDef* op, std::string* error) {
  op->name = spec.name;
  for (const auto& s : Split(spec.attrs, '|')) {
    op->attrs.emplace_back();
    if (!ParseAttrSpec(s, &op->attrs.back(), error)) return false;
  }
  for (const auto& s : Split(spec.inputs, '|')) {
    op->inputs.emplace_back();
    if (!ParseArgSpec(s, &op->inputs.back(), error)) return false;
  }
  for (const auto& s : Split(spec.outputs, '|')) {
    op->outputs.emplace_back();
    if (!ParseArgSpec(s, &op->outputs.back(), error)) return false;
  }
  for (const auto& f : Split(spec.flags, ',')) {
    if (f == "commutative")
      op->is_commutative = true;
    else if (f == "aggregate")
      op->is_aggregate = true;
    else if (f == "stateful")
      op->is_stateful = true;
    else if (f == "allows_uninitialized_input")
      op->allows_uninitialized_input = true;
    else {
      *error = "unknown flag '" + f + "'";
      return false;
    }
  }
  op->deprecated_version = spec.deprecated_version;
  return ValidateOpDef(op, error);
}

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<OpDef>> builtin;  // parsed so far
  std::vector<std::unique_ptr<OpDef>> plugin;             // registration order
  std::map<std::string, const OpDef*> plugin_by_name;
};

Registry& Reg() {
  static Registry* r = new Registry();  // never destroyed: lookups may outlive exit handlers
  return *r;
}

const OpDef* FindPlugin(const Registry& r, const std::string& name) {
  auto it = r.plugin_by_name.find(name);
  return it != r.plugin_by_name.end() ? it->second : nullptr;
}

}  // namespace

const OpDef* LookupOp(const std::string& name) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (const OpDef* op = FindPlugin(r, name)) return op;
  auto it = r.builtin.find(name);
  if (it != r.builtin.end()) return it->second.get();
  const BuiltinOpSpec* spec = FindBuiltin(name);
  if (spec == nullptr) return nullptr;
  auto op = std::make_unique<OpDef>();
  std::string error;
  if (!ParseBuiltin(*spec, op.get(), &error)) {
    // The table is generated and every entry is parsed by the tests, so this
    // is a build defect; say so rather than pretend the op does not exist.
    std::fprintf(stderr, "tfplugin shims: built-in op %s does not parse: %s\n", spec->name,
                 error.c_str());
    return nullptr;
  }
  return r.builtin.emplace(name, std::move(op)).first->second.get();
}

void RegisterPluginOp(OpDef def, TF_Status* status) {
  std::string error;
  if (!ValidateOpDef(&def, &error)) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, error.c_str());
    return;
  }
  def.from_plugin = true;
  def.owner = Registrant();
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  if (FindBuiltin(def.name) != nullptr) {
    std::string msg = "op '" + def.name + "' is already registered: TensorFlow " + kBuiltinRelease +
                      " defines it";
    TF_SetStatus(status, TF_ALREADY_EXISTS, msg.c_str());
    return;
  }
  if (FindPlugin(r, def.name) != nullptr) {
    std::string msg = "op '" + def.name + "' is already registered by a plugin";
    TF_SetStatus(status, TF_ALREADY_EXISTS, msg.c_str());
    return;
  }
  r.plugin.push_back(std::make_unique<OpDef>(std::move(def)));
  r.plugin_by_name[r.plugin.back()->name] = r.plugin.back().get();
  TF_SetStatus(status, TF_OK, "");
}

std::vector<std::string> PluginOpNames() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& op : r.plugin) names.push_back(op->name);
  return names;
}

std::vector<std::string> PluginOpNamesOf(int owner) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& op : r.plugin) {
    if (op->owner == owner) names.push_back(op->name);
  }
  return names;
}

void RemovePluginOpsOf(int owner) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.plugin.begin(); it != r.plugin.end();) {
    if ((*it)->owner == owner) {
      r.plugin_by_name.erase((*it)->name);
      it = r.plugin.erase(it);
    } else {
      ++it;
    }
  }
}

void ResetPluginOps() {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.plugin_by_name.clear();
  r.plugin.clear();
}

const char* BuiltinOpsRelease() { return kBuiltinRelease; }

std::vector<std::string> BuiltinOpNames() {
  std::vector<std::string> names;
  names.reserve(std::size(kBuiltinOps));
  for (const auto& op : kBuiltinOps) names.emplace_back(op.name);
  return names;
}

}  // namespace tfp_shims
