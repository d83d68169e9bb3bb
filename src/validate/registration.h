// SPDX-License-Identifier: Apache-2.0
// The registration phase's driver (registration_phase.cc) for later phases:
// registers a plugin's platform exactly as the registration phase does (the
// targeted release's SE_InitPlugin, device fns, stream executor, timer fns,
// every device), dropping the findings (the registration phase reports
// them), and hands over the filled structs.
#ifndef TFPLUGIN_VALIDATE_REGISTRATION_H_
#define TFPLUGIN_VALIDATE_REGISTRATION_H_

#include <cstddef>
#include <memory>
#include <string>

#include "owned_status.h"
#include "phases.h"
#include "plugin_struct.h"

namespace tfp_validator {

class RegisteredPlatform {
 public:
  RegisteredPlatform();
  ~RegisteredPlatform();
  RegisteredPlatform(const RegisteredPlatform&) = delete;
  RegisteredPlatform& operator=(const RegisteredPlatform&) = delete;

  // True when the registration ran to its end (every device created).
  // Otherwise *why says what stopped it ("" for a plugin without an
  // exported SE_InitPlugin function: nothing to register).
  bool Register(const PhaseContext& context, std::string* why);

  tfp_shims::PluginStruct& params();  // SE_PlatformRegistrationParams
  tfp_shims::PluginStruct& platform();
  tfp_shims::PluginStruct& platform_fns();
  tfp_shims::PluginStruct& device_fns();
  tfp_shims::PluginStruct& stream_executor();
  tfp_shims::PluginStruct& timer_fns();
  bool has_timer_fns() const;  // create_timer_fns was called
  size_t device_count() const;
  tfp_shims::PluginStruct& device(size_t i);
  // A callback the validator may call: in the plugin's own code.
  bool InPluginCode(const void* fn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfp_validator

#endif  // TFPLUGIN_VALIDATE_REGISTRATION_H_
