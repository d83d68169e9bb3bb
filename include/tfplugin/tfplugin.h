/* SPDX-License-Identifier: Apache-2.0 */

/* Umbrella header: everything a plugin author needs from tfplugin. */
#ifndef TFPLUGIN_TFPLUGIN_H_
#define TFPLUGIN_TFPLUGIN_H_

#include "tfplugin/struct_size.h"

#endif /* TFPLUGIN_TFPLUGIN_H_ */
