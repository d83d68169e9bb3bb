/* SPDX-License-Identifier: Apache-2.0
 * tfplugin/optional_import.h: runs bind_plugin.c's checks from a plugin
 * loaded RTLD_LOCAL (its shims stay out of the global scope), and checks that
 * the lookups loaded no library. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s BIND_PLUGIN.so\n", argv[0]);
    return 2;
  }
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  /* The premise: the shims are loaded, but not globally. */
  void *global = dlopen(NULL, RTLD_LAZY);
  if (global == NULL || dlsym(global, "TF_NewStatus") != NULL) {
    fprintf(stderr, "FAIL: TF_NewStatus is in the global scope; the test needs it local\n");
    return 1;
  }
  int (*run)(void);
  *(void **)(&run) = dlsym(plugin, "bind_plugin_run");
  if (run == NULL) {
    fprintf(stderr, "FAIL: dlsym: %s\n", dlerror());
    return 1;
  }
  int failures = run();
  /* The lookups never load a library. */
  if (dlopen("libnot_a_library.so.9", RTLD_LAZY | RTLD_NOLOAD) != NULL ||
      dlopen("libtensorflow_framework.so.2", RTLD_LAZY | RTLD_NOLOAD) != NULL) {
    fprintf(stderr, "FAIL: a lookup loaded a library\n");
    ++failures;
  }
  printf("%s: %d failed checks binding imports from a plugin loaded RTLD_LOCAL\n",
         failures ? "FAIL" : "ok", failures);
  dlclose(global);
  dlclose(plugin);
  return failures ? 1 : 0;
}
