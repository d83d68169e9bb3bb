// SPDX-License-Identifier: Apache-2.0
#include "plugin_struct.h"

#include <regex.h>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

namespace tfp_shims {

const ReleaseLayouts* FindRelease(const std::string& release) {
  for (const ReleaseLayouts& r : kReleaseLayouts) {
    if (release == r.release) return &r;
  }
  return nullptr;
}

const StructLayout* FindLayout(const std::string& release, const std::string& name) {
  const ReleaseLayouts* r = FindRelease(release);
  if (r == nullptr) return nullptr;
  for (uint32_t i = 0; i < r->num_structs; ++i) {
    if (name == r->structs[i].name) return &r->structs[i];
  }
  return nullptr;
}

const FieldLayout* FindField(const StructLayout* layout, const char* field) {
  if (layout == nullptr) return nullptr;
  for (uint32_t i = 0; i < layout->num_fields; ++i) {
    if (std::strcmp(layout->fields[i].name, field) == 0) return &layout->fields[i];
  }
  return nullptr;
}

const RequiredField* FindRequired(const StructLayout* layout, const char* field) {
  if (layout == nullptr) return nullptr;
  for (uint32_t i = 0; i < layout->num_required; ++i) {
    if (std::strcmp(layout->required[i].name, field) == 0) return &layout->required[i];
  }
  return nullptr;
}

const char* NamePattern(const std::string& release) {
  const ReleaseLayouts* r = FindRelease(release);
  return r != nullptr && r->name_pattern != nullptr ? r->name_pattern : "[A-Z][A-Z_]*";
}

bool MatchesNamePattern(const std::string& release, const std::string& value) {
  // RE2::FullMatch in TF. POSIX extended regexes read these plain patterns
  // the same way; anchored here for a full match. (Not std::regex: GCC 12
  // warns inside it under sanitizers, and -Werror turns that into a failure.)
  const std::string anchored = "^(" + std::string(NamePattern(release)) + ")$";
  regex_t re;
  if (regcomp(&re, anchored.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;
  bool match = regexec(&re, value.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return match;
}

PluginStruct::PluginStruct(const std::string& release, const char* name)
    : name_(name), release_(release), layout_(FindLayout(release, name)) {
  static_assert(kStorage >= 512, "storage must exceed every plugin struct");
}

PluginStruct::PluginStruct(const std::string& release, const PluginStruct& other)
    : PluginStruct(release, other.name_) {
  std::memcpy(storage_, other.storage_, kStorage);
}

void PluginStruct::PrefillStructSize() { Set<size_t>("struct_size", release_struct_size()); }

std::vector<StructProblem> PluginStruct::TensorFlowProblems(
    const PluginStruct* condition_source) const {
  std::vector<StructProblem> out;
  if (layout_ == nullptr) return out;
  if (layout_->size_checked && StructSize() == 0) out.push_back({StructProblem::kStructSizeZero});
  for (uint32_t i = 0; i < layout_->num_required; ++i) {
    const RequiredField& r = layout_->required[i];
    if (r.condition != nullptr) {
      // "Struct.field": required only while that (bool) field is set.
      std::string cond = r.condition;
      size_t dot = cond.find('.');
      const PluginStruct* src = condition_source;
      if (src == nullptr || dot == std::string::npos || cond.substr(0, dot) != src->name())
        continue;
      if (!src->Get<unsigned char>(cond.substr(dot + 1).c_str())) continue;
    }
    if (Field(r.name) == nullptr) continue;
    if (Get<void*>(r.name) == nullptr)
      out.push_back({StructProblem::kRequiredNull, r.name, r.condition});
  }
  return out;
}

bool PluginStruct::CheckAsTensorFlow(const std::string& release,
                                     const PluginStruct* condition_source,
                                     TF_Status* status) const {
  const std::vector<StructProblem> problems = TensorFlowProblems(condition_source);
  if (problems.empty()) return true;
  const StructProblem& p = problems.front();
  std::string msg;
  if (p.kind == StructProblem::kStructSizeZero) {
    msg = std::string(name_) + ".struct_size is 0: the plugin must set it to " +
          (layout_->size_macro ? layout_->size_macro : "its *_STRUCT_SIZE") + " (TensorFlow " +
          release + " rejects the plugin)";
  } else {
    msg = std::string(name_) + "." + p.field + " is NULL, but TensorFlow " + release +
          " requires it" +
          (p.condition ? std::string(" when ") + p.condition + " is set" : std::string());
  }
  TF_SetStatus(status, TF_FAILED_PRECONDITION, msg.c_str());
  return false;
}

void PrepareSEInit(PluginStruct* params, PluginStruct* platform, PluginStruct* platform_fns,
                   bool prefill_sizes) {
  if (prefill_sizes) {
    params->PrefillStructSize();
    platform->PrefillStructSize();
    platform_fns->PrefillStructSize();
  }
  params->Set<int32_t>("major_version", SE_MAJOR);
  params->Set<int32_t>("minor_version", SE_MINOR);
  params->Set<int32_t>("patch_version", SE_PATCH);
  params->Set<void*>("platform", platform->data());
  params->Set<void*>("platform_fns", platform_fns->data());
}

}  // namespace tfp_shims
