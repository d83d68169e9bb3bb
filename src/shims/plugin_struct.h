// SPDX-License-Identifier: Apache-2.0
// A plugin-filled struct seen through one release's layout (generated
// plugin_layouts.h): the host emulating TensorFlow R pre-fills struct_size
// and reads every field at R's offset, exactly as TF R compiled against its
// own headers would, whatever headers the plugin was built with.
//
// Built as its own static library (libtfplugin_abi_layouts, see meson.build)
// shared by libtfplugin_shims (the host) and libtfplugin_validate (the
// registration phase): both apply TensorFlow's checks through this code.
#ifndef TFPLUGIN_SHIMS_PLUGIN_STRUCT_H_
#define TFPLUGIN_SHIMS_PLUGIN_STRUCT_H_

#include <cstring>
#include <string>
#include <vector>

#include "plugin_layouts.h"
#include "tensorflow/c/tf_status.h"

namespace tfp_shims {

// The layouts of `release` ("2.21"), or NULL.
const ReleaseLayouts* FindRelease(const std::string& release);
// The layout of `name` in `release`, or NULL.
const StructLayout* FindLayout(const std::string& release, const std::string& name);
// `field` of `layout` (NULL-safe), or NULL.
const FieldLayout* FindField(const StructLayout* layout, const char* field);
// The requirement on `field` of `layout` TF applies (NULL-safe), or NULL.
const RequiredField* FindRequired(const StructLayout* layout, const char* field);
inline bool Requires(const StructLayout* layout, const char* field) {
  return FindRequired(layout, field) != nullptr;
}

// TF `release`'s rule for SP_Platform.name and .type ("[A-Z][A-Z_]*"), and
// whether `value` matches it as a whole.
const char* NamePattern(const std::string& release);
bool MatchesNamePattern(const std::string& release, const std::string& value);

// More devices than any machine has: a get_device_count result past this is
// an uninitialized count or an error code, not a count.
constexpr int kMaxDevices = 4096;

// A check TF applies to a plugin-filled struct that failed.
struct StructProblem {
  enum Kind { kStructSizeZero, kRequiredNull } kind;
  const char* field = nullptr;      // kRequiredNull: the field
  const char* condition = nullptr;  // kRequiredNull: "SP_Platform.supports_unified_memory" or NULL
};

class PluginStruct {
 public:
  // Zeroed storage larger than any release's struct: a plugin built against
  // other headers may write past the emulated size without corrupting us.
  static constexpr size_t kStorage = 1024;

  PluginStruct(const std::string& release, const char* name);
  // `other`'s bytes seen through `release`'s layout of the same struct: what
  // TF `release` would read from what the plugin wrote.
  PluginStruct(const std::string& release, const PluginStruct& other);
  const char* name() const { return name_; }
  const std::string& release() const { return release_; }
  bool known() const { return layout_ != nullptr; }
  void* data() { return storage_; }
  const void* data() const { return storage_; }
  const StructLayout* layout() const { return layout_; }
  // What TF pre-fills: the release's *_STRUCT_SIZE value.
  uint32_t release_struct_size() const { return layout_ ? layout_->struct_size : 0; }
  void PrefillStructSize();

  const FieldLayout* Field(const char* field) const { return FindField(layout_, field); }
  bool Has(const char* field) const { return Field(field) != nullptr; }
  // The field's value, or a zero T if this release's struct lacks it.
  template <typename T>
  T Get(const char* field) const {
    T v{};
    const FieldLayout* f = Field(field);
    if (f != nullptr && f->size == sizeof(T)) std::memcpy(&v, storage_ + f->offset, sizeof(T));
    return v;
  }
  template <typename T>
  void Set(const char* field, T v) {
    const FieldLayout* f = Field(field);
    if (f != nullptr && f->size == sizeof(T)) std::memcpy(storage_ + f->offset, &v, sizeof(T));
  }
  // The struct_size the plugin left in the struct.
  size_t StructSize() const { return Get<size_t>("struct_size"); }
  // Every check TF applies to this struct in this release that fails, in
  // TF's order: struct_size non-zero (where TF checks it), then each
  // required pointer non-NULL (conditions like
  // "SP_Platform.supports_unified_memory" are evaluated on
  // `condition_source`; without it, conditional fields are not required).
  std::vector<StructProblem> TensorFlowProblems(const PluginStruct* condition_source) const;
  // The first of those as a status naming the field: false on failure.
  bool CheckAsTensorFlow(const std::string& release, const PluginStruct* condition_source,
                         TF_Status* status) const;

 private:
  const char* name_;
  std::string release_;
  const StructLayout* layout_;
  alignas(16) unsigned char storage_[kStorage] = {};
};

// Sets up SE_InitPlugin's arguments as TF does: the SE version, `params`
// pointing at `platform` and `platform_fns`, and each struct_size pre-filled
// with the release's value (or left 0 when `prefill_sizes` is false, to see
// whether the plugin sets it itself).
void PrepareSEInit(PluginStruct* params, PluginStruct* platform, PluginStruct* platform_fns,
                   bool prefill_sizes = true);

}  // namespace tfp_shims

#endif  // TFPLUGIN_SHIMS_PLUGIN_STRUCT_H_
