/* SPDX-License-Identifier: Apache-2.0
 * The test plugin's (test_plugin.c) helpers for tests: what it counts, and
 * the functions it exports besides its entry points. A test reaches them
 * with dlopen(<plugin>) + dlsym (the plugin is a module, not linked in).
 * C99 and C++. */
#ifndef TFPLUGIN_TESTS_HOST_TEST_PLUGIN_H_
#define TFPLUGIN_TESTS_HOST_TEST_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls into the plugin since load (or the last reset). Every create_* has
 * its destroy_*; after tfp_host_close each pair must be equal. */
typedef struct tfp_test_counters {
  /* SE_InitPlugin and the platform it registers */
  int64_t se_init_calls;
  int64_t destroy_platform, destroy_platform_fns;
  int64_t create_device, destroy_device;
  int64_t create_device_fns, destroy_device_fns;
  int64_t create_stream_executor, destroy_stream_executor;
  int64_t create_timer_fns, destroy_timer_fns;
  /* SP_StreamExecutor objects */
  int64_t create_stream, destroy_stream;
  int64_t create_event, destroy_event;
  int64_t create_timer, destroy_timer;
  int64_t device_allocs, device_frees;        /* non-empty allocations */
  int64_t host_allocs, host_frees;            /* host_memory_allocate */
  int64_t unified_allocs, unified_frees;      /* unified_memory_allocate */
  int64_t bad_deallocations;  /* deallocate with an unknown pointer or wrong size */
  int64_t host_callbacks;     /* host_callback callbacks run */
  /* What the host pre-filled before the plugin set its own struct_size */
  int64_t seen_params_struct_size, seen_platform_struct_size, seen_platform_fns_struct_size;
  int64_t seen_device_struct_size, seen_se_struct_size, seen_device_fns_struct_size;
  int64_t seen_timer_fns_struct_size;
  int64_t set_force_memory_growth;  /* SP_Platform had room for force_memory_growth */
  /* TF_InitKernel */
  int64_t init_kernel_calls;
  int64_t registration_errors;  /* a kernel or op registration status was not OK */
  int64_t kernels_created, kernels_deleted;  /* kernel instances (create/delete fns) */
  int64_t kernel_errors;  /* a shim call returned an unexpected status or result inside a kernel */
  int64_t addv2_forwarded;          /* AddV2 reused an input buffer for its output */
  int64_t identity_loser_runs;      /* the low-priority Identity kernel ran (must stay 0) */
  int64_t identity_special_runs;    /* the "special" labelled Identity kernel ran */
  int64_t async_on_other_thread;    /* TestAsyncIdentity's done ran off the caller's thread */
  int64_t construct_fail_computes;  /* TestConstructFail computed (must stay 0) */
  int64_t concat_computes;          /* TestConcatLike computed (not after its shape function failed) */
} tfp_test_counters;

#define TFP_TEST_PLUGIN_EXPORT __attribute__((visibility("default")))

TFP_TEST_PLUGIN_EXPORT tfp_test_counters tfp_test_plugin_counters(void);
TFP_TEST_PLUGIN_EXPORT void tfp_test_plugin_reset_counters(void);
/* Device memory allocated and not freed, in bytes, over all devices. */
TFP_TEST_PLUGIN_EXPORT int64_t tfp_test_plugin_bytes_in_use(void);

/* Each device's memory: allocations beyond it fail (as on a real device). */
#define TFP_TEST_DEVICE_MEMORY ((int64_t)1 << 30)
#define TFP_TEST_DEVICE_BANDWIDTH ((int64_t)100000000000) /* bytes/s */
#define TFP_TEST_DEVICE_GFLOPS 1234.5

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_TESTS_HOST_TEST_PLUGIN_H_ */
