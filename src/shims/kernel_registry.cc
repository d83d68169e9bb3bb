// SPDX-License-Identifier: Apache-2.0
// TF_KernelBuilder and the kernel registry (see kernel_registry.h).
//
// Ownership follows TensorFlow: TF_RegisterKernelBuilder takes the builder
// (TensorFlow frees it when the registry goes away), so a plugin must not
// TF_DeleteKernelBuilder it afterwards. In TensorFlow that is a double free;
// here the shims keep track of live builders, ignore the second delete and
// record a contract note.
#include "kernel_registry.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <sstream>

#include "attr_value.h"
#include "shim_internal.h"

struct TF_KernelBuilder {
  tfp_shims::KernelDef def;
  bool registered = false;
};

namespace tfp_shims {
namespace {

std::mutex g_mu;
std::vector<KernelDef>& Kernels() {
  static auto* kernels = new std::vector<KernelDef>();  // never destroyed: plugins may outlive us
  return *kernels;
}
// Builders handed out and not deleted; registered ones stay here until the
// registry is reset, so a late TF_DeleteKernelBuilder is recognised.
std::set<const TF_KernelBuilder*>& LiveBuilders() {
  static auto* live = new std::set<const TF_KernelBuilder*>();
  return *live;
}

TF_KernelBuilder* NewBuilder(const char* op_name, const char* device_name) {
  auto* b = new TF_KernelBuilder();
  b->def.op = Str(op_name);
  b->def.device_type = Str(device_name);
  std::lock_guard<std::mutex> lock(g_mu);
  LiveBuilders().insert(b);
  return b;
}

bool IsLive(const TF_KernelBuilder* b) {
  std::lock_guard<std::mutex> lock(g_mu);
  return LiveBuilders().count(b) != 0;
}

// Why `k` does not fit `attrs` ("" if it does), as TensorFlow decides.
std::string Mismatch(const KernelDef& k, const AttrMap& attrs) {
  auto label = attrs.find("_kernel");
  std::string node_label = label != attrs.end() ? label->second.s : "";
  if (node_label != k.label) return "label '" + k.label + "' != '" + node_label + "'";
  for (const auto& c : k.type_constraints) {
    auto it = attrs.find(c.first);
    if (it == attrs.end()) return "constrains attr '" + c.first + "', which the node does not have";
    const AttrValue& v = it->second;
    if (v.kind != AttrValue::Kind::kType) {
      return "constrains attr '" + c.first + "', which is not a type";
    }
    if (!v.is_list && v.type != c.second) {
      return c.first + "=" + DataTypeName(v.type) + " is not " + DataTypeName(c.second);
    }
    if (v.is_list) {
      for (TF_DataType t : v.list_type) {
        if (t != c.second) return c.first + " holds " + DataTypeName(t) + ", not " + DataTypeName(c.second);
      }
    }
  }
  return "";
}

}  // namespace

bool KernelDef::IsHostMemoryArg(const std::string& arg) const {
  return std::find(host_memory_args.begin(), host_memory_args.end(), arg) != host_memory_args.end();
}

std::string KernelDef::Describe() const {
  std::ostringstream out;
  out << op << " on " << device_type;
  if (!type_constraints.empty()) {
    out << " {";
    for (size_t i = 0; i < type_constraints.size(); ++i) {
      out << (i ? ", " : "") << type_constraints[i].first << "=" << DataTypeName(type_constraints[i].second);
    }
    out << "}";
  }
  if (!host_memory_args.empty()) {
    out << " host_memory=[";
    for (size_t i = 0; i < host_memory_args.size(); ++i) out << (i ? ", " : "") << host_memory_args[i];
    out << "]";
  }
  if (!label.empty()) out << " label=" << label;
  if (priority != 0) out << " priority=" << priority;
  if (compute_async != nullptr) out << " async";
  return out.str();
}

std::vector<KernelDef> RegisteredKernels() {
  std::lock_guard<std::mutex> lock(g_mu);
  return Kernels();
}

bool SelectKernel(const std::string& op, const std::string& device_type, const AttrMap& attrs,
                  KernelDef* out, TF_Status* status) {
  std::vector<KernelDef> kernels = RegisteredKernels();
  const KernelDef* best = nullptr;
  bool tie = false;
  std::ostringstream rejected;
  for (const KernelDef& k : kernels) {
    if (k.op != op || k.device_type != device_type) continue;
    std::string why = Mismatch(k, attrs);
    if (!why.empty()) {
      rejected << "\n  " << k.Describe() << ": " << why;
      continue;
    }
    if (best == nullptr || k.priority > best->priority) {
      best = &k;
      tie = false;
    } else if (k.priority == best->priority) {
      tie = true;
    }
  }
  if (best == nullptr) {
    std::string msg = "No registered '" + op + "' kernel for '" + device_type +
                      "' devices compatible with the node's attrs";
    std::string r = rejected.str();
    msg += r.empty() ? " (no kernel of this op is registered for this device type)"
                     : "; registered:" + r;
    TF_SetStatus(status, TF_NOT_FOUND, msg.c_str());
    return false;
  }
  if (tie) {
    std::string msg = "Multiple '" + op + "' kernels for '" + device_type +
                      "' match the node with the same priority " + std::to_string(best->priority) +
                      " (TensorFlow rejects this; give one a higher TF_KernelBuilder_Priority)";
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
    return false;
  }
  *out = *best;
  TF_SetStatus(status, TF_OK, "");
  return true;
}

void RemoveKernelsOf(int owner) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& k = Kernels();
  k.erase(std::remove_if(k.begin(), k.end(), [owner](const KernelDef& d) { return d.owner == owner; }), k.end());
}

void ResetKernels() {
  std::lock_guard<std::mutex> lock(g_mu);
  Kernels().clear();
  // Registered builders were owned by the registry: free them now.
  for (auto it = LiveBuilders().begin(); it != LiveBuilders().end();) {
    if ((*it)->registered) {
      delete *it;
      it = LiveBuilders().erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tfp_shims

using tfp_shims::IsLive;

extern "C" {

TFP_SHIM_IMPLEMENTED(TF_NewKernelBuilder);
TF_KernelBuilder* TF_NewKernelBuilder(const char* op_name, const char* device_name,
                                      void* (*create_func)(TF_OpKernelConstruction*),
                                      void (*compute_func)(void*, TF_OpKernelContext*),
                                      void (*delete_func)(void*)) {
  TF_KernelBuilder* b = tfp_shims::NewBuilder(op_name, device_name);
  b->def.create = create_func;
  b->def.compute = compute_func;
  b->def.destroy = delete_func;
  return b;
}

TFP_SHIM_IMPLEMENTED(TF_NewAsyncKernelBuilder);
TF_KernelBuilder* TF_NewAsyncKernelBuilder(
    const char* op_name, const char* device_name, void* (*create_func)(TF_OpKernelConstruction*),
    void (*compute_async_func)(void*, TF_OpKernelContext*, TF_AsyncOpKernelDoneCallback*),
    void (*delete_func)(void*)) {
  TF_KernelBuilder* b = tfp_shims::NewBuilder(op_name, device_name);
  b->def.create = create_func;
  b->def.compute_async = compute_async_func;
  b->def.destroy = delete_func;
  return b;
}

TFP_SHIM_IMPLEMENTED(TF_KernelBuilder_TypeConstraint);
void TF_KernelBuilder_TypeConstraint(TF_KernelBuilder* kernel_builder, const char* attr_name,
                                     const TF_DataType type, TF_Status* status) {
  if (kernel_builder == nullptr || attr_name == nullptr || !IsLive(kernel_builder)) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "TF_KernelBuilder_TypeConstraint: NULL or deleted builder, or NULL attr name");
    return;
  }
  kernel_builder->def.type_constraints.emplace_back(attr_name, type);
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_KernelBuilder_HostMemory);
void TF_KernelBuilder_HostMemory(TF_KernelBuilder* kernel_builder, const char* arg_name) {
  if (kernel_builder == nullptr || arg_name == nullptr || !IsLive(kernel_builder)) return;
  kernel_builder->def.host_memory_args.emplace_back(arg_name);
}

TFP_SHIM_IMPLEMENTED(TF_KernelBuilder_Priority);
void TF_KernelBuilder_Priority(TF_KernelBuilder* kernel_builder, int32_t priority_number) {
  if (kernel_builder == nullptr || !IsLive(kernel_builder)) return;
  kernel_builder->def.priority = priority_number;
}

TFP_SHIM_IMPLEMENTED(TF_KernelBuilder_Label);
void TF_KernelBuilder_Label(TF_KernelBuilder* kernel_builder, const char* label) {
  if (kernel_builder == nullptr || !IsLive(kernel_builder)) return;
  kernel_builder->def.label = label != nullptr ? label : "";
}

TFP_SHIM_IMPLEMENTED(TF_RegisterKernelBuilder);
void TF_RegisterKernelBuilder(const char* kernel_name, TF_KernelBuilder* builder, TF_Status* status) {
  using tfp_shims::g_mu;
  if (builder == nullptr || !IsLive(builder)) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "TF_RegisterKernelBuilder: NULL builder, or one already deleted");
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (builder->registered) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT,
                 "TF_RegisterKernelBuilder: this builder is already registered (it belongs to "
                 "the registry after the first call)");
    return;
  }
  if (builder->def.compute == nullptr && builder->def.compute_async == nullptr) {
    // TensorFlow registers it and crashes when the kernel first runs.
    std::string msg = "TF_RegisterKernelBuilder: kernel '" + tfp_shims::Str(kernel_name) + "' for " +
                      builder->def.op + " has no compute function";
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg.c_str());
    return;
  }
  builder->def.name = tfp_shims::Str(kernel_name);
  builder->def.owner = tfp_shims::Registrant();
  builder->registered = true;
  tfp_shims::Kernels().push_back(builder->def);
  TF_SetStatus(status, TF_OK, "");
}

TFP_SHIM_IMPLEMENTED(TF_DeleteKernelBuilder);
void TF_DeleteKernelBuilder(TF_KernelBuilder* builder) {
  if (builder == nullptr) return;
  std::lock_guard<std::mutex> lock(tfp_shims::g_mu);
  auto& live = tfp_shims::LiveBuilders();
  if (live.count(builder) == 0) {
    tfp_shims::ContractNote("TF_DeleteKernelBuilder: builder already deleted (a double free in TensorFlow)");
    return;
  }
  if (builder->registered) {
    tfp_shims::ContractNote("TF_DeleteKernelBuilder: builder for " + builder->def.op +
                            " was registered, so it belongs to TensorFlow (deleting it is a "
                            "double free there); ignored");
    return;
  }
  live.erase(builder);
  delete builder;
}

}  // extern "C"
