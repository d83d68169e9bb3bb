/* SPDX-License-Identifier: Apache-2.0 */

/* Binding at run time a TensorFlow C API function that some releases do not
 * export.
 *
 * TensorFlow loads a plugin with RTLD_NOW: one undefined TF_* symbol and the
 * whole plugin is rejected. A function only some releases export (2.19 stopped
 * exporting the resource-variable helpers of kernels_experimental.h, for
 * instance) cannot be called directly by a plugin meant to load in all of
 * them; the include roots even declare it unavailable where the release lacks
 * it. Look it up instead, once, and use it where it was found:
 *
 *   #include "tfplugin/optional_import.h"
 *
 *   TFPLUGIN_PFN_TF_AssignUpdateVariable assign_update;
 *   if (TFPLUGIN_BIND_IMPORT(TF_AssignUpdateVariable, &assign_update)) {
 *     ... register the kernels that need it ...
 *   } else {
 *     ... leave them out (TensorFlow's own kernels, or the CPU, take over) ...
 *   }
 *
 * TFPLUGIN_PFN_<name> and TFPLUGIN_LIBRARIES_<name> come from the root's
 * generated tfplugin/imports.h. The lookup searches each library that any
 * measured release exports the function from, then the SDK's shims
 * (TFPLUGIN_SHIMS_LIBRARY, TensorFlow's stand-in when a plugin runs in the SDK
 * host), each only if it is already loaded (it never loads one, and finds
 * them even where they are not in the global scope: TensorFlow 2.18's Python
 * package keeps its libraries local), then the process's global scope. The
 * shims define every function of every release (one they do not implement
 * sets TF_UNIMPLEMENTED) but answer only for the release the host emulates
 * (tfp_shims_exports): in the SDK host a plugin binds exactly what it would
 * bind in that TensorFlow.
 *
 * C99 and C++11 or later; POSIX dlopen/dlsym (in glibc's libc from 2.34, in
 * libdl before: link with -ldl there). */
#ifndef TFPLUGIN_OPTIONAL_IMPORT_H_
#define TFPLUGIN_OPTIONAL_IMPORT_H_

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "tfplugin/imports.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The soname of the SDK's stand-in for TensorFlow's C API (src/shims). */
#define TFPLUGIN_SHIMS_LIBRARY "libtfplugin_shims.so"

/* Stores in *fn (fn_size bytes: a function pointer) the address of `name`,
 * found in one of `libraries` (colon-separated sonames) that is loaded, else
 * in the global scope, and returns 1; stores NULL and returns 0 when nothing
 * loaded exports it (or fn_size is not a pointer's size). A listed library
 * that defines tfp_shims_exports decides alone: the search ends there. */
static inline int tfplugin_bind_import(void *fn, size_t fn_size, const char *name,
                                       const char *libraries) {
  void *symbol = NULL;
  int answered = 0; /* a stand-in said whether its release exports `name` */
  const char *next = libraries;
  while (symbol == NULL && !answered && next != NULL && *next != '\0') {
    const char *end = strchr(next, ':');
    size_t length = end != NULL ? (size_t)(end - next) : strlen(next);
    char soname[256];
    if (length > 0 && length < sizeof soname) {
      void *library;
      memcpy(soname, next, length);
      soname[length] = '\0';
      library = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
      if (library != NULL) {
        /* A stand-in for TensorFlow (the SDK's shims) defines every release's
         * functions and says which ones the release it emulates exports. */
        int (*exports)(const char *) = NULL;
        void *query = dlsym(library, "tfp_shims_exports");
        memcpy(&exports, &query, sizeof query);
        symbol = dlsym(library, name);
        if (exports != NULL) {
          answered = 1;
          if (!exports(name)) symbol = NULL;
        }
        dlclose(library); /* drops only the reference RTLD_NOLOAD took */
      }
    }
    next = end != NULL ? end + 1 : NULL;
  }
  if (symbol == NULL && !answered) {
    void *global = dlopen(NULL, RTLD_LAZY);
    if (global != NULL) {
      symbol = dlsym(global, name);
      dlclose(global);
    }
  }
  if (fn_size != sizeof symbol) symbol = NULL;
  memset(fn, 0, fn_size);
  /* Copied, not cast: ISO C has no conversion from void * to a function
   * pointer; POSIX guarantees the representation is the same. */
  if (symbol != NULL) memcpy(fn, &symbol, sizeof symbol);
  return symbol != NULL;
}

/* 1 with *fn_ptr bound to `name`, 0 with it NULL. fn_ptr must point to a
 * TFPLUGIN_PFN_<name>: another type fails to compile (C++) or warns (C). */
#define TFPLUGIN_BIND_IMPORT(name, fn_ptr)                                    \
  ((void)sizeof(*(fn_ptr) = (TFPLUGIN_PFN_##name)0),                          \
   tfplugin_bind_import((void *)(fn_ptr), sizeof(*(fn_ptr)), #name,           \
                        TFPLUGIN_LIBRARIES_##name ":" TFPLUGIN_SHIMS_LIBRARY))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_OPTIONAL_IMPORT_H_ */
