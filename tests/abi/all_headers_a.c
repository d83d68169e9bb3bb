/* All plugin-facing headers of one release, in a second translation unit:
 * a definition (rather than a declaration) in any of them fails the link. */
#include "tfplugin/tensorflow.h"
#include "tfplugin/tfplugin.h"

size_t tfp_other_tu_platform_size(void);
size_t tfp_other_tu_platform_size(void) {
  SP_Platform platform;
  TFP_STRUCT_INIT(&platform, SP_PLATFORM_STRUCT_SIZE);
  return platform.struct_size;
}
