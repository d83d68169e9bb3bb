/* SPDX-License-Identifier: Apache-2.0
 * dlopen(RTLD_NOW) the fake plugin: every TF symbol it imports must resolve
 * against libtfplugin_shims, then run it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  int (*run)(void);
  *(void **)(&run) = dlsym(h, "fake_plugin_run");
  if (run == NULL) {
    fprintf(stderr, "FAIL: dlsym: %s\n", dlerror());
    return 1;
  }
  int rc = run();
  printf("%s: fake plugin loaded RTLD_NOW, ran: %s\n", rc ? "FAIL" : "ok", rc ? "failed" : "ok");
  dlclose(h);
  return rc;
}
