/* SPDX-License-Identifier: Apache-2.0
 * dlopen(RTLD_NOW | RTLD_LOCAL) a test plugin: every TF symbol it imports must
 * resolve against libtfplugin_shims, which it links, and those stay out of the
 * global scope, as TensorFlow 2.18's libraries do. Then run its entry point
 * (RUN, default fake_plugin_run): an int function, 0 when its checks pass. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s PLUGIN.so [RUN]\n", argv[0]);
    return 2;
  }
  const char *entry = argc == 3 ? argv[2] : "fake_plugin_run";
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  int (*run)(void);
  *(void **)(&run) = dlsym(h, entry);
  if (run == NULL) {
    fprintf(stderr, "FAIL: dlsym: %s\n", dlerror());
    return 1;
  }
  int rc = run();
  printf("%s: %s loaded RTLD_NOW | RTLD_LOCAL, %s: %s\n", rc ? "FAIL" : "ok", argv[1], entry,
         rc ? "failed" : "passed");
  dlclose(h);
  return rc;
}
