/* SPDX-License-Identifier: Apache-2.0
 * TESTDEV: a small but complete PluggableDevice plugin, written against the
 * TensorFlow 2.21 C API the way a plugin author would, for the host tests
 * (test_host.cc). It is the host's counterpart: everything TensorFlow asks
 * of a plugin is here with real semantics, and everything the host does to
 * it is counted so a test can check it.
 *
 * Device:  "device memory" is host memory (posix_memalign) with exact
 *          accounting per device (TFP_TEST_DEVICE_MEMORY each; larger
 *          requests fail like an out-of-memory device). Streams execute
 *          synchronously (work is done when enqueued, in order, under the
 *          stream's lock) and keep a sticky status: the first failure of
 *          work on a stream fails the stream, later work is refused.
 * Env:     TFP_TEST_DEVICES=<n>  number of devices (default 2);
 *          TFP_TEST_FAIL=se_init | no_struct_size | null_memset | bad_name
 *          makes SE_InitPlugin misbehave in one way (see SE_InitPlugin);
 *          TFP_TEST_FAIL=kern_addv2_ulp | kern_gpu | kern_duplicate |
 *          kern_error | kern_bias_axis | kern_sgd_sign |
 *          kern_copy_swapped plants one kernel
 *          fault for validate_plugin's kernels phase (tests/validate):
 *          AddV2 float's element 0 off by 1000 ulp, an AddV2 kernel
 *          registered for "GPU", AddV2 float registered twice, MatMul failing
 *          with TF_INTERNAL, BiasAdd adding the bias along the wrong
 *          dimension, ResourceApplyGradientDescent adding alpha * delta,
 *          the variables' copyFunc copying destination onto source.
 * Kernels: see TF_InitKernel. Between them they call every shim the
 *          shims implement by hand (check_shim_coverage.py holds the plugin
 *          to that) and check each result: a wrong one fails the kernel
 *          with a message naming the function, and counts as kernel_errors.
 * Exports: SE_InitPlugin, TF_InitKernel and the helpers of test_plugin.h;
 *          everything else is static or hidden (-fvisibility=hidden). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/experimental/stream_executor/stream_executor.h"
#include "tensorflow/c/kernels.h"
#include "tensorflow/c/ops.h"
#include "tensorflow/c/tf_buffer.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "test_plugin.h"
#include "tfplugin/struct_size.h"
#include "xla/tsl/c/tsl_status.h"

#define DEVICE_TYPE "TESTDEV"
#define MAX_DEVICES 64

/* Functions TensorFlow 2.21 no longer exports: its headers mark them
 * unavailable, so a plugin built against the 2.21 include root cannot call
 * them. Declared here as tensorflow/c/kernels_experimental.h of 2.18
 * declares them, this emulates a plugin built for an older release, which
 * imports them (and which TensorFlow 2.21 itself would refuse to load; the
 * shims serve every release 2.5-2.21, so they define them). Do not include
 * kernels_experimental.h here: its "unavailable" marks would stick. */
TF_CAPI_EXPORT extern void TF_GetInputByName(TF_OpKernelContext *ctx, const char *inputName, TF_Tensor **tensor,
                                             TF_Status *status);
TF_CAPI_EXPORT extern void TF_OpKernelConstruction_GetAttrTensorShape(TF_OpKernelConstruction *ctx,
                                                                      const char *attr_name, int64_t *dims,
                                                                      size_t num_dims, TF_Status *status);
TF_CAPI_EXPORT extern bool TF_IsRefInput(TF_OpKernelContext *ctx, int i, TF_Status *status);
/* The resource-variable helpers (2.6-2.18), for the variable kernels. */
typedef struct TF_VariableInputLockHolder TF_VariableInputLockHolder;
TF_CAPI_EXPORT extern void TF_GetInputTensorFromVariable(TF_OpKernelContext *ctx, int input, bool lock_held,
                                                         bool isVariantType, bool sparse,
                                                         void (*copyFunc)(TF_OpKernelContext *, TF_Tensor *,
                                                                          TF_Tensor *),
                                                         TF_Tensor **out, TF_Status *status);
TF_CAPI_EXPORT extern void TF_MaybeLockVariableInputMutexesInOrder(
    TF_OpKernelContext *ctx, bool do_lock, bool sparse, const int *const inputs, size_t len,
    void (*copyFunc)(TF_OpKernelContext *, TF_Tensor *, TF_Tensor *), TF_VariableInputLockHolder **lockHolder,
    TF_Status *status);
TF_CAPI_EXPORT extern void TF_ReleaseVariableInputLockHolder(TF_VariableInputLockHolder *lockHolder);
TF_CAPI_EXPORT extern void TF_AssignUpdateVariable(TF_OpKernelContext *ctx, int input_index, int value_index,
                                                   int Op, int isVariantType,
                                                   void (*copyFunc)(TF_OpKernelContext *, TF_Tensor *,
                                                                    TF_Tensor *),
                                                   void (*updateFunc)(TF_OpKernelContext *, TF_Tensor *,
                                                                      TF_Tensor *, int),
                                                   TF_Status *status);

/* ======================================================================
 * Counters and accounting (everything under g_mu)
 * ====================================================================== */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tfp_test_counters g_counters;
static int64_t g_bytes_in_use;

#define COUNT(field) count_add(&g_counters.field, 1)

static void count_add(int64_t *field, int64_t n) {
  pthread_mutex_lock(&g_mu);
  *field += n;
  pthread_mutex_unlock(&g_mu);
}

static void count_set(int64_t *field, int64_t v) {
  pthread_mutex_lock(&g_mu);
  *field = v;
  pthread_mutex_unlock(&g_mu);
}

tfp_test_counters tfp_test_plugin_counters(void) {
  tfp_test_counters c;
  pthread_mutex_lock(&g_mu);
  c = g_counters;
  pthread_mutex_unlock(&g_mu);
  return c;
}

void tfp_test_plugin_reset_counters(void) {
  pthread_mutex_lock(&g_mu);
  memset(&g_counters, 0, sizeof g_counters);
  pthread_mutex_unlock(&g_mu);
}

int64_t tfp_test_plugin_bytes_in_use(void) {
  int64_t v;
  pthread_mutex_lock(&g_mu);
  v = g_bytes_in_use;
  pthread_mutex_unlock(&g_mu);
  return v;
}

/* ======================================================================
 * Devices and device memory
 * ====================================================================== */

typedef struct test_device {
  int ordinal;
  char pci_bus_id[32];
  /* under g_mu */
  int64_t bytes_in_use, peak_bytes_in_use, num_allocs, largest_alloc;
} test_device;

/* Every device buffer starts HEADER bytes into its block, after this. */
#define HEADER 64
#define MEM_MAGIC 0x7466702d74657374ull
typedef struct mem_header {
  uint64_t magic;
  uint64_t size;
  int32_t ordinal;
} mem_header;

static test_device *dev_of(const SP_Device *device) {
  return device != NULL ? (test_device *)device->device_handle : NULL;
}

static void se_allocate(const SP_Device *device, uint64_t size, int64_t memory_space, SP_DeviceMemoryBase *mem) {
  test_device *d = dev_of(device);
  void *block = NULL;
  mem_header *h;
  (void)memory_space;
  if (mem == NULL) return;
  mem->struct_size = SP_DEVICE_MEMORY_BASE_STRUCT_SIZE;
  mem->opaque = NULL;
  mem->size = 0;
  mem->payload = 0;
  if (d == NULL || size == 0) return; /* an empty buffer needs no memory */
  /* Reserve first: a request beyond what is free fails without malloc. */
  pthread_mutex_lock(&g_mu);
  if (size > (uint64_t)(TFP_TEST_DEVICE_MEMORY - d->bytes_in_use)) {
    pthread_mutex_unlock(&g_mu);
    return;
  }
  d->bytes_in_use += (int64_t)size;
  pthread_mutex_unlock(&g_mu);
  if (posix_memalign(&block, HEADER, HEADER + (size_t)size) != 0) {
    pthread_mutex_lock(&g_mu);
    d->bytes_in_use -= (int64_t)size;
    pthread_mutex_unlock(&g_mu);
    return;
  }
  h = (mem_header *)block;
  h->magic = MEM_MAGIC;
  h->size = size;
  h->ordinal = d->ordinal;
  pthread_mutex_lock(&g_mu);
  g_bytes_in_use += (int64_t)size;
  if (d->bytes_in_use > d->peak_bytes_in_use) d->peak_bytes_in_use = d->bytes_in_use;
  if ((int64_t)size > d->largest_alloc) d->largest_alloc = (int64_t)size;
  d->num_allocs++;
  g_counters.device_allocs++;
  pthread_mutex_unlock(&g_mu);
  mem->opaque = (char *)block + HEADER;
  mem->size = size;
}

static void se_deallocate(const SP_Device *device, SP_DeviceMemoryBase *memory) {
  test_device *d = dev_of(device);
  mem_header *h;
  uint64_t size;
  if (memory == NULL || memory->opaque == NULL) return;
  h = (mem_header *)((char *)memory->opaque - HEADER);
  if (d == NULL || h->magic != MEM_MAGIC || h->ordinal != d->ordinal) {
    COUNT(bad_deallocations); /* not ours: leak it rather than corrupt the heap */
    return;
  }
  size = h->size;
  if (memory->size != size) COUNT(bad_deallocations);
  h->magic = 0;
  free(h);
  pthread_mutex_lock(&g_mu);
  d->bytes_in_use -= (int64_t)size;
  g_bytes_in_use -= (int64_t)size;
  g_counters.device_frees++;
  pthread_mutex_unlock(&g_mu);
  memory->opaque = NULL;
  memory->size = 0;
}

static void *se_host_memory_allocate(const SP_Device *device, uint64_t size) {
  void *p;
  (void)device;
  p = malloc(size > 0 ? (size_t)size : 1);
  if (p != NULL) COUNT(host_allocs);
  return p;
}

static void se_host_memory_deallocate(const SP_Device *device, void *mem) {
  (void)device;
  if (mem == NULL) return;
  free(mem);
  COUNT(host_frees);
}

static void *se_unified_memory_allocate(const SP_Device *device, uint64_t bytes) {
  void *p;
  (void)device;
  p = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (p != NULL) COUNT(unified_allocs);
  return p;
}

static void se_unified_memory_deallocate(const SP_Device *device, void *location) {
  (void)device;
  if (location == NULL) return;
  free(location);
  COUNT(unified_frees);
}

static unsigned char se_get_allocator_stats(const SP_Device *device, SP_AllocatorStats *stats) {
  test_device *d = dev_of(device);
  if (d == NULL || stats == NULL) return 0;
  pthread_mutex_lock(&g_mu);
  stats->struct_size = SP_ALLOCATORSTATS_STRUCT_SIZE;
  stats->num_allocs = d->num_allocs;
  stats->bytes_in_use = d->bytes_in_use;
  stats->peak_bytes_in_use = d->peak_bytes_in_use;
  stats->largest_alloc_size = d->largest_alloc;
  stats->has_bytes_limit = 1;
  stats->bytes_limit = TFP_TEST_DEVICE_MEMORY;
  stats->bytes_reserved = 0;
  stats->peak_bytes_reserved = 0;
  stats->has_bytes_reservable_limit = 0;
  stats->bytes_reservable_limit = 0;
  stats->largest_free_block_bytes = TFP_TEST_DEVICE_MEMORY - d->bytes_in_use;
  pthread_mutex_unlock(&g_mu);
  return 1;
}

static unsigned char se_device_memory_usage(const SP_Device *device, int64_t *free_bytes, int64_t *total) {
  test_device *d = dev_of(device);
  if (d == NULL || free_bytes == NULL || total == NULL) return 0;
  pthread_mutex_lock(&g_mu);
  *total = TFP_TEST_DEVICE_MEMORY;
  *free_bytes = TFP_TEST_DEVICE_MEMORY - d->bytes_in_use;
  pthread_mutex_unlock(&g_mu);
  return 1;
}

/* ======================================================================
 * Streams, events, timers
 * ====================================================================== */

struct SP_Stream_st {
  pthread_mutex_t mu; /* one piece of work at a time, in order */
  TF_Code code;       /* sticky: the first failure */
  char message[256];
};

struct SP_Event_st {
  SE_EventStatus status; /* under g_mu */
};

struct SP_Timer_st {
  uint64_t start_ns, stop_ns; /* under g_mu */
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under stream->mu: records the stream's first failure. */
static void stream_fail_locked(SP_Stream stream, TF_Code code, const char *message) {
  if (stream->code != TF_OK) return;
  stream->code = code;
  snprintf(stream->message, sizeof stream->message, "%s", message);
}

/* Work enqueued on a stream: a function run now, in stream order. */
typedef void (*work_fn)(void *arg, TF_Status *status);

/* Runs `fn` on `stream` unless the stream has failed; `status` gets the
 * enqueue result (the stream's error if it had failed). A failure of the
 * work itself fails the stream. */
static void stream_run(SP_Stream stream, work_fn fn, void *arg, TF_Status *status) {
  TF_Status *s;
  if (stream == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: NULL stream");
    return;
  }
  pthread_mutex_lock(&stream->mu);
  if (stream->code != TF_OK) {
    TF_SetStatus(status, stream->code, stream->message);
    pthread_mutex_unlock(&stream->mu);
    return;
  }
  s = TF_NewStatus();
  fn(arg, s);
  if (TF_GetCode(s) != TF_OK) stream_fail_locked(stream, TF_GetCode(s), TF_Message(s));
  TF_SetStatus(status, TF_GetCode(s), TF_Message(s));
  TF_DeleteStatus(s);
  pthread_mutex_unlock(&stream->mu);
}

static void se_create_stream(const SP_Device *device, SP_Stream *stream, TF_Status *status) {
  SP_Stream s;
  (void)device;
  s = (SP_Stream)calloc(1, sizeof *s);
  if (s == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "TESTDEV: cannot allocate a stream");
    return;
  }
  pthread_mutex_init(&s->mu, NULL);
  s->code = TF_OK;
  *stream = s;
  COUNT(create_stream);
  TF_SetStatus(status, TF_OK, "");
}

static void se_destroy_stream(const SP_Device *device, SP_Stream stream) {
  (void)device;
  if (stream == NULL) return;
  pthread_mutex_destroy(&stream->mu);
  free(stream);
  COUNT(destroy_stream);
}

static void se_create_stream_dependency(const SP_Device *device, SP_Stream dependent, SP_Stream other,
                                        TF_Status *status) {
  (void)device;
  /* Work runs when enqueued: whatever `other` had is done already. */
  if (dependent == NULL || other == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: create_stream_dependency on a NULL stream");
    return;
  }
  TF_SetStatus(status, TF_OK, "");
}

static void se_get_stream_status(const SP_Device *device, SP_Stream stream, TF_Status *status) {
  (void)device;
  if (stream == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: get_stream_status on a NULL stream");
    return;
  }
  pthread_mutex_lock(&stream->mu);
  TF_SetStatus(status, stream->code, stream->code == TF_OK ? "" : stream->message);
  pthread_mutex_unlock(&stream->mu);
}

static void se_create_event(const SP_Device *device, SP_Event *event, TF_Status *status) {
  SP_Event e;
  (void)device;
  e = (SP_Event)calloc(1, sizeof *e);
  if (e == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "TESTDEV: cannot allocate an event");
    return;
  }
  e->status = SE_EVENT_COMPLETE; /* nothing to wait for until recorded */
  *event = e;
  COUNT(create_event);
  TF_SetStatus(status, TF_OK, "");
}

static void se_destroy_event(const SP_Device *device, SP_Event event) {
  (void)device;
  if (event == NULL) return;
  free(event);
  COUNT(destroy_event);
}

static SE_EventStatus se_get_event_status(const SP_Device *device, SP_Event event) {
  SE_EventStatus st;
  (void)device;
  if (event == NULL) return SE_EVENT_UNKNOWN;
  pthread_mutex_lock(&g_mu);
  st = event->status;
  pthread_mutex_unlock(&g_mu);
  return st;
}

static void se_record_event(const SP_Device *device, SP_Stream stream, SP_Event event, TF_Status *status) {
  TF_Code code;
  (void)device;
  if (stream == NULL || event == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: record_event with a NULL stream or event");
    return;
  }
  pthread_mutex_lock(&stream->mu);
  code = stream->code;
  pthread_mutex_unlock(&stream->mu);
  pthread_mutex_lock(&g_mu);
  /* Everything before it on the stream is done: complete, or failed. */
  event->status = code == TF_OK ? SE_EVENT_COMPLETE : SE_EVENT_ERROR;
  pthread_mutex_unlock(&g_mu);
  TF_SetStatus(status, TF_OK, "");
}

static void se_wait_for_event(const SP_Device *const device, SP_Stream stream, SP_Event event,
                              TF_Status *const status) {
  (void)device;
  if (stream == NULL || event == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: wait_for_event with a NULL stream or event");
    return;
  }
  TF_SetStatus(status, TF_OK, ""); /* recorded work is already done */
}

static void se_block_host_for_event(const SP_Device *device, SP_Event event, TF_Status *status) {
  if (se_get_event_status(device, event) == SE_EVENT_ERROR) {
    TF_SetStatus(status, TF_INTERNAL, "TESTDEV: the event was recorded on a failed stream");
    return;
  }
  TF_SetStatus(status, TF_OK, "");
}

static void se_block_host_until_done(const SP_Device *device, SP_Stream stream, TF_Status *status) {
  (void)device;
  /* Done as soon as enqueued; the stream's failures come from get_stream_status. */
  TF_SetStatus(status, stream != NULL ? TF_OK : TF_INVALID_ARGUMENT,
               stream != NULL ? "" : "TESTDEV: block_host_until_done on a NULL stream");
}

static void se_synchronize_all_activity(const SP_Device *device, TF_Status *status) {
  (void)device;
  TF_SetStatus(status, TF_OK, "");
}

static void se_create_timer(const SP_Device *device, SP_Timer *timer, TF_Status *status) {
  SP_Timer t;
  (void)device;
  t = (SP_Timer)calloc(1, sizeof *t);
  if (t == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "TESTDEV: cannot allocate a timer");
    return;
  }
  *timer = t;
  COUNT(create_timer);
  TF_SetStatus(status, TF_OK, "");
}

static void se_destroy_timer(const SP_Device *device, SP_Timer timer) {
  (void)device;
  if (timer == NULL) return;
  free(timer);
  COUNT(destroy_timer);
}

static void timer_start_work(void *arg, TF_Status *status) {
  SP_Timer t = (SP_Timer)arg;
  pthread_mutex_lock(&g_mu);
  t->start_ns = now_ns();
  t->stop_ns = t->start_ns;
  pthread_mutex_unlock(&g_mu);
  TF_SetStatus(status, TF_OK, "");
}

static void timer_stop_work(void *arg, TF_Status *status) {
  SP_Timer t = (SP_Timer)arg;
  pthread_mutex_lock(&g_mu);
  t->stop_ns = now_ns();
  pthread_mutex_unlock(&g_mu);
  TF_SetStatus(status, TF_OK, "");
}

static void se_start_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer, TF_Status *status) {
  (void)device;
  if (timer == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: start_timer on a NULL timer");
    return;
  }
  stream_run(stream, timer_start_work, timer, status);
}

static void se_stop_timer(const SP_Device *device, SP_Stream stream, SP_Timer timer, TF_Status *status) {
  (void)device;
  if (timer == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: stop_timer on a NULL timer");
    return;
  }
  stream_run(stream, timer_stop_work, timer, status);
}

static uint64_t timer_nanoseconds(SP_Timer timer) {
  uint64_t ns;
  if (timer == NULL) return 0;
  pthread_mutex_lock(&g_mu);
  ns = timer->stop_ns - timer->start_ns;
  pthread_mutex_unlock(&g_mu);
  return ns;
}

/* ---- Copies and fills: checked, then done on the stream (or now, sync_*) */

typedef struct copy_work {
  void *dst;
  const void *src;
  uint64_t size;
} copy_work;

static void copy_run(void *arg, TF_Status *status) {
  copy_work *w = (copy_work *)arg;
  if (w->size > 0) memmove(w->dst, w->src, (size_t)w->size);
  TF_SetStatus(status, TF_OK, "");
}

/* `device_bytes`: the device buffer's size, or 0 if unknown. */
static int copy_args_ok(const char *what, void *dst, const void *src, uint64_t size, uint64_t device_bytes,
                        TF_Status *status) {
  char msg[160];
  if (size > 0 && (dst == NULL || src == NULL)) {
    snprintf(msg, sizeof msg, "TESTDEV: %s of %llu bytes with a NULL buffer", what, (unsigned long long)size);
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg);
    return 0;
  }
  if (device_bytes != 0 && size > device_bytes) {
    snprintf(msg, sizeof msg, "TESTDEV: %s of %llu bytes overruns a device buffer of %llu bytes", what,
             (unsigned long long)size, (unsigned long long)device_bytes);
    TF_SetStatus(status, TF_OUT_OF_RANGE, msg);
    return 0;
  }
  return 1;
}

static void enqueue_copy(SP_Stream stream, const char *what, void *dst, const void *src, uint64_t size,
                         uint64_t device_bytes, TF_Status *status) {
  copy_work w;
  if (!copy_args_ok(what, dst, src, size, device_bytes, status)) {
    if (stream != NULL) {
      pthread_mutex_lock(&stream->mu);
      stream_fail_locked(stream, TF_GetCode(status), TF_Message(status));
      pthread_mutex_unlock(&stream->mu);
    }
    return;
  }
  w.dst = dst;
  w.src = src;
  w.size = size;
  stream_run(stream, copy_run, &w, status);
}

static void sync_copy(const char *what, void *dst, const void *src, uint64_t size, uint64_t device_bytes,
                      TF_Status *status) {
  copy_work w;
  if (!copy_args_ok(what, dst, src, size, device_bytes, status)) return;
  w.dst = dst;
  w.src = src;
  w.size = size;
  copy_run(&w, status);
}

static void se_memcpy_dtoh(const SP_Device *device, SP_Stream stream, void *host_dst,
                           const SP_DeviceMemoryBase *device_src, uint64_t size, TF_Status *status) {
  (void)device;
  enqueue_copy(stream, "memcpy_dtoh", host_dst, device_src ? device_src->opaque : NULL, size,
               device_src ? device_src->size : 0, status);
}

static void se_memcpy_htod(const SP_Device *device, SP_Stream stream, SP_DeviceMemoryBase *device_dst,
                           const void *host_src, uint64_t size, TF_Status *status) {
  (void)device;
  enqueue_copy(stream, "memcpy_htod", device_dst ? device_dst->opaque : NULL, host_src, size,
               device_dst ? device_dst->size : 0, status);
}

static void se_memcpy_dtod(const SP_Device *device, SP_Stream stream, SP_DeviceMemoryBase *device_dst,
                           const SP_DeviceMemoryBase *device_src, uint64_t size, TF_Status *status) {
  (void)device;
  enqueue_copy(stream, "memcpy_dtod", device_dst ? device_dst->opaque : NULL,
               device_src ? device_src->opaque : NULL, size, device_dst ? device_dst->size : 0, status);
}

static void se_sync_memcpy_dtoh(const SP_Device *device, void *host_dst, const SP_DeviceMemoryBase *device_src,
                                uint64_t size, TF_Status *status) {
  (void)device;
  sync_copy("sync_memcpy_dtoh", host_dst, device_src ? device_src->opaque : NULL, size,
            device_src ? device_src->size : 0, status);
}

static void se_sync_memcpy_htod(const SP_Device *device, SP_DeviceMemoryBase *device_dst, const void *host_src,
                                uint64_t size, TF_Status *status) {
  (void)device;
  sync_copy("sync_memcpy_htod", device_dst ? device_dst->opaque : NULL, host_src, size,
            device_dst ? device_dst->size : 0, status);
}

static void se_sync_memcpy_dtod(const SP_Device *device, SP_DeviceMemoryBase *device_dst,
                                const SP_DeviceMemoryBase *device_src, uint64_t size, TF_Status *status) {
  (void)device;
  sync_copy("sync_memcpy_dtod", device_dst ? device_dst->opaque : NULL, device_src ? device_src->opaque : NULL,
            size, device_dst ? device_dst->size : 0, status);
}

typedef struct fill_work {
  void *dst;
  uint64_t size;
  uint32_t pattern;
  int width; /* 1 or 4 bytes */
} fill_work;

static void fill_run(void *arg, TF_Status *status) {
  fill_work *w = (fill_work *)arg;
  if (w->width == 1) {
    memset(w->dst, (int)(w->pattern & 0xffu), (size_t)w->size);
  } else {
    uint64_t i;
    for (i = 0; i < w->size / 4; ++i) memcpy((char *)w->dst + i * 4, &w->pattern, 4);
  }
  TF_SetStatus(status, TF_OK, "");
}

static void enqueue_fill(SP_Stream stream, const char *what, SP_DeviceMemoryBase *location, uint32_t pattern,
                         int width, uint64_t size, TF_Status *status) {
  fill_work w;
  void *dst = location ? location->opaque : NULL;
  if (!copy_args_ok(what, dst, dst, size, location ? location->size : 0, status)) return;
  if (width == 4 && size % 4 != 0) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: memset32 size is not a multiple of 4");
    return;
  }
  w.dst = dst;
  w.size = size;
  w.pattern = pattern;
  w.width = width;
  stream_run(stream, fill_run, &w, status);
}

static void se_mem_zero(const SP_Device *device, SP_Stream stream, SP_DeviceMemoryBase *location, uint64_t size,
                        TF_Status *status) {
  (void)device;
  enqueue_fill(stream, "mem_zero", location, 0, 1, size, status);
}

static void se_memset(const SP_Device *device, SP_Stream stream, SP_DeviceMemoryBase *location, uint8_t pattern,
                      uint64_t size, TF_Status *status) {
  (void)device;
  enqueue_fill(stream, "memset", location, pattern, 1, size, status);
}

static void se_memset32(const SP_Device *device, SP_Stream stream, SP_DeviceMemoryBase *location, uint32_t pattern,
                        uint64_t size, TF_Status *status) {
  (void)device;
  enqueue_fill(stream, "memset32", location, pattern, 4, size, status);
}

/* Runs the callback exactly once, after everything enqueued before it (all
 * of which is done); a failure it reports fails the stream. The stream's
 * lock is not held while it runs, so it may enqueue more work. */
static unsigned char se_host_callback(const SP_Device *device, SP_Stream stream, SE_StatusCallbackFn callback_fn,
                                      void *callback_arg) {
  TF_Status *s;
  (void)device;
  if (stream == NULL || callback_fn == NULL) return 0;
  s = TF_NewStatus();
  callback_fn(callback_arg, s);
  COUNT(host_callbacks);
  if (TF_GetCode(s) != TF_OK) {
    pthread_mutex_lock(&stream->mu);
    stream_fail_locked(stream, TF_GetCode(s), TF_Message(s));
    pthread_mutex_unlock(&stream->mu);
  }
  TF_DeleteStatus(s);
  return 1;
}

/* ======================================================================
 * Platform registration
 * ====================================================================== */

static int g_device_count = 2;
static char g_fail_mode[32];

static int fail_mode(const char *mode) { return strcmp(g_fail_mode, mode) == 0; }

static void get_device_count(const SP_Platform *platform, int *device_count, TF_Status *status) {
  (void)platform;
  *device_count = g_device_count;
  TF_SetStatus(status, TF_OK, "");
}

static void create_device(const SP_Platform *platform, SE_CreateDeviceParams *params, TF_Status *status) {
  test_device *d;
  (void)platform;
  if (TFP_STRUCT_SIZE_CHECK(params, SE_CreateDeviceParams, device) || params->device == NULL) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "TESTDEV: SE_CreateDeviceParams too small, or no SP_Device");
    return;
  }
  if (params->ordinal < 0 || params->ordinal >= g_device_count) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: no such device ordinal");
    return;
  }
  count_set(&g_counters.seen_device_struct_size, (int64_t)params->device->struct_size);
  d = (test_device *)calloc(1, sizeof *d);
  if (d == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "TESTDEV: cannot allocate a device");
    return;
  }
  d->ordinal = params->ordinal;
  snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02x:00.0", (unsigned)(0x10 + d->ordinal));
  params->device->struct_size = SP_DEVICE_STRUCT_SIZE;
  params->device->ext = NULL;
  params->device->ordinal = params->ordinal;
  params->device->device_handle = d;
  params->device->hardware_name = "TESTDEV Accelerator";
  params->device->device_vendor = "tfplugin";
  params->device->pci_bus_id = d->pci_bus_id;
  COUNT(create_device);
  TF_SetStatus(status, TF_OK, "");
}

static void destroy_device(const SP_Platform *platform, SP_Device *device) {
  (void)platform;
  if (device == NULL) return;
  free(device->device_handle);
  device->device_handle = NULL;
  COUNT(destroy_device);
}

static int32_t get_numa_node(const SP_Device *device) {
  (void)device;
  return 0;
}

static int64_t get_memory_bandwidth(const SP_Device *device) {
  (void)device;
  return TFP_TEST_DEVICE_BANDWIDTH;
}

static double get_gflops(const SP_Device *device) {
  (void)device;
  return TFP_TEST_DEVICE_GFLOPS;
}

static void create_device_fns(const SP_Platform *platform, SE_CreateDeviceFnsParams *params, TF_Status *status) {
  SP_DeviceFns *fns;
  (void)platform;
  if (TFP_STRUCT_SIZE_CHECK(params, SE_CreateDeviceFnsParams, device_fns) || params->device_fns == NULL) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "TESTDEV: SE_CreateDeviceFnsParams too small, or no SP_DeviceFns");
    return;
  }
  fns = params->device_fns;
  count_set(&g_counters.seen_device_fns_struct_size, (int64_t)fns->struct_size);
  fns->struct_size = SP_DEVICE_FNS_STRUCT_SIZE;
  fns->ext = NULL;
  fns->get_numa_node = get_numa_node;
  fns->get_memory_bandwidth = get_memory_bandwidth;
  fns->get_gflops = get_gflops;
  COUNT(create_device_fns);
  TF_SetStatus(status, TF_OK, "");
}

static void destroy_device_fns(const SP_Platform *platform, SP_DeviceFns *device_fns) {
  (void)platform;
  (void)device_fns;
  COUNT(destroy_device_fns);
}

static void create_stream_executor(const SP_Platform *platform, SE_CreateStreamExecutorParams *params,
                                   TF_Status *status) {
  SP_StreamExecutor *se;
  (void)platform;
  if (TFP_STRUCT_SIZE_CHECK(params, SE_CreateStreamExecutorParams, stream_executor) ||
      params->stream_executor == NULL) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION,
                 "TESTDEV: SE_CreateStreamExecutorParams too small, or no SP_StreamExecutor");
    return;
  }
  se = params->stream_executor;
  count_set(&g_counters.seen_se_struct_size, (int64_t)se->struct_size);
  se->struct_size = SP_STREAMEXECUTOR_STRUCT_SIZE;
  se->ext = NULL;
  se->allocate = se_allocate;
  se->deallocate = se_deallocate;
  se->host_memory_allocate = se_host_memory_allocate;
  se->host_memory_deallocate = se_host_memory_deallocate;
  se->unified_memory_allocate = se_unified_memory_allocate;
  se->unified_memory_deallocate = se_unified_memory_deallocate;
  se->get_allocator_stats = se_get_allocator_stats;
  se->device_memory_usage = se_device_memory_usage;
  se->create_stream = se_create_stream;
  se->destroy_stream = se_destroy_stream;
  se->create_stream_dependency = se_create_stream_dependency;
  se->get_stream_status = se_get_stream_status;
  se->create_event = se_create_event;
  se->destroy_event = se_destroy_event;
  se->get_event_status = se_get_event_status;
  se->record_event = se_record_event;
  se->wait_for_event = se_wait_for_event;
  se->create_timer = se_create_timer;
  se->destroy_timer = se_destroy_timer;
  se->start_timer = se_start_timer;
  se->stop_timer = se_stop_timer;
  se->memcpy_dtoh = se_memcpy_dtoh;
  se->memcpy_htod = se_memcpy_htod;
  se->memcpy_dtod = se_memcpy_dtod;
  se->sync_memcpy_dtoh = se_sync_memcpy_dtoh;
  se->sync_memcpy_htod = se_sync_memcpy_htod;
  se->sync_memcpy_dtod = se_sync_memcpy_dtod;
  se->block_host_for_event = se_block_host_for_event;
  se->block_host_until_done = se_block_host_until_done;
  se->synchronize_all_activity = se_synchronize_all_activity;
  se->mem_zero = se_mem_zero;
  se->memset = fail_mode("null_memset") ? NULL : se_memset;
  se->memset32 = se_memset32;
  se->host_callback = se_host_callback;
  COUNT(create_stream_executor);
  TF_SetStatus(status, TF_OK, "");
}

static void destroy_stream_executor(const SP_Platform *platform, SP_StreamExecutor *stream_executor) {
  (void)platform;
  (void)stream_executor;
  COUNT(destroy_stream_executor);
}

static void create_timer_fns(const SP_Platform *platform, SP_TimerFns *timer_fns, TF_Status *status) {
  (void)platform;
  if (timer_fns == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: NULL SP_TimerFns");
    return;
  }
  count_set(&g_counters.seen_timer_fns_struct_size, (int64_t)timer_fns->struct_size);
  timer_fns->struct_size = SP_TIMER_FNS_STRUCT_SIZE;
  timer_fns->ext = NULL;
  timer_fns->nanoseconds = timer_nanoseconds;
  COUNT(create_timer_fns);
  TF_SetStatus(status, TF_OK, "");
}

static void destroy_timer_fns(const SP_Platform *platform, SP_TimerFns *timer_fns) {
  (void)platform;
  (void)timer_fns;
  COUNT(destroy_timer_fns);
}

static void destroy_platform(SP_Platform *platform) {
  (void)platform;
  COUNT(destroy_platform);
}

static void destroy_platform_fns(SP_PlatformFns *platform_fns) {
  (void)platform_fns;
  COUNT(destroy_platform_fns);
}

/* Reads TFP_TEST_DEVICES and TFP_TEST_FAIL; false (status set) if invalid. */
static int read_env(TF_Status *status) {
  const char *devices = getenv("TFP_TEST_DEVICES");
  const char *fail = getenv("TFP_TEST_FAIL");
  g_device_count = 2;
  if (devices != NULL && *devices != '\0') {
    char *end = NULL;
    long n = strtol(devices, &end, 10);
    if (*end != '\0' || n < 0 || n > MAX_DEVICES) {
      TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: TFP_TEST_DEVICES must be a number of devices, 0-64");
      return 0;
    }
    g_device_count = (int)n;
  }
  snprintf(g_fail_mode, sizeof g_fail_mode, "%s", fail != NULL ? fail : "");
  return 1;
}

void SE_InitPlugin(SE_PlatformRegistrationParams *params, TF_Status *status) {
  SP_Platform *platform;
  SP_PlatformFns *fns;
  int has_memory_growth;
  COUNT(se_init_calls);
  if (params == NULL || params->platform == NULL || params->platform_fns == NULL) {
    TF_SetStatus(status, TF_INVALID_ARGUMENT, "TESTDEV: SE_InitPlugin without a platform to fill");
    return;
  }
  count_set(&g_counters.seen_params_struct_size, (int64_t)params->struct_size);
  count_set(&g_counters.seen_platform_struct_size, (int64_t)params->platform->struct_size);
  count_set(&g_counters.seen_platform_fns_struct_size, (int64_t)params->platform_fns->struct_size);
  if (TFP_STRUCT_SIZE_CHECK(params, SE_PlatformRegistrationParams, destroy_platform_fns)) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "TESTDEV: SE_PlatformRegistrationParams too small");
    return;
  }
  if (params->major_version != SE_MAJOR) {
    TF_SetStatus(status, TF_FAILED_PRECONDITION, "TESTDEV: built for another StreamExecutor C API major version");
    return;
  }
  if (!read_env(status)) return;
  if (fail_mode("se_init")) {
    TF_SetStatus(status, TF_INTERNAL, "TESTDEV refuses to initialise (TFP_TEST_FAIL=se_init)");
    return;
  }

  platform = params->platform;
  /* What TensorFlow pre-filled says how much of SP_Platform it reads: set
   * force_memory_growth (2.8+) only if it is there. */
  has_memory_growth = TFP_HAS_FIELD(platform, SP_Platform, force_memory_growth);
  platform->struct_size = fail_mode("no_struct_size") ? 0 : SP_PLATFORM_STRUCT_SIZE;
  platform->ext = NULL;
  platform->name = fail_mode("bad_name") ? "testdev" : DEVICE_TYPE;
  platform->type = DEVICE_TYPE;
  platform->supports_unified_memory = 0;
  platform->use_bfc_allocator = 0; /* TESTDEV accounts its memory itself */
  if (has_memory_growth) {
    platform->force_memory_growth = 0;
    count_set(&g_counters.set_force_memory_growth, 1);
  } else {
    count_set(&g_counters.set_force_memory_growth, 0);
  }

  fns = params->platform_fns;
  fns->struct_size = SP_PLATFORM_FNS_STRUCT_SIZE;
  fns->ext = NULL;
  fns->get_device_count = get_device_count;
  fns->create_device = create_device;
  fns->destroy_device = destroy_device;
  fns->create_device_fns = create_device_fns;
  fns->destroy_device_fns = destroy_device_fns;
  fns->create_stream_executor = create_stream_executor;
  fns->destroy_stream_executor = destroy_stream_executor;
  fns->create_timer_fns = create_timer_fns;
  fns->destroy_timer_fns = destroy_timer_fns;

  params->struct_size = SE_PLATFORM_REGISTRATION_PARAMS_STRUCT_SIZE;
  params->destroy_platform = destroy_platform;
  params->destroy_platform_fns = destroy_platform_fns;
  TF_SetStatus(status, TF_OK, "");
}

/* ======================================================================
 * Kernel helpers
 * ====================================================================== */

/* Fails the kernel with a formatted message. */
static void fail_ctx(TF_OpKernelContext *ctx, TF_Code code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  TF_Status *s = TF_NewStatus();
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  TF_SetStatus(s, code, msg);
  TF_OpKernelContext_Failure(ctx, s);
  TF_DeleteStatus(s);
}

/* A shim call's status inside compute: OK goes on; anything else fails the
 * kernel (naming the call) and is counted as unexpected. */
static int expect_ok(TF_OpKernelContext *ctx, TF_Status *s, const char *what) {
  if (TF_GetCode(s) == TF_OK) return 1;
  COUNT(kernel_errors);
  fail_ctx(ctx, TF_GetCode(s), "TESTDEV kernel: %s failed: %s", what, TF_Message(s));
  return 0;
}

/* The same during construction. */
static int expect_ok_c(TF_OpKernelConstruction *ctx, TF_Status *s, const char *what) {
  char msg[512];
  TF_Status *f;
  if (TF_GetCode(s) == TF_OK) return 1;
  COUNT(kernel_errors);
  snprintf(msg, sizeof msg, "TESTDEV kernel construction: %s failed: %s", what, TF_Message(s));
  f = TF_NewStatus();
  TF_SetStatus(f, TF_GetCode(s), msg);
  TF_OpKernelConstruction_Failure(ctx, f);
  TF_DeleteStatus(f);
  return 0;
}

/* A call that must fail with `code`. */
static int expect_code_c(TF_OpKernelConstruction *ctx, TF_Status *s, TF_Code code, const char *what) {
  char msg[512];
  TF_Status *f;
  if (TF_GetCode(s) == code) return 1;
  COUNT(kernel_errors);
  snprintf(msg, sizeof msg, "TESTDEV kernel construction: %s returned code %d, expected %d (%s)", what,
           (int)TF_GetCode(s), (int)code, TF_Message(s));
  f = TF_NewStatus();
  TF_SetStatus(f, TF_INTERNAL, msg);
  TF_OpKernelConstruction_Failure(ctx, f);
  TF_DeleteStatus(f);
  return 0;
}

/* A shim call returned what TensorFlow would not: counted as unexpected, and
 * the kernel fails (INTERNAL) with `fmt`, which starts with the function's
 * name. */
static void check_failed(TF_OpKernelContext *ctx, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  COUNT(kernel_errors);
  fail_ctx(ctx, TF_INTERNAL, "TESTDEV kernel: %s", msg);
}

/* The same during construction. */
static void check_failed_c(TF_OpKernelConstruction *ctx, const char *fmt, ...) {
  char msg[400], full[512];
  va_list ap;
  TF_Status *f = TF_NewStatus();
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  COUNT(kernel_errors);
  snprintf(full, sizeof full, "TESTDEV kernel construction: %s", msg);
  TF_SetStatus(f, TF_INTERNAL, full);
  TF_OpKernelConstruction_Failure(ctx, f);
  TF_DeleteStatus(f);
}

static int view_equals(TF_StringView v, const char *s) {
  size_t n = strlen(s);
  return v.len == n && (n == 0 || (v.data != NULL && memcmp(v.data, s, n) == 0));
}

/* A NUL-terminated copy of `v` (NULL if out of memory). */
static char *view_dup(TF_StringView v) {
  char *c = (char *)malloc(v.len + 1);
  if (c == NULL) return NULL;
  if (v.len > 0) memcpy(c, v.data, v.len);
  c[v.len] = '\0';
  return c;
}

/* Runs `fn` on the kernel's device stream (TF_GetStream). */
static int launch(TF_OpKernelContext *ctx, work_fn fn, void *arg) {
  TF_Status *s = TF_NewStatus();
  SP_Stream stream = TF_GetStream(ctx, s);
  int ok = expect_ok(ctx, s, "TF_GetStream");
  if (ok && stream == NULL) {
    COUNT(kernel_errors);
    fail_ctx(ctx, TF_INTERNAL, "TESTDEV kernel: TF_GetStream returned OK and a NULL stream");
    ok = 0;
  }
  if (ok) {
    stream_run(stream, fn, arg, s);
    if (TF_GetCode(s) != TF_OK) {
      fail_ctx(ctx, TF_GetCode(s), "%s", TF_Message(s));
      ok = 0;
    }
  }
  TF_DeleteStatus(s);
  return ok;
}

/* Copies host bytes into a device tensor, on the kernel's stream. */
static int upload(TF_OpKernelContext *ctx, TF_Tensor *dst, const void *src, size_t bytes) {
  copy_work w;
  w.dst = TF_TensorData(dst);
  w.src = src;
  w.size = bytes;
  if (bytes > 0 && w.dst == NULL) {
    COUNT(kernel_errors);
    fail_ctx(ctx, TF_INTERNAL, "TESTDEV kernel: output tensor has no data");
    return 0;
  }
  return launch(ctx, copy_run, &w);
}

/* Every kernel instance: counted, so a test sees each create deleted. */
typedef struct kernel_base {
  TF_DataType dtype;
  unsigned char transpose_a, transpose_b; /* MatMul */
  int32_t code;                           /* TestFail */
  char *message;                          /* TestFail */
  float *values;                          /* TestAttrs */
  int64_t num_values;                     /* TestAttrs; TestConcatLike, TestStatusApi: N */
  int64_t *ints;                          /* TestStatusApi: errnos */
  char *name;                             /* TF_OpKernelConstruction_GetName */
  pthread_t thread; /* TestAsyncIdentity: the last worker, joined later */
  int has_thread;
} kernel_base;

static kernel_base *new_kernel(void) {
  kernel_base *k = (kernel_base *)calloc(1, sizeof *k);
  if (k != NULL) COUNT(kernels_created);
  return k;
}

static void delete_kernel(void *kernel) {
  kernel_base *k = (kernel_base *)kernel;
  if (k == NULL) return;
  if (k->has_thread) pthread_join(k->thread, NULL);
  free(k->message);
  free(k->values);
  free(k->ints);
  free(k->name);
  free(k);
  COUNT(kernels_deleted);
}

/* A kernel whose construction reads only "T". */
static void *create_typed(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  if (k != NULL) {
    TF_OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, s);
    expect_ok_c(ctx, s, "TF_OpKernelConstruction_GetAttrType(T)");
  }
  TF_DeleteStatus(s);
  return k;
}

static void *create_plain(TF_OpKernelConstruction *ctx) {
  (void)ctx;
  return new_kernel();
}

#define MAX_DIMS 8

static void format_shape(const TF_Tensor *t, char *out, size_t n) {
  int i, r = TF_NumDims(t);
  size_t at = 0;
  at += (size_t)snprintf(out + at, n - at, "[");
  for (i = 0; i < r && at < n; ++i) {
    at += (size_t)snprintf(out + at, n - at, "%s%lld", i ? "," : "", (long long)TF_Dim(t, i));
  }
  if (at < n) snprintf(out + at, n - at, "]");
}

/* ======================================================================
 * AddV2 (float, int32): NumPy broadcasting, output forwarded from an input
 * when nothing else holds it
 * ====================================================================== */

typedef struct add_work {
  const void *x, *y;
  void *z;
  TF_DataType dtype;
  int rank;
  int64_t dims[MAX_DIMS], xs[MAX_DIMS], ys[MAX_DIMS]; /* strides, 0 where broadcast */
  int64_t n;
} add_work;

static void add_run(void *arg, TF_Status *status) {
  add_work *w = (add_work *)arg;
  int64_t idx[MAX_DIMS] = {0};
  int64_t o, xo = 0, yo = 0;
  int d;
  for (o = 0; o < w->n; ++o) {
    if (w->dtype == TF_FLOAT) {
      ((float *)w->z)[o] = ((const float *)w->x)[xo] + ((const float *)w->y)[yo];
    } else { /* int32: wraps, as TensorFlow's */
      uint32_t a = (uint32_t)((const int32_t *)w->x)[xo], b = (uint32_t)((const int32_t *)w->y)[yo];
      ((int32_t *)w->z)[o] = (int32_t)(a + b);
    }
    for (d = w->rank - 1; d >= 0; --d) { /* next output index, odometer-wise */
      idx[d]++;
      xo += w->xs[d];
      yo += w->ys[d];
      if (idx[d] < w->dims[d]) break;
      xo -= w->xs[d] * w->dims[d];
      yo -= w->ys[d] * w->dims[d];
      idx[d] = 0;
    }
  }
  TF_SetStatus(status, TF_OK, "");
}

/* Strides of `t` aligned right to an output of `rank` dims. */
static void broadcast_strides(const TF_Tensor *t, int rank, int64_t *strides) {
  int r = TF_NumDims(t), d;
  int64_t stride = 1;
  for (d = rank - 1; d >= 0; --d) {
    int td = d - (rank - r);
    if (td < 0) {
      strides[d] = 0;
      continue;
    }
    strides[d] = TF_Dim(t, td) == 1 ? 0 : stride;
    stride *= TF_Dim(t, td);
  }
}

static void addv2_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL, *z = NULL;
  add_work w;
  int candidates[2] = {0, 1};
  int forwarded = -1, d, rx, ry;
  memset(&w, 0, sizeof w);

  TF_GetInput(ctx, 0, &x, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  TF_GetInput(ctx, 1, &y, s);
  if (!expect_ok(ctx, s, "TF_GetInput(1)")) goto done;
  if (TF_TensorType(x) != k->dtype || TF_TensorType(y) != k->dtype || TF_ExpectedOutputDataType(ctx, 0) != k->dtype) {
    COUNT(kernel_errors);
    fail_ctx(ctx, TF_INTERNAL, "AddV2: input/output types disagree with T");
    goto done;
  }
  rx = TF_NumDims(x);
  ry = TF_NumDims(y);
  w.rank = rx > ry ? rx : ry;
  if (w.rank > MAX_DIMS) {
    fail_ctx(ctx, TF_UNIMPLEMENTED, "AddV2 on TESTDEV supports up to %d dimensions", MAX_DIMS);
    goto done;
  }
  w.n = 1;
  for (d = 0; d < w.rank; ++d) {
    int xd = d - (w.rank - rx), yd = d - (w.rank - ry);
    int64_t a = xd >= 0 ? TF_Dim(x, xd) : 1, b = yd >= 0 ? TF_Dim(y, yd) : 1;
    if (a != b && a != 1 && b != 1) {
      char sx[128], sy[128];
      format_shape(x, sx, sizeof sx);
      format_shape(y, sy, sizeof sy);
      fail_ctx(ctx, TF_INVALID_ARGUMENT, "Incompatible shapes: %s vs. %s", sx, sy);
      goto done;
    }
    w.dims[d] = a == 1 ? b : a;
    w.n *= w.dims[d];
  }
  broadcast_strides(x, w.rank, w.xs);
  broadcast_strides(y, w.rank, w.ys);
  /* Let go of the inputs so one can be forwarded (a held input is shared). */
  TF_DeleteTensor(x);
  TF_DeleteTensor(y);
  x = y = NULL;
  z = TF_ForwardInputOrAllocateOutput(ctx, candidates, 2, 0, w.dims, w.rank, &forwarded, s);
  if (!expect_ok(ctx, s, "TF_ForwardInputOrAllocateOutput")) goto done;
  if (forwarded >= 0) COUNT(addv2_forwarded);
  TF_GetInput(ctx, 0, &x, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  TF_GetInput(ctx, 1, &y, s);
  if (!expect_ok(ctx, s, "TF_GetInput(1)")) goto done;
  w.x = TF_TensorData(x);
  w.y = TF_TensorData(y);
  w.z = TF_TensorData(z);
  w.dtype = k->dtype;
  launch(ctx, add_run, &w);
  if (fail_mode("kern_addv2_ulp") && k->dtype == TF_FLOAT && w.n > 0) {
    /* streams run synchronously: the result is there; 1000 ulp off */
    uint32_t bits;
    memcpy(&bits, w.z, sizeof bits);
    bits += 1000;
    memcpy(w.z, &bits, sizeof bits);
  }
done:
  if (x != NULL) TF_DeleteTensor(x);
  if (y != NULL) TF_DeleteTensor(y);
  if (z != NULL) TF_DeleteTensor(z);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * MatMul (float): transpose_a / transpose_b; B is packed into a device
 * temporary first, the sizes travel in a host temporary
 * ====================================================================== */

static void *matmul_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  if (k != NULL) {
    TF_OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, s);
    if (expect_ok_c(ctx, s, "GetAttrType(T)")) {
      TF_OpKernelConstruction_GetAttrBool(ctx, "transpose_a", &k->transpose_a, s);
      if (expect_ok_c(ctx, s, "GetAttrBool(transpose_a)")) {
        TF_OpKernelConstruction_GetAttrBool(ctx, "transpose_b", &k->transpose_b, s);
        expect_ok_c(ctx, s, "GetAttrBool(transpose_b)");
      }
    }
  }
  TF_DeleteStatus(s);
  return k;
}

typedef struct matmul_work {
  const float *a, *b;
  float *packed_b, *c;
  const int64_t *mkn; /* host temporary: m, k, n */
  int ta, tb;
} matmul_work;

static void matmul_run(void *arg, TF_Status *status) {
  matmul_work *w = (matmul_work *)arg;
  int64_t m = w->mkn[0], k = w->mkn[1], n = w->mkn[2], i, j, p;
  for (p = 0; p < k; ++p) { /* packed_b: k x n, row-major */
    for (j = 0; j < n; ++j) w->packed_b[p * n + j] = w->tb ? w->b[j * k + p] : w->b[p * n + j];
  }
  for (i = 0; i < m; ++i) {
    for (j = 0; j < n; ++j) {
      double acc = 0;
      for (p = 0; p < k; ++p) {
        float av = w->ta ? w->a[p * m + i] : w->a[i * k + p];
        acc += (double)av * (double)w->packed_b[p * n + j];
      }
      w->c[i * n + j] = (float)acc;
    }
  }
  TF_SetStatus(status, TF_OK, "");
}

static void matmul_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *kb = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *a = NULL, *b = NULL, *c = NULL, *packed = NULL, *sizes = NULL;
  TF_AllocatorAttributes on_host;
  matmul_work w;
  int64_t m, k, k2, n, dims[2], three = 3;

  if (fail_mode("kern_error")) {
    fail_ctx(ctx, TF_INTERNAL, "fixture: MatMul refuses to run");
    goto done;
  }

  TF_GetInput(ctx, 0, &a, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  TF_GetInput(ctx, 1, &b, s);
  if (!expect_ok(ctx, s, "TF_GetInput(1)")) goto done;
  if (TF_NumDims(a) != 2 || TF_NumDims(b) != 2) {
    char shape[128];
    int which = TF_NumDims(a) != 2 ? 0 : 1;
    format_shape(which == 0 ? a : b, shape, sizeof shape);
    fail_ctx(ctx, TF_INVALID_ARGUMENT, "In[%d] is not a matrix. Instead it has shape %s", which, shape);
    goto done;
  }
  m = kb->transpose_a ? TF_Dim(a, 1) : TF_Dim(a, 0);
  k = kb->transpose_a ? TF_Dim(a, 0) : TF_Dim(a, 1);
  k2 = kb->transpose_b ? TF_Dim(b, 1) : TF_Dim(b, 0);
  n = kb->transpose_b ? TF_Dim(b, 0) : TF_Dim(b, 1);
  if (k != k2) {
    char sa[64], sb[64];
    format_shape(a, sa, sizeof sa);
    format_shape(b, sb, sizeof sb);
    fail_ctx(ctx, TF_INVALID_ARGUMENT, "Matrix size-incompatible: In[0]: %s, In[1]: %s", sa, sb);
    goto done;
  }
  dims[0] = m;
  dims[1] = n;
  c = TF_AllocateOutput(ctx, 0, TF_FLOAT, dims, 2, (size_t)(m * n) * sizeof(float), s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput")) goto done;
  dims[0] = k;
  dims[1] = n;
  packed = TF_AllocateTemp(ctx, TF_FLOAT, dims, 2, NULL, s);
  if (!expect_ok(ctx, s, "TF_AllocateTemp(device)")) goto done;
  on_host.struct_size = TF_ALLOCATOR_ATTRIBUTES_STRUCT_SIZE;
  on_host.on_host = 1;
  sizes = TF_AllocateTemp(ctx, TF_INT64, &three, 1, &on_host, s);
  if (!expect_ok(ctx, s, "TF_AllocateTemp(on_host)")) goto done;
  ((int64_t *)TF_TensorData(sizes))[0] = m;
  ((int64_t *)TF_TensorData(sizes))[1] = k;
  ((int64_t *)TF_TensorData(sizes))[2] = n;
  w.a = (const float *)TF_TensorData(a);
  w.b = (const float *)TF_TensorData(b);
  w.c = (float *)TF_TensorData(c);
  w.packed_b = (float *)TF_TensorData(packed);
  w.mkn = (const int64_t *)TF_TensorData(sizes);
  w.ta = kb->transpose_a;
  w.tb = kb->transpose_b;
  launch(ctx, matmul_run, &w);
done:
  if (a != NULL) TF_DeleteTensor(a);
  if (b != NULL) TF_DeleteTensor(b);
  if (c != NULL) TF_DeleteTensor(c);
  if (packed != NULL) TF_DeleteTensor(packed);
  if (sizes != NULL) TF_DeleteTensor(sizes);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * More reference ops for validate_plugin's kernels phase (float): BiasAdd,
 * Softmax, Sum, Cast float -> int32. Plain loops on the stream.
 * ====================================================================== */

typedef struct math_work {
  const TF_Tensor *in, *in2; /* in2: BiasAdd's bias */
  TF_Tensor *out;
  int64_t n, inner;          /* elements; size of the last dimension */
  unsigned char reduced[MAX_DIMS]; /* Sum: dimensions reduced */
  int rank;
} math_work;

static void bias_add_run(void *arg, TF_Status *status) {
  math_work *w = (math_work *)arg;
  const float *x = (const float *)TF_TensorData(w->in), *b = (const float *)TF_TensorData(w->in2);
  float *y = (float *)TF_TensorData(w->out);
  int64_t i;
  for (i = 0; i < w->n; ++i) {
    /* kern_bias_axis: the bias indexed by the row instead of the channel */
    y[i] = x[i] + b[fail_mode("kern_bias_axis") ? (i / w->inner) % w->inner : i % w->inner];
  }
  TF_SetStatus(status, TF_OK, "");
}

static void softmax_run(void *arg, TF_Status *status) {
  math_work *w = (math_work *)arg;
  const float *x = (const float *)TF_TensorData(w->in);
  float *y = (float *)TF_TensorData(w->out);
  int64_t row, j;
  for (row = 0; w->inner > 0 && row < w->n; row += w->inner) {
    float max = x[row];
    double sum = 0;
    for (j = 1; j < w->inner; ++j) max = x[row + j] > max ? x[row + j] : max;
    for (j = 0; j < w->inner; ++j) sum += exp((double)x[row + j] - max);
    for (j = 0; j < w->inner; ++j) y[row + j] = (float)(exp((double)x[row + j] - max) / sum);
  }
  TF_SetStatus(status, TF_OK, "");
}

static void sum_run(void *arg, TF_Status *status) {
  math_work *w = (math_work *)arg;
  const float *x = (const float *)TF_TensorData(w->in);
  int64_t idx[MAX_DIMS] = {0}, i, o, stride;
  int64_t n_out = TF_TensorElementCount(w->out);
  double *acc = (double *)calloc(n_out > 0 ? (size_t)n_out : 1, sizeof *acc);
  int d;
  if (acc == NULL) {
    TF_SetStatus(status, TF_RESOURCE_EXHAUSTED, "Sum: no memory");
    return;
  }
  for (i = 0; i < w->n; ++i) {
    /* the output offset: the kept dimensions' index, row-major */
    for (o = 0, stride = 1, d = w->rank - 1; d >= 0; --d) {
      if (w->reduced[d]) continue;
      o += idx[d] * stride;
      stride *= TF_Dim(w->in, d);
    }
    acc[o] += x[i];
    for (d = w->rank - 1; d >= 0; --d) {
      if (++idx[d] < TF_Dim(w->in, d)) break;
      idx[d] = 0;
    }
  }
  for (o = 0; o < n_out; ++o) ((float *)TF_TensorData(w->out))[o] = (float)acc[o];
  free(acc);
  TF_SetStatus(status, TF_OK, "");
}

static void cast_run(void *arg, TF_Status *status) {
  math_work *w = (math_work *)arg;
  const float *x = (const float *)TF_TensorData(w->in);
  int32_t *y = (int32_t *)TF_TensorData(w->out);
  int64_t i;
  for (i = 0; i < w->n; ++i) y[i] = (int32_t)x[i]; /* truncates toward zero */
  TF_SetStatus(status, TF_OK, "");
}

static void *sum_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  if (k != NULL) {
    TF_OpKernelConstruction_GetAttrBool(ctx, "keep_dims", &k->transpose_a, s); /* reused as keep_dims */
    expect_ok_c(ctx, s, "GetAttrBool(keep_dims)");
  }
  TF_DeleteStatus(s);
  return k;
}

/* Output 0 of `dtype` with the given dims; NULL (status set) on failure. */
static TF_Tensor *output(TF_OpKernelContext *ctx, TF_DataType dtype, const int64_t *dims, int rank,
                         TF_Status *s) {
  TF_Tensor *t = TF_AllocateOutput(ctx, 0, dtype, dims, rank, 0, s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput")) {
    if (t != NULL) TF_DeleteTensor(t);
    return NULL;
  }
  return t;
}

/* BiasAdd, Softmax, Cast: an output shaped like input 0; Sum: reduced. */
static void math_compute(void *kernel, TF_OpKernelContext *ctx, const char *op) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL, *out = NULL;
  int64_t dims[MAX_DIMS];
  math_work w;
  int d, r, rank_out = 0;
  memset(&w, 0, sizeof w);
  TF_GetInput(ctx, 0, &x, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  r = TF_NumDims(x);
  if (r > MAX_DIMS || (r == 0 && strcmp(op, "Sum") != 0 && strcmp(op, "Cast") != 0)) {
    fail_ctx(ctx, TF_INVALID_ARGUMENT, "%s on TESTDEV: input rank %d not supported", op, r);
    goto done;
  }
  w.in = x;
  w.rank = r;
  w.n = TF_TensorElementCount(x);
  w.inner = r > 0 ? TF_Dim(x, r - 1) : 1;
  for (d = 0; d < r; ++d) dims[d] = TF_Dim(x, d);
  if (strcmp(op, "BiasAdd") == 0 || strcmp(op, "Sum") == 0) {
    TF_GetInput(ctx, 1, &y, s);
    if (!expect_ok(ctx, s, "TF_GetInput(1)")) goto done;
    w.in2 = y;
  }
  if (strcmp(op, "Sum") == 0) { /* reduction_indices: host memory, int32 */
    const int32_t *axes = (const int32_t *)TF_TensorData(y);
    int64_t i, n_axes = TF_TensorElementCount(y);
    for (i = 0; i < n_axes; ++i) {
      int32_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < 0 || a >= r) {
        fail_ctx(ctx, TF_INVALID_ARGUMENT, "Invalid reduction dimension %d for input with %d dimensions", axes[i], r);
        goto done;
      }
      w.reduced[a] = 1;
    }
    for (d = 0; d < r; ++d) {
      if (!w.reduced[d]) dims[rank_out++] = TF_Dim(x, d);
      else if (k->transpose_a) dims[rank_out++] = 1;
    }
    r = rank_out;
  }
  out = output(ctx, strcmp(op, "Cast") == 0 ? TF_INT32 : TF_FLOAT, dims, r, s);
  if (out == NULL) goto done;
  w.out = out;
  launch(ctx,
         strcmp(op, "BiasAdd") == 0   ? bias_add_run
         : strcmp(op, "Softmax") == 0 ? softmax_run
         : strcmp(op, "Sum") == 0     ? sum_run
                                      : cast_run,
         &w);
done:
  if (x != NULL) TF_DeleteTensor(x);
  if (y != NULL) TF_DeleteTensor(y);
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

static void bias_add_compute(void *kernel, TF_OpKernelContext *ctx) { math_compute(kernel, ctx, "BiasAdd"); }
static void softmax_compute(void *kernel, TF_OpKernelContext *ctx) { math_compute(kernel, ctx, "Softmax"); }
static void sum_compute(void *kernel, TF_OpKernelContext *ctx) { math_compute(kernel, ctx, "Sum"); }
static void cast_compute(void *kernel, TF_OpKernelContext *ctx) { math_compute(kernel, ctx, "Cast"); }

/* ======================================================================
 * Identity: priority 1 (shares its input), priority 0 (must never run),
 * label "special" (copies on the stream)
 * ====================================================================== */

static void identity_compute(void *kernel, TF_OpKernelContext *ctx) {
  TF_Status *s = TF_NewStatus();
  TF_Tensor *in = NULL;
  (void)kernel;
  TF_GetInput(ctx, 0, &in, s);
  if (expect_ok(ctx, s, "TF_GetInput(0)")) {
    TF_SetOutput(ctx, 0, in, s);
    expect_ok(ctx, s, "TF_SetOutput(0)");
  }
  if (in != NULL) TF_DeleteTensor(in);
  TF_DeleteStatus(s);
}

static void identity_loser_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  COUNT(identity_loser_runs);
  fail_ctx(ctx, TF_INTERNAL, "the priority-0 Identity kernel ran although a priority-1 kernel matches");
}

/* Allocates output 0 like input 0 and copies it on the stream. */
static void copy_input_to_output(TF_OpKernelContext *ctx) {
  TF_Status *s = TF_NewStatus();
  TF_Tensor *in = NULL, *out = NULL;
  int64_t dims[MAX_DIMS];
  int d, r;
  copy_work w;
  TF_GetInput(ctx, 0, &in, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  r = TF_NumDims(in);
  if (r > MAX_DIMS) {
    fail_ctx(ctx, TF_UNIMPLEMENTED, "TESTDEV copies support up to %d dimensions", MAX_DIMS);
    goto done;
  }
  for (d = 0; d < r; ++d) dims[d] = TF_Dim(in, d);
  out = TF_AllocateOutput(ctx, 0, TF_TensorType(in), dims, r, TF_TensorByteSize(in), s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput(0)")) goto done;
  w.dst = TF_TensorData(out);
  w.src = TF_TensorData(in);
  w.size = TF_TensorByteSize(in);
  launch(ctx, copy_run, &w);
done:
  if (in != NULL) TF_DeleteTensor(in);
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

static void identity_special_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  COUNT(identity_special_runs);
  copy_input_to_output(ctx);
}

/* ======================================================================
 * Shape (out_type int32, output in host memory)
 * ====================================================================== */

static void shape_compute(void *kernel, TF_OpKernelContext *ctx) {
  TF_Status *s = TF_NewStatus();
  TF_Tensor *in = NULL, *out = NULL;
  int64_t rank;
  int d;
  (void)kernel;
  TF_GetInput(ctx, 0, &in, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  if (TF_IsHostMemoryInput(ctx, 0, s) || !expect_ok(ctx, s, "TF_IsHostMemoryInput(0)")) {
    if (TF_GetCode(s) == TF_OK) {
      COUNT(kernel_errors);
      fail_ctx(ctx, TF_INTERNAL, "Shape: input 0 should be in device memory");
    }
    goto done;
  }
  if (!TF_IsHostMemoryOutput(ctx, 0, s) || !expect_ok(ctx, s, "TF_IsHostMemoryOutput(0)")) {
    if (TF_GetCode(s) == TF_OK) {
      COUNT(kernel_errors);
      fail_ctx(ctx, TF_INTERNAL, "Shape: output 0 should be in host memory (TF_KernelBuilder_HostMemory)");
    }
    goto done;
  }
  rank = TF_NumDims(in);
  out = TF_AllocateOutput(ctx, 0, TF_INT32, &rank, 1, (size_t)rank * sizeof(int32_t), s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput(0)")) goto done;
  for (d = 0; d < (int)rank; ++d) {
    int64_t v = TF_Dim(in, d);
    if (v > INT32_MAX) {
      fail_ctx(ctx, TF_INVALID_ARGUMENT, "Shape output type is 32-bit but dim %d is %lld", d, (long long)v);
      goto done;
    }
    ((int32_t *)TF_TensorData(out))[d] = (int32_t)v; /* host memory: written directly */
  }
done:
  if (in != NULL) TF_DeleteTensor(in);
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestAsyncIdentity: an async kernel; the copy and the done callback run on
 * a thread of the kernel's own
 * ====================================================================== */

typedef struct async_job {
  TF_OpKernelContext *ctx;
  TF_AsyncOpKernelDoneCallback *done;
  pthread_t caller;
} async_job;

static void *async_main(void *arg) {
  async_job *job = (async_job *)arg;
  if (!pthread_equal(pthread_self(), job->caller)) COUNT(async_on_other_thread);
  copy_input_to_output(job->ctx);
  TF_RunAsyncOpKernelDoneCallback(job->done); /* ctx is gone after this */
  free(job);
  return NULL;
}

static void async_compute(void *kernel, TF_OpKernelContext *ctx, TF_AsyncOpKernelDoneCallback *done) {
  kernel_base *k = (kernel_base *)kernel;
  async_job *job = (async_job *)malloc(sizeof *job);
  if (job == NULL) {
    fail_ctx(ctx, TF_RESOURCE_EXHAUSTED, "TestAsyncIdentity: out of memory");
    TF_RunAsyncOpKernelDoneCallback(done);
    return;
  }
  if (k->has_thread) { /* the previous run's worker: finished but not joined */
    pthread_join(k->thread, NULL);
    k->has_thread = 0;
  }
  job->ctx = ctx;
  job->done = done;
  job->caller = pthread_self();
  if (pthread_create(&k->thread, NULL, async_main, job) != 0) {
    async_main(job); /* no thread: do it here */
    return;
  }
  k->has_thread = 1;
}

/* ======================================================================
 * TestAttrs: every attr kind read with every getter; what was read comes
 * out as a float vector (layout in tests/host/test_host.cc, AttrReader)
 * ====================================================================== */

typedef struct floats {
  float *v;
  int64_t n, cap;
} floats;

static void push(floats *f, double x) {
  if (f->n == f->cap) {
    int64_t cap = f->cap ? f->cap * 2 : 64;
    float *v = (float *)realloc(f->v, (size_t)cap * sizeof(float));
    if (v == NULL) return; /* values get lost; the test sees a short vector */
    f->v = v;
    f->cap = cap;
  }
  f->v[f->n++] = (float)x;
}

static void push_chars(floats *f, const char *s, size_t n) {
  size_t i;
  push(f, (double)n);
  for (i = 0; i < n; ++i) push(f, (double)(unsigned char)s[i]);
}

/* ---- Serialized protocol buffers (TF_Buffer), read the way a plugin must:
 * only the fields wanted, skipping any other of any wire type. */

typedef struct pb_reader {
  const unsigned char *p, *end;
} pb_reader;

static int pb_varint(pb_reader *r, uint64_t *v) {
  int shift;
  *v = 0;
  for (shift = 0; r->p < r->end && shift < 64; shift += 7) {
    unsigned char b = *r->p++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return 1;
  }
  return 0;
}

/* Length-delimited field `field` of a message: 1 and its bytes if present,
 * 0 if absent (proto3 leaves empty strings out), -1 if malformed. */
static int pb_find_bytes(const void *data, size_t len, uint64_t field, const char **bytes, size_t *n) {
  pb_reader r;
  uint64_t key, v;
  *bytes = "";
  *n = 0;
  if (len == 0) return 0;
  if (data == NULL) return -1;
  r.p = (const unsigned char *)data;
  r.end = r.p + len;
  while (r.p < r.end) {
    if (!pb_varint(&r, &key)) return -1;
    switch (key & 7) {
      case 0: /* varint */
        if (!pb_varint(&r, &v)) return -1;
        break;
      case 1: /* 64-bit */
        if (r.end - r.p < 8) return -1;
        r.p += 8;
        break;
      case 2: /* length-delimited */
        if (!pb_varint(&r, &v) || v > (uint64_t)(r.end - r.p)) return -1;
        if ((key >> 3) == field) {
          *bytes = (const char *)r.p;
          *n = (size_t)v;
          return 1;
        }
        r.p += v;
        break;
      case 5: /* 32-bit */
        if (r.end - r.p < 4) return -1;
        r.p += 4;
        break;
      default:
        return -1;
    }
  }
  return 0;
}

/* A private copy of a buffer TensorFlow handed out, checked: TF_GetBuffer
 * shows the buffer's own fields, TF_NewBufferFromString copies the bytes.
 * NULL (construction failed, naming the function) on a surprise. */
static TF_Buffer *copy_buffer(TF_OpKernelConstruction *ctx, TF_Buffer *buf, const char *what) {
  TF_Buffer view, *copy;
  if (buf == NULL) {
    check_failed_c(ctx, "%s returned OK and a NULL buffer", what);
    return NULL;
  }
  view = TF_GetBuffer(buf);
  if (view.data != buf->data || view.length != buf->length || view.data_deallocator != buf->data_deallocator) {
    check_failed_c(ctx, "TF_GetBuffer: the copy of %s's buffer differs from the buffer", what);
    return NULL;
  }
  copy = TF_NewBufferFromString(view.data, view.length);
  if (copy == NULL || copy->length != view.length ||
      (view.length > 0 && (copy->data == view.data || memcmp(copy->data, view.data, view.length) != 0))) {
    check_failed_c(ctx, "TF_NewBufferFromString: not a copy of the %zu bytes of %s's buffer", view.length, what);
    if (copy != NULL) TF_DeleteBuffer(copy);
    return NULL;
  }
  return copy;
}

/* A buffer the plugin fills itself (TF_NewBuffer gives an empty one); its
 * data remembers where to count its deallocation, and its size. */
typedef struct buffer_probe {
  int *frees;
} buffer_probe;

static void probe_deallocator(void *data, size_t length) {
  buffer_probe *p = (buffer_probe *)data;
  if (p == NULL) return;
  *p->frees += length == sizeof *p ? 1 : 100; /* a wrong length shows */
  free(p);
}

static int check_own_buffer(TF_OpKernelConstruction *ctx) {
  int frees = 0;
  TF_Buffer *b = TF_NewBuffer();
  buffer_probe *p;
  if (b == NULL || b->data != NULL || b->length != 0 || b->data_deallocator != NULL) {
    check_failed_c(ctx, "TF_NewBuffer: a new buffer is not empty");
    if (b != NULL) TF_DeleteBuffer(b);
    return 0;
  }
  p = (buffer_probe *)malloc(sizeof *p);
  if (p == NULL) {
    TF_DeleteBuffer(b);
    return 0;
  }
  p->frees = &frees;
  b->data = p;
  b->length = sizeof *p;
  b->data_deallocator = probe_deallocator;
  TF_DeleteBuffer(b);
  if (frees != 1) {
    check_failed_c(ctx, "TF_DeleteBuffer: the buffer's own deallocator ran %s", frees == 0 ? "not at all"
                                                                              : "with a wrong length or twice");
    return 0;
  }
  return 1;
}

/* A string field of a serialized message in `buf` (copied, checked) onto
 * `out`; it must be present if `required`, and equal `expect` unless NULL. */
static int push_proto_string(TF_OpKernelConstruction *ctx, TF_Buffer *buf, const char *what, uint64_t field,
                             int required, const char *expect, floats *out) {
  TF_Buffer *copy = copy_buffer(ctx, buf, what);
  const char *bytes;
  size_t n;
  int found;
  if (copy == NULL) return 0;
  found = pb_find_bytes(copy->data, copy->length, field, &bytes, &n);
  if (found < 0 || (required && found == 0)) {
    check_failed_c(ctx, "%s: %s field %d of the serialized message", what, found < 0 ? "malformed" : "no",
                   (int)field);
    TF_DeleteBuffer(copy);
    return 0;
  }
  if (expect != NULL && (n != strlen(expect) || memcmp(bytes, expect, n) != 0)) {
    check_failed_c(ctx, "%s: field %d is '%.*s', expected '%s'", what, (int)field, (int)n, bytes, expect);
    TF_DeleteBuffer(copy);
    return 0;
  }
  push_chars(out, bytes, n);
  TF_DeleteBuffer(copy);
  return 1;
}

/* A host tensor (from a tensor attr): dtype, rank, dims, then its values as
 * floats; false (construction failed) if the tensor is inconsistent. */
static int push_tensor(TF_OpKernelConstruction *ctx, const char *what, const TF_Tensor *t, floats *out) {
  TF_DataType dt;
  int r, d;
  int64_t n = 1, i;
  size_t elem;
  const void *data;
  if (t == NULL) {
    check_failed_c(ctx, "%s returned OK and a NULL tensor", what);
    return 0;
  }
  dt = TF_TensorType(t);
  r = TF_NumDims(t);
  elem = TF_DataTypeSize(dt);
  data = TF_TensorData(t);
  for (d = 0; d < r; ++d) n *= TF_Dim(t, d);
  if (TF_TensorElementCount(t) != n) {
    check_failed_c(ctx, "TF_TensorElementCount: %lld elements, the dims say %lld (%s)",
                   (long long)TF_TensorElementCount(t), (long long)n, what);
    return 0;
  }
  if ((size_t)n * elem != TF_TensorByteSize(t) || (n > 0 && data == NULL)) {
    check_failed_c(ctx, "%s: a tensor of %lld elements of %zu bytes has %zu bytes", what, (long long)n, elem,
                   TF_TensorByteSize(t));
    return 0;
  }
  push(out, dt);
  push(out, r);
  for (d = 0; d < r; ++d) push(out, (double)TF_Dim(t, d));
  for (i = 0; i < n; ++i) {
    switch (dt) {
      case TF_FLOAT: push(out, ((const float *)data)[i]); break;
      case TF_DOUBLE: push(out, ((const double *)data)[i]); break;
      case TF_INT32: push(out, ((const int32_t *)data)[i]); break;
      case TF_INT64: push(out, (double)((const int64_t *)data)[i]); break;
      case TF_UINT8:
      case TF_BOOL: push(out, ((const unsigned char *)data)[i]); break;
      default:
        check_failed_c(ctx, "%s: TestAttrs reads tensors of float, double, int32, int64, uint8, bool; not type %d",
                       what, (int)dt);
        return 0;
    }
  }
  return 1;
}

/* Reads all of TestAttrs' attrs; false (construction failed) on a surprise. */
static int read_attrs(TF_OpKernelConstruction *ctx, TF_Status *s, floats *out) {
  int64_t i64 = 0;
  int32_t i32 = 0, list = 0, total = 0, j;
  float f = 0;
  unsigned char b = 0;
  TF_DataType t = TF_FLOAT;
  TF_StringView name;

  TF_OpKernelConstruction_GetAttrInt64(ctx, "i", &i64, s);
  if (!expect_ok_c(ctx, s, "GetAttrInt64(i)")) return 0;
  push(out, (double)i64);
  TF_OpKernelConstruction_GetAttrInt32(ctx, "i", &i32, s);
  if (!expect_ok_c(ctx, s, "GetAttrInt32(i)")) return 0;
  push(out, i32);
  TF_OpKernelConstruction_GetAttrFloat(ctx, "f", &f, s);
  if (!expect_ok_c(ctx, s, "GetAttrFloat(f)")) return 0;
  push(out, f);
  TF_OpKernelConstruction_GetAttrBool(ctx, "b", &b, s);
  if (!expect_ok_c(ctx, s, "GetAttrBool(b)")) return 0;
  push(out, b);
  TF_OpKernelConstruction_GetAttrType(ctx, "t", &t, s);
  if (!expect_ok_c(ctx, s, "GetAttrType(t)")) return 0;
  push(out, (double)t);

  /* string: its length from GetAttrSize, then the bytes (not terminated) */
  TF_OpKernelConstruction_GetAttrSize(ctx, "s", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(s)")) return 0;
  {
    char *buf = (char *)malloc((size_t)total + 1);
    if (buf == NULL) return 0;
    TF_OpKernelConstruction_GetAttrString(ctx, "s", buf, (size_t)total, s);
    if (!expect_ok_c(ctx, s, "GetAttrString(s)")) {
      free(buf);
      return 0;
    }
    push(out, list);
    push_chars(out, buf, (size_t)total);
    free(buf);
  }

  /* shape: GetAttrSize gives the rank, GetAttrTensorShape the dims (not
   * exported by TensorFlow 2.21: declared at the top, as for an older release) */
  TF_OpKernelConstruction_GetAttrSize(ctx, "shape", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(shape)")) return 0;
  push(out, list);
  push(out, total);
  if (total >= 0) {
    int64_t dims[MAX_DIMS];
    if (total > MAX_DIMS) {
      check_failed_c(ctx, "TestAttrs reads shapes of up to %d dimensions, not %d", MAX_DIMS, (int)total);
      return 0;
    }
    for (j = 0; j < total; ++j) dims[j] = -7; /* must all be overwritten */
    TF_OpKernelConstruction_GetAttrTensorShape(ctx, "shape", dims, (size_t)total, s);
    if (!expect_ok_c(ctx, s, "GetAttrTensorShape(shape)")) return 0;
    for (j = 0; j < total; ++j) push(out, (double)dims[j]);
  }

  /* list(int), read as int64 and as int32 */
  TF_OpKernelConstruction_GetAttrSize(ctx, "li", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(li)")) return 0;
  push(out, list);
  {
    int64_t *v64 = (int64_t *)calloc((size_t)list + 1, sizeof(int64_t));
    int32_t *v32 = (int32_t *)calloc((size_t)list + 1, sizeof(int32_t));
    int ok = v64 != NULL && v32 != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrInt64List(ctx, "li", v64, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrInt64List(li)");
    }
    if (ok) {
      TF_OpKernelConstruction_GetAttrInt32List(ctx, "li", v32, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrInt32List(li)");
    }
    for (j = 0; ok && j < list; ++j) push(out, (double)v64[j]);
    for (j = 0; ok && j < list; ++j) push(out, v32[j]);
    free(v64);
    free(v32);
    if (!ok) return 0;
  }

  /* list(float) */
  TF_OpKernelConstruction_GetAttrSize(ctx, "lf", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(lf)")) return 0;
  push(out, list);
  {
    float *v = (float *)calloc((size_t)list + 1, sizeof(float));
    int ok = v != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrFloatList(ctx, "lf", v, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrFloatList(lf)");
    }
    for (j = 0; ok && j < list; ++j) push(out, v[j]);
    free(v);
    if (!ok) return 0;
  }

  /* list(bool) */
  TF_OpKernelConstruction_GetAttrSize(ctx, "lb", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(lb)")) return 0;
  push(out, list);
  {
    unsigned char *v = (unsigned char *)calloc((size_t)list + 1, 1);
    int ok = v != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrBoolList(ctx, "lb", v, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrBoolList(lb)");
    }
    for (j = 0; ok && j < list; ++j) push(out, v[j]);
    free(v);
    if (!ok) return 0;
  }

  /* list(type) */
  TF_OpKernelConstruction_GetAttrSize(ctx, "lt", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(lt)")) return 0;
  push(out, list);
  {
    TF_DataType *v = (TF_DataType *)calloc((size_t)list + 1, sizeof(TF_DataType));
    int ok = v != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrTypeList(ctx, "lt", v, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrTypeList(lt)");
    }
    for (j = 0; ok && j < list; ++j) push(out, (double)v[j]);
    free(v);
    if (!ok) return 0;
  }

  /* list(string): count and total bytes, then each string */
  TF_OpKernelConstruction_GetAttrSize(ctx, "ls", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(ls)")) return 0;
  push(out, list);
  push(out, total);
  {
    char **vals = (char **)calloc((size_t)list + 1, sizeof(char *));
    size_t *lens = (size_t *)calloc((size_t)list + 1, sizeof(size_t));
    char *storage = (char *)malloc((size_t)total + 1);
    int ok = vals != NULL && lens != NULL && storage != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrStringList(ctx, "ls", vals, lens, list, storage, (size_t)total, s);
      ok = expect_ok_c(ctx, s, "GetAttrStringList(ls)");
    }
    for (j = 0; ok && j < list; ++j) push_chars(out, vals[j], lens[j]);
    free(vals);
    free(lens);
    free(storage);
    if (!ok) return 0;
  }

  /* HasAttr, missing attrs, wrong types, scalar sizes, the node's name */
  push(out, TF_OpKernelConstruction_HasAttr(ctx, "i", s) ? 1 : 0);
  if (!expect_ok_c(ctx, s, "HasAttr(i)")) return 0;
  push(out, TF_OpKernelConstruction_HasAttr(ctx, "no_such_attr", s) ? 1 : 0);
  if (!expect_ok_c(ctx, s, "HasAttr(no_such_attr)")) return 0;
  TF_OpKernelConstruction_GetAttrInt64(ctx, "no_such_attr", &i64, s);
  if (!expect_code_c(ctx, s, TF_NOT_FOUND, "GetAttrInt64(no_such_attr)")) return 0;
  TF_OpKernelConstruction_GetAttrFloat(ctx, "i", &f, s);
  if (!expect_code_c(ctx, s, TF_INVALID_ARGUMENT, "GetAttrFloat(i) (an int)")) return 0;
  TF_OpKernelConstruction_GetAttrInt64List(ctx, "i", &i64, 1, s);
  if (!expect_code_c(ctx, s, TF_INVALID_ARGUMENT, "GetAttrInt64List(i) (a scalar)")) return 0;
  TF_OpKernelConstruction_GetAttrSize(ctx, "i", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(i)")) return 0;
  push(out, list);
  push(out, total);
  name = TF_OpKernelConstruction_GetName(ctx);
  push_chars(out, name.data, name.len);

  /* tensor: a host tensor the kernel owns */
  {
    TF_Tensor *tensor = NULL;
    int ok;
    TF_OpKernelConstruction_GetAttrTensor(ctx, "tensor", &tensor, s);
    ok = expect_ok_c(ctx, s, "GetAttrTensor(tensor)") && push_tensor(ctx, "GetAttrTensor(tensor)", tensor, out);
    if (tensor != NULL) TF_DeleteTensor(tensor);
    if (!ok) return 0;
  }

  /* list(tensor): the count from GetAttrSize, then each tensor */
  TF_OpKernelConstruction_GetAttrSize(ctx, "tensors", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(tensors)")) return 0;
  push(out, list);
  {
    TF_Tensor **v = (TF_Tensor **)calloc((size_t)list + 1, sizeof(TF_Tensor *));
    int ok = v != NULL;
    if (ok) {
      TF_OpKernelConstruction_GetAttrTensorList(ctx, "tensors", v, list, s);
      ok = expect_ok_c(ctx, s, "GetAttrTensorList(tensors)");
    }
    for (j = 0; ok && j < list; ++j) ok = push_tensor(ctx, "GetAttrTensorList(tensors)", v[j], out);
    for (j = 0; v != NULL && j < list; ++j) {
      if (v[j] != NULL) TF_DeleteTensor(v[j]);
    }
    free(v);
    if (!ok) return 0;
  }

  /* func: a serialized NameAttrList; its name is field 1 */
  {
    TF_Buffer *fn = TF_OpKernelConstruction_GetAttrFunction(ctx, "fn", s);
    int ok = expect_ok_c(ctx, s, "GetAttrFunction(fn)") &&
             push_proto_string(ctx, fn, "TF_OpKernelConstruction_GetAttrFunction(fn)", 1, 1, NULL, out);
    if (fn != NULL) TF_DeleteBuffer(fn);
    if (!ok) return 0;
  }

  /* the NodeDef: name (1, the node's), op (2), device (4; may be empty, so absent) */
  {
    char *node = view_dup(name);
    TF_Buffer *def = TF_OpKernelConstruction_GetNodeDef(ctx, s);
    int ok = node != NULL && expect_ok_c(ctx, s, "GetNodeDef") &&
             push_proto_string(ctx, def, "TF_OpKernelConstruction_GetNodeDef", 1, 1, node, out) &&
             push_proto_string(ctx, def, "TF_OpKernelConstruction_GetNodeDef", 2, 1, "TestAttrs", out) &&
             push_proto_string(ctx, def, "TF_OpKernelConstruction_GetNodeDef", 4, 0, NULL, out);
    if (def != NULL) TF_DeleteBuffer(def);
    free(node);
    if (!ok) return 0;
  }

  /* a buffer of the plugin's own */
  return check_own_buffer(ctx);
}

static void *attrs_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  floats f = {NULL, 0, 0};
  if (k != NULL && read_attrs(ctx, s, &f)) {
    k->values = f.v;
    k->num_values = f.n;
  } else {
    free(f.v);
  }
  TF_DeleteStatus(s);
  return k;
}

static void attrs_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *out = TF_AllocateOutput(ctx, 0, TF_FLOAT, &k->num_values, 1, (size_t)k->num_values * sizeof(float), s);
  if (expect_ok(ctx, s, "TF_AllocateOutput(0)")) upload(ctx, out, k->values, (size_t)k->num_values * sizeof(float));
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestFail / TestConstructFail
 * ====================================================================== */

static void *fail_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  int32_t list = 0, total = 0;
  if (k == NULL) goto done;
  TF_OpKernelConstruction_GetAttrInt32(ctx, "code", &k->code, s);
  if (!expect_ok_c(ctx, s, "GetAttrInt32(code)")) goto done;
  TF_OpKernelConstruction_GetAttrSize(ctx, "message", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(message)")) goto done;
  k->message = (char *)calloc((size_t)total + 1, 1);
  if (k->message == NULL) goto done;
  TF_OpKernelConstruction_GetAttrString(ctx, "message", k->message, (size_t)total, s);
  expect_ok_c(ctx, s, "GetAttrString(message)");
done:
  TF_DeleteStatus(s);
  return k;
}

static void fail_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  if (k->code != TF_OK) {
    TF_SetStatus(s, (TF_Code)k->code, k->message != NULL ? k->message : "");
    TF_OpKernelContext_Failure(ctx, s);
  } else { /* code 0: succeed, with an empty output */
    int64_t zero = 0;
    TF_Tensor *out = TF_AllocateOutput(ctx, 0, TF_FLOAT, &zero, 1, 0, s);
    expect_ok(ctx, s, "TF_AllocateOutput(0)");
    if (out != NULL) TF_DeleteTensor(out);
  }
  TF_DeleteStatus(s);
}

static void *construct_fail_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel(); /* the host must still delete it */
  TF_SetStatus(s, TF_FAILED_PRECONDITION, "TestConstructFail refuses to be constructed");
  TF_OpKernelConstruction_Failure(ctx, s);
  TF_DeleteStatus(s);
  return k;
}

static void construct_fail_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  COUNT(construct_fail_computes);
  fail_ctx(ctx, TF_INTERNAL, "TestConstructFail computed although its construction failed");
}

/* ======================================================================
 * TestContext: what the context says, as int64
 * ====================================================================== */

#define CONTEXT_VALUES 16

static int view_contains(TF_StringView v, const char *needle) {
  size_t n = strlen(needle), i;
  if (v.data == NULL || v.len < n) return 0;
  for (i = 0; i + n <= v.len; ++i) {
    if (memcmp(v.data + i, needle, n) == 0) return 1;
  }
  return 0;
}

/* create_typed, and the node's name (TF_GetOpKernelName must repeat it). */
static void *context_create(TF_OpKernelConstruction *ctx) {
  kernel_base *k = (kernel_base *)create_typed(ctx);
  if (k != NULL) k->name = view_dup(TF_OpKernelConstruction_GetName(ctx));
  return k;
}

/* TF_Version: "2.21.0" as 221 (major * 100 + minor); -1 if not "M.m...". */
static int64_t version_code(const char *v) {
  char *end = NULL;
  long major, minor;
  if (v == NULL) return -1;
  major = strtol(v, &end, 10);
  if (end == v || *end != '.') return -1;
  v = end + 1;
  minor = strtol(v, &end, 10);
  if (end == v || minor < 0 || minor > 99 || major < 0) return -1;
  return (int64_t)major * 100 + minor;
}

static void context_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  int64_t v[CONTEXT_VALUES], n = CONTEXT_VALUES;
  TF_Tensor *out;
  TF_StringView container;
  v[0] = TF_GetDeviceId(ctx);
  v[1] = TF_StepId(ctx) > 0;
  v[2] = TF_NumInputs(ctx);
  v[3] = TF_NumOutputs(ctx);
  v[4] = (int64_t)TF_GetFrameId(ctx);
  v[5] = TF_GetIterId(ctx);
  v[6] = view_contains(TF_GetDeviceName(ctx), ":" DEVICE_TYPE ":");
  v[7] = TF_InputDatatype(ctx, 0);
  v[8] = TF_ExpectedOutputDataType(ctx, 0);
  /* TF_GetStepId is TF_StepId's newer name: the same step */
  v[9] = TF_GetStepId(ctx);
  if (v[9] != TF_StepId(ctx)) {
    check_failed(ctx, "TF_GetStepId is %lld, TF_StepId %lld", (long long)v[9], (long long)TF_StepId(ctx));
    goto done;
  }
  v[9] = v[9] > 0;
  v[10] = TF_GetGraphDefVersion(ctx);
  v[11] = TF_IsRefInput(ctx, 0, s); /* declared at the top: gone in 2.21 */
  if (!expect_ok(ctx, s, "TF_IsRefInput(0)")) goto done;
  v[12] = k->name != NULL && view_equals(TF_GetOpKernelName(ctx), k->name);
  if (!v[12]) {
    check_failed(ctx, "TF_GetOpKernelName is not the name construction saw (%s)", k->name ? k->name : "?");
    goto done;
  }
  container = TF_GetResourceMgrDefaultContainerName(ctx);
  if (container.len == 0 || container.data == NULL) {
    check_failed(ctx, "TF_GetResourceMgrDefaultContainerName is empty");
    goto done;
  }
  v[13] = view_equals(container, "localhost");
  v[14] = TF_GetOpKernelRequestedInput(ctx, 0).len > 0;
  v[15] = version_code(TF_Version());
  if (v[15] < 0) {
    check_failed(ctx, "TF_Version returned '%s', not a version", TF_Version() ? TF_Version() : "(NULL)");
    goto done;
  }
  out = TF_AllocateOutput(ctx, 0, TF_INT64, &n, 1, sizeof v, s);
  if (expect_ok(ctx, s, "TF_AllocateOutput(0)")) upload(ctx, out, v, sizeof v);
  if (out != NULL) TF_DeleteTensor(out);
done:
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestHostCallback: a host callback on the kernel's stream; with fail=true
 * the callback fails, which fails the stream (sticky)
 * ====================================================================== */

typedef struct callback_arg {
  int32_t *out;
  int fail;
  int calls;
} callback_arg;

static void test_callback(void *arg, TF_Status *status) {
  callback_arg *a = (callback_arg *)arg;
  a->calls++;
  *a->out = a->calls;
  if (a->fail) {
    TF_SetStatus(status, TF_DATA_LOSS, "TestHostCallback: the host callback failed on purpose");
  } else {
    TF_SetStatus(status, TF_OK, "");
  }
}

static void *callback_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  unsigned char fail = 0;
  if (k != NULL) {
    TF_OpKernelConstruction_GetAttrBool(ctx, "fail", &fail, s);
    if (expect_ok_c(ctx, s, "GetAttrBool(fail)")) k->code = fail;
  }
  TF_DeleteStatus(s);
  return k;
}

static void callback_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *out = NULL;
  SP_Stream stream;
  callback_arg a;
  out = TF_AllocateOutput(ctx, 0, TF_INT32, NULL, 0, sizeof(int32_t), s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput(0)")) goto done;
  stream = TF_GetStream(ctx, s);
  if (!expect_ok(ctx, s, "TF_GetStream")) goto done;
  a.out = (int32_t *)TF_TensorData(out); /* host memory */
  a.fail = k->code != 0;
  a.calls = 0;
  if (!se_host_callback(NULL, stream, test_callback, &a) || a.calls != 1) {
    COUNT(kernel_errors);
    fail_ctx(ctx, TF_INTERNAL, "host_callback ran the callback %d times", a.calls);
  }
  /* A failed callback is the stream's failure: the host finds it there. */
done:
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestTensorApi: the TF_Tensor API. Output 0 is input 0 reinterpreted as
 * int32 (TF_TensorBitcastFrom on the device buffer, no copy), output 1 a few
 * facts (TENSOR_FACTS, layout in test_host.cc); on the way, host tensors
 * are made, reshaped, bitcast and moved the ways a plugin may
 * ====================================================================== */

#define TENSOR_FACTS 4

typedef struct dealloc_probe {
  void *expect_data; /* what TF_NewTensor was given */
  size_t expect_len;
  void *block; /* what to free */
  int calls, wrong;
} dealloc_probe;

static void probe_free(void *data, size_t len, void *arg) {
  dealloc_probe *p = (dealloc_probe *)arg;
  if (data != p->expect_data || len != p->expect_len) p->wrong++;
  if (++p->calls == 1) free(p->block); /* a second call is counted, not a double free */
}

/* TF_AllocateTensor, TF_SetShape, TF_TensorBitcastFrom and
 * TF_TensorMaybeMove on a tensor TensorFlow owns. */
static int check_allocated_tensor(TF_OpKernelContext *ctx, TF_Status *s, size_t align) {
  const int64_t dims23[2] = {2, 3}, dims32[2] = {3, 2}, dims6 = 6, dims3 = 3, dims0 = 0;
  TF_Tensor *t = TF_AllocateTensor(TF_FLOAT, dims23, 2, 6 * TF_DataTypeSize(TF_FLOAT)), *u = NULL;
  int ok = 0;
  if (t == NULL || TF_TensorElementCount(t) != 6 || TF_TensorByteSize(t) != 24 || TF_TensorType(t) != TF_FLOAT) {
    check_failed(ctx, "TF_AllocateTensor(float, [2,3]) is not 6 floats");
    goto done;
  }
  if (!TF_TensorIsAligned(t) || (uintptr_t)TF_TensorData(t) % align != 0) {
    check_failed(ctx, "TF_TensorIsAligned: TF_AllocateTensor's data %p is not %zu-aligned", TF_TensorData(t), align);
    goto done;
  }
  if (TF_TensorMaybeMove(t) != t) {
    check_failed(ctx, "TF_TensorMaybeMove refuses a tensor TensorFlow allocated and nothing shares");
    goto done;
  }
  TF_SetShape(t, dims32, 2);
  if (TF_NumDims(t) != 2 || TF_Dim(t, 0) != 3 || TF_Dim(t, 1) != 2 || TF_TensorElementCount(t) != 6) {
    check_failed(ctx, "TF_SetShape([3,2]) gave a %d-dim tensor", TF_NumDims(t));
    goto done;
  }
  TF_SetShape(t, &dims6, 1);
  if (TF_NumDims(t) != 1 || TF_Dim(t, 0) != 6 || TF_TensorElementCount(t) != 6) {
    check_failed(ctx, "TF_SetShape([6]) gave a %d-dim tensor", TF_NumDims(t));
    goto done;
  }
  u = TF_AllocateTensor(TF_DOUBLE, &dims0, 1, 0);
  if (u == NULL) {
    check_failed(ctx, "TF_AllocateTensor(double, [0]) failed");
    goto done;
  }
  TF_TensorBitcastFrom(t, TF_DOUBLE, u, &dims6, 1, s); /* 48 bytes from 24 */
  if (TF_GetCode(s) != TF_INVALID_ARGUMENT) {
    check_failed(ctx, "TF_TensorBitcastFrom(6 floats -> 6 doubles) returned code %d, expected INVALID_ARGUMENT",
                 (int)TF_GetCode(s));
    goto done;
  }
  TF_TensorBitcastFrom(t, TF_DOUBLE, u, &dims3, 1, s);
  if (!expect_ok(ctx, s, "TF_TensorBitcastFrom(6 floats -> 3 doubles)")) goto done;
  if (TF_TensorData(u) != TF_TensorData(t) || TF_TensorType(u) != TF_DOUBLE || TF_NumDims(u) != 1 ||
      TF_Dim(u, 0) != 3 || TF_TensorByteSize(u) != 24) {
    check_failed(ctx, "TF_TensorBitcastFrom: the result is not 3 doubles sharing the floats' buffer");
    goto done;
  }
  if (TF_TensorMaybeMove(t) != NULL) {
    check_failed(ctx, "TF_TensorMaybeMove moved a tensor whose buffer another tensor shares");
    goto done;
  }
  TF_DeleteTensor(u);
  u = NULL;
  if (TF_TensorMaybeMove(t) != t) {
    check_failed(ctx, "TF_TensorMaybeMove refuses a tensor nothing shares any more");
    goto done;
  }
  ok = 1;
done:
  if (u != NULL) TF_DeleteTensor(u);
  if (t != NULL) TF_DeleteTensor(t);
  return ok;
}

/* TF_NewTensor over the plugin's memory: used in place when aligned (the
 * deallocator runs when the last sharer goes), copied when not (the
 * deallocator runs at once). `*deallocs` counts deallocator calls. */
static int check_new_tensor(TF_OpKernelContext *ctx, TF_Status *s, size_t align, int *deallocs) {
  const int64_t dims44[2] = {4, 4}, dims16 = 16, dims22[2] = {2, 2};
  dealloc_probe a, b;
  TF_Tensor *t = NULL, *u = NULL;
  void *block = NULL;
  int32_t *p, i;
  int ok = 0;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);

  /* aligned */
  if (posix_memalign(&block, align < sizeof(void *) ? sizeof(void *) : align, 16 * sizeof(int32_t)) != 0) {
    fail_ctx(ctx, TF_RESOURCE_EXHAUSTED, "TestTensorApi: out of host memory");
    return 0;
  }
  p = (int32_t *)block;
  for (i = 0; i < 16; ++i) p[i] = i;
  a.expect_data = a.block = block;
  a.expect_len = 16 * sizeof(int32_t);
  t = TF_NewTensor(TF_INT32, dims44, 2, block, a.expect_len, probe_free, &a);
  if (t == NULL || TF_TensorData(t) != block || TF_TensorElementCount(t) != 16 || !TF_TensorIsAligned(t) ||
      a.calls != 0) {
    check_failed(ctx, "TF_NewTensor over aligned memory: %s",
                 t == NULL ? "failed" : a.calls ? "ran the deallocator early" : "did not use the memory in place");
    goto done;
  }
  if (TF_TensorMaybeMove(t) != NULL) {
    check_failed(ctx, "TF_TensorMaybeMove moved a tensor over the plugin's memory (TensorFlow does not own it)");
    goto done;
  }
  u = TF_AllocateTensor(TF_FLOAT, &dims16, 1, 16 * sizeof(float));
  if (u == NULL) {
    check_failed(ctx, "TF_AllocateTensor(float, [16]) failed");
    goto done;
  }
  TF_TensorBitcastFrom(t, TF_FLOAT, u, &dims16, 1, s);
  if (!expect_ok(ctx, s, "TF_TensorBitcastFrom(int32 [4,4] -> float [16])")) goto done;
  TF_DeleteTensor(t);
  t = NULL;
  if (a.calls != 0) {
    check_failed(ctx, "TF_DeleteTensor ran TF_NewTensor's deallocator while a bitcast tensor shares the memory");
    goto done;
  }
  TF_DeleteTensor(u);
  u = NULL;
  if (a.calls != 1 || a.wrong != 0) {
    check_failed(ctx, "TF_NewTensor's deallocator ran %d times (%d with the wrong data or length), expected once",
                 a.calls, a.wrong);
    goto done;
  }

  /* misaligned: one byte into a block (malloc aligns to at least 2) */
  block = malloc(4 * sizeof(int32_t) + 1);
  if (block == NULL) {
    fail_ctx(ctx, TF_RESOURCE_EXHAUSTED, "TestTensorApi: out of host memory");
    goto done;
  }
  b.block = block;
  b.expect_data = (char *)block + 1;
  b.expect_len = 4 * sizeof(int32_t);
  for (i = 0; i < 4; ++i) {
    int32_t x = 100 + i;
    memcpy((char *)b.expect_data + i * sizeof x, &x, sizeof x);
  }
  t = TF_NewTensor(TF_INT32, dims22, 2, b.expect_data, b.expect_len, probe_free, &b);
  if (t == NULL || b.calls != 1 || b.wrong != 0) {
    check_failed(ctx, "TF_NewTensor over misaligned memory: %s (the deallocator ran %d times)",
                 t == NULL ? "failed" : "did not copy and free it at once", b.calls);
    goto done;
  }
  if (!TF_TensorIsAligned(t) || (uintptr_t)TF_TensorData(t) % align != 0) {
    check_failed(ctx, "TF_TensorIsAligned: TF_NewTensor's copy of misaligned memory is not aligned");
    goto done;
  }
  for (i = 0; i < 4; ++i) {
    if (((const int32_t *)TF_TensorData(t))[i] != 100 + i) {
      check_failed(ctx, "TF_NewTensor: the copy of misaligned memory differs at element %d", (int)i);
      goto done;
    }
  }
  if (TF_TensorMaybeMove(t) != t) {
    check_failed(ctx, "TF_TensorMaybeMove refuses TF_NewTensor's own aligned copy");
    goto done;
  }
  ok = 1;
done:
  if (t != NULL) TF_DeleteTensor(t);
  if (u != NULL) TF_DeleteTensor(u);
  *deallocs = a.calls + b.calls;
  return ok;
}

static void tensor_api_compute(void *kernel, TF_OpKernelContext *ctx) {
  TF_Status *s = TF_NewStatus();
  TF_Tensor *x = NULL, *y = NULL, *m = NULL, *facts_out = NULL;
  const int64_t zero = 0;
  int64_t n = 1, facts[TENSOR_FACTS], nfacts = TENSOR_FACTS;
  size_t align = TF_TensorDefaultAlignment();
  int d, deallocs = 0;
  (void)kernel;

  if (TF_DataTypeSize(TF_FLOAT) != 4 || TF_DataTypeSize(TF_INT32) != 4 || TF_DataTypeSize(TF_DOUBLE) != 8 ||
      TF_DataTypeSize(TF_INT64) != 8 || TF_DataTypeSize(TF_STRING) != 0) {
    check_failed(ctx, "TF_DataTypeSize: float %zu, int32 %zu, double %zu, int64 %zu, string %zu",
                 TF_DataTypeSize(TF_FLOAT), TF_DataTypeSize(TF_INT32), TF_DataTypeSize(TF_DOUBLE),
                 TF_DataTypeSize(TF_INT64), TF_DataTypeSize(TF_STRING));
    goto done;
  }
  if (align < 8 || (align & (align - 1)) != 0) {
    check_failed(ctx, "TF_TensorDefaultAlignment is %zu, not a power of two of at least 8", align);
    goto done;
  }
  if (!check_allocated_tensor(ctx, s, align)) goto done;
  if (!check_new_tensor(ctx, s, align, &deallocs)) goto done;

  /* The input, in device memory, held by the context too. */
  TF_GetInput(ctx, 0, &x, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  for (d = 0; d < TF_NumDims(x); ++d) n *= TF_Dim(x, d);
  if (TF_TensorElementCount(x) != n || TF_TensorByteSize(x) != (size_t)n * TF_DataTypeSize(TF_FLOAT)) {
    check_failed(ctx, "TF_TensorElementCount of the input is %lld, its dims say %lld",
                 (long long)TF_TensorElementCount(x), (long long)n);
    goto done;
  }
  if (TF_TensorMaybeMove(x) != NULL) {
    check_failed(ctx, "TF_TensorMaybeMove moved an input the context still holds");
    goto done;
  }

  /* Output 0: the input's buffer as int32, shared (what TensorFlow's Bitcast does). */
  y = TF_AllocateTensor(TF_INT32, &zero, 1, 0);
  if (y == NULL) {
    check_failed(ctx, "TF_AllocateTensor(int32, [0]) failed");
    goto done;
  }
  TF_TensorBitcastFrom(x, TF_INT32, y, &n, 1, s);
  if (!expect_ok(ctx, s, "TF_TensorBitcastFrom(input)")) goto done;
  if (TF_TensorData(y) != TF_TensorData(x) || TF_TensorType(y) != TF_INT32 || TF_TensorElementCount(y) != n) {
    check_failed(ctx, "TF_TensorBitcastFrom: the result does not share the input's buffer as %lld int32",
                 (long long)n);
    goto done;
  }
  TF_SetOutput(ctx, 0, y, s);
  if (!expect_ok(ctx, s, "TF_SetOutput(0)")) goto done;
  m = TF_GetMutableOutput(ctx, 0, s);
  if (!expect_ok(ctx, s, "TF_GetMutableOutput(0)")) goto done;
  if (m == NULL || TF_TensorData(m) != TF_TensorData(x) || TF_TensorType(m) != TF_INT32 ||
      TF_TensorElementCount(m) != n) {
    check_failed(ctx, "TF_GetMutableOutput(0) is not the output just set");
    goto done;
  }

  facts[0] = n;
  facts[1] = (int64_t)align;
  facts[2] = deallocs;
  facts[3] = TF_TensorIsAligned(x);
  facts_out = TF_AllocateOutput(ctx, 1, TF_INT64, &nfacts, 1, sizeof facts, s);
  if (expect_ok(ctx, s, "TF_AllocateOutput(1)")) upload(ctx, facts_out, facts, sizeof facts);
done:
  if (x != NULL) TF_DeleteTensor(x);
  if (y != NULL) TF_DeleteTensor(y);
  if (m != NULL) TF_DeleteTensor(m);
  if (facts_out != NULL) TF_DeleteTensor(facts_out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestStatusApi: TF_Status and its TSL_Status twin (payloads, errno
 * statuses). Output: the TF_Code TF_SetStatusFromIOError gives each errno
 * of attr `errnos`; fail_errno != 0 fails the kernel with that errno's status
 * ====================================================================== */

#define MAX_PAYLOADS 8

typedef struct payloads {
  int n;
  char key[MAX_PAYLOADS][32], value[MAX_PAYLOADS][32];
} payloads;

static void collect_payload(const char *key, const char *value, void *capture) {
  payloads *p = (payloads *)capture;
  if (p->n < MAX_PAYLOADS) {
    snprintf(p->key[p->n], sizeof p->key[0], "%s", key);
    snprintf(p->value[p->n], sizeof p->value[0], "%s", value);
  }
  p->n++;
}

/* The value of payload `key` (TensorFlow gives them in no set order); NULL if absent. */
static const char *payload(const payloads *p, const char *key) {
  int i;
  for (i = 0; i < p->n && i < MAX_PAYLOADS; ++i) {
    if (strcmp(p->key[i], key) == 0) return p->value[i];
  }
  return NULL;
}

static int check_payloads(TF_OpKernelContext *ctx) {
  TF_Status *s = TF_NewStatus();
  TSL_Status *t = TSL_NewStatus();
  payloads p;
  int ok = 0;
  const char *a, *b;

  /* OK carries no payloads (absl drops them). */
  TF_SetPayload(s, "ignored", "x");
  memset(&p, 0, sizeof p);
  TF_ForEachPayload(s, collect_payload, &p);
  if (p.n != 0) {
    check_failed(ctx, "TF_SetPayload kept a payload on an OK status");
    goto done;
  }
  TF_SetStatus(s, TF_ABORTED, "with payloads");
  TF_SetPayload(s, "tfplugin.test/a", "1");
  TF_SetPayload(s, "tfplugin.test/b", "2");
  TF_SetPayload(s, "tfplugin.test/a", "3"); /* replaces */
  memset(&p, 0, sizeof p);
  TF_ForEachPayload(s, collect_payload, &p);
  a = payload(&p, "tfplugin.test/a");
  b = payload(&p, "tfplugin.test/b");
  if (p.n != 2 || a == NULL || b == NULL || strcmp(a, "3") != 0 || strcmp(b, "2") != 0) {
    check_failed(ctx, "TF_ForEachPayload visited %d payloads (a=%s, b=%s), expected a=3 and b=2", p.n,
                 a ? a : "(none)", b ? b : "(none)");
    goto done;
  }
  if (TF_GetCode(s) != TF_ABORTED || strcmp(TF_Message(s), "with payloads") != 0) {
    check_failed(ctx, "TF_SetPayload changed the status' code or message");
    goto done;
  }
  TF_SetStatus(s, TF_ABORTED, "again"); /* a new status: no payloads */
  memset(&p, 0, sizeof p);
  TF_ForEachPayload(s, collect_payload, &p);
  if (p.n != 0) {
    check_failed(ctx, "TF_SetStatus kept %d payloads of the status it replaced", p.n);
    goto done;
  }

  /* TSL_Status is TF_Status: the TSL_ twins on the same object. */
  if (TSL_GetCode(t) != TSL_OK || strcmp(TSL_Message(t), "") != 0) {
    check_failed(ctx, "TSL_NewStatus is not OK with an empty message");
    goto done;
  }
  TSL_SetStatus(t, TSL_DATA_LOSS, "tsl message");
  if (TSL_GetCode(t) != TSL_DATA_LOSS || TF_GetCode(t) != TF_DATA_LOSS || strcmp(TSL_Message(t), "tsl message") != 0 ||
      strcmp(TF_Message(t), "tsl message") != 0) {
    check_failed(ctx, "TSL_SetStatus: code %d message '%s'", (int)TSL_GetCode(t), TSL_Message(t));
    goto done;
  }
  TSL_SetPayload(t, "tfplugin.test/tsl", "yes");
  memset(&p, 0, sizeof p);
  TSL_ForEachPayload(t, collect_payload, &p);
  a = payload(&p, "tfplugin.test/tsl");
  if (p.n != 1 || a == NULL || strcmp(a, "yes") != 0) {
    check_failed(ctx, "TSL_ForEachPayload visited %d payloads, expected tfplugin.test/tsl=yes", p.n);
    goto done;
  }
  TSL_SetStatus(t, TSL_OK, "dropped");
  memset(&p, 0, sizeof p);
  TSL_ForEachPayload(t, collect_payload, &p);
  if (TSL_GetCode(t) != TSL_OK || strcmp(TSL_Message(t), "") != 0 || p.n != 0) {
    check_failed(ctx, "TSL_SetStatus(OK) kept a message or payloads");
    goto done;
  }
  ok = 1;
done:
  TSL_DeleteStatus(t);
  TF_DeleteStatus(s);
  return ok;
}

#define IO_CONTEXT "TestStatusApi"

/* TF_SetStatusFromIOError(errno), checked against its TSL_ twin and the
 * message TensorFlow writes ("<context>; <strerror>"); -1 on a surprise. */
static int io_error_code(TF_OpKernelContext *ctx, int e) {
  TF_Status *s = TF_NewStatus();
  TSL_Status *t = TSL_NewStatus();
  size_t n = strlen(IO_CONTEXT "; ");
  int code = -1;
  TF_SetStatusFromIOError(s, e, IO_CONTEXT);
  TSL_SetStatusFromIOError(t, e, IO_CONTEXT);
  if ((int)TF_GetCode(s) != (int)TSL_GetCode(t) || strcmp(TF_Message(s), TSL_Message(t)) != 0) {
    check_failed(ctx, "TSL_SetStatusFromIOError(%d) gives %d '%s', TF_SetStatusFromIOError %d '%s'", e,
                 (int)TSL_GetCode(t), TSL_Message(t), (int)TF_GetCode(s), TF_Message(s));
  } else if (TF_GetCode(s) == TF_OK ? TF_Message(s)[0] != '\0'
                                    : strncmp(TF_Message(s), IO_CONTEXT "; ", n) != 0 || TF_Message(s)[n] == '\0') {
    check_failed(ctx, "TF_SetStatusFromIOError(%d): code %d with message '%s'", e, (int)TF_GetCode(s),
                 TF_Message(s));
  } else {
    code = (int)TF_GetCode(s);
  }
  TSL_DeleteStatus(t);
  TF_DeleteStatus(s);
  return code;
}

static void *status_api_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  int32_t list = 0, total = 0;
  if (k == NULL) goto done;
  TF_OpKernelConstruction_GetAttrInt32(ctx, "fail_errno", &k->code, s);
  if (!expect_ok_c(ctx, s, "GetAttrInt32(fail_errno)")) goto done;
  TF_OpKernelConstruction_GetAttrSize(ctx, "errnos", &list, &total, s);
  if (!expect_ok_c(ctx, s, "GetAttrSize(errnos)")) goto done;
  k->ints = (int64_t *)calloc((size_t)list + 1, sizeof(int64_t));
  if (k->ints == NULL) goto done;
  k->num_values = list;
  TF_OpKernelConstruction_GetAttrInt64List(ctx, "errnos", k->ints, list, s);
  expect_ok_c(ctx, s, "GetAttrInt64List(errnos)");
done:
  TF_DeleteStatus(s);
  return k;
}

static void status_api_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_Tensor *out = NULL;
  int32_t *codes = NULL;
  int64_t i;
  if (!check_payloads(ctx)) goto done;
  if (k->code != 0) { /* the kernel's failure, as from a failed open() */
    TF_SetStatusFromIOError(s, k->code, "TestStatusApi: cannot open /no/such/file");
    TF_SetPayload(s, "tfplugin.test/errno", "set by TestStatusApi");
    TF_OpKernelContext_Failure(ctx, s);
    goto done;
  }
  codes = (int32_t *)calloc((size_t)k->num_values + 1, sizeof(int32_t));
  if (codes == NULL) {
    fail_ctx(ctx, TF_RESOURCE_EXHAUSTED, "TestStatusApi: out of host memory");
    goto done;
  }
  for (i = 0; i < k->num_values; ++i) {
    codes[i] = io_error_code(ctx, (int)k->ints[i]);
    if (codes[i] < 0) goto done;
  }
  out = TF_AllocateOutput(ctx, 0, TF_INT32, &k->num_values, 1, (size_t)k->num_values * sizeof(int32_t), s);
  if (expect_ok(ctx, s, "TF_AllocateOutput(0)")) upload(ctx, out, codes, (size_t)k->num_values * sizeof(int32_t));
done:
  free(codes);
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * TestConcatLike: a variadic input (values: N * T) concatenated along axis
 * 0, reached by range (TF_InputRange) and by name (TF_GetInputByName)
 * ====================================================================== */

static void *concat_create(TF_OpKernelConstruction *ctx) {
  TF_Status *s = TF_NewStatus();
  kernel_base *k = new_kernel();
  if (k != NULL) {
    k->name = view_dup(TF_OpKernelConstruction_GetName(ctx));
    TF_OpKernelConstruction_GetAttrType(ctx, "T", &k->dtype, s);
    if (expect_ok_c(ctx, s, "GetAttrType(T)")) {
      TF_OpKernelConstruction_GetAttrInt64(ctx, "N", &k->num_values, s);
      expect_ok_c(ctx, s, "GetAttrInt64(N)");
    }
  }
  TF_DeleteStatus(s);
  return k;
}

/* A by-name lookup that must fail: INVALID_ARGUMENT (TensorFlow's answer). */
static int expect_by_name_fails(TF_OpKernelContext *ctx, TF_Status *s, const char *name, const char *why) {
  TF_Tensor *t = NULL;
  TF_GetInputByName(ctx, name, &t, s);
  if (t != NULL && TF_GetCode(s) == TF_OK) TF_DeleteTensor(t);
  if (TF_GetCode(s) == TF_INVALID_ARGUMENT) return 1;
  check_failed(ctx, "TF_GetInputByName(%s) returned code %d for %s, expected INVALID_ARGUMENT", name,
               (int)TF_GetCode(s), why);
  return 0;
}

static void concat_compute(void *kernel, TF_OpKernelContext *ctx) {
  kernel_base *k = (kernel_base *)kernel;
  TF_Status *s = TF_NewStatus();
  TF_InputRange_Args args;
  TF_Tensor *first = NULL, *in = NULL, *out = NULL;
  int64_t dims[MAX_DIMS], count;
  size_t elem = TF_DataTypeSize(k->dtype), offset = 0;
  int i, d, r, n, deferred = 0;
  copy_work w;

  COUNT(concat_computes);
  memset(&args, 0, sizeof args);
  args.struct_size = TF_InputRange_Args_STRUCT_SIZE;
  args.status = s;
  TF_InputRange(ctx, "values", &args);
  if (!expect_ok(ctx, s, "TF_InputRange(values)")) goto done;
  n = args.stop - args.start;
  if (args.start != 0 || n != TF_NumInputs(ctx) || n != k->num_values) {
    check_failed(ctx, "TF_InputRange(values) is [%d, %d) for N=%lld and %d inputs", args.start, args.stop,
                 (long long)k->num_values, TF_NumInputs(ctx));
    goto done;
  }
  TF_InputRange(ctx, "no_such_input", &args);
  if (TF_GetCode(s) != TF_INVALID_ARGUMENT) {
    check_failed(ctx, "TF_InputRange(no_such_input) returned code %d, expected INVALID_ARGUMENT",
                 (int)TF_GetCode(s));
    goto done;
  }
  TF_GetInput(ctx, 0, &first, s);
  if (!expect_ok(ctx, s, "TF_GetInput(0)")) goto done;
  /* By name: a list of one is a single tensor, a longer one is not. */
  if (n == 1) {
    TF_GetInputByName(ctx, "values", &in, s);
    if (!expect_ok(ctx, s, "TF_GetInputByName(values)")) goto done;
    if (in == NULL || TF_TensorData(in) != TF_TensorData(first) || TF_TensorType(in) != k->dtype) {
      check_failed(ctx, "TF_GetInputByName(values) is not input 0");
      goto done;
    }
    TF_DeleteTensor(in);
    in = NULL;
  } else if (!expect_by_name_fails(ctx, s, "values", "a list of several tensors")) {
    goto done;
  }
  if (!expect_by_name_fails(ctx, s, "no_such_input", "an input the op does not have")) goto done;

  /* The output's shape: the inputs' first dimensions add up. */
  r = TF_NumDims(first);
  if (r < 1 || r > MAX_DIMS) {
    fail_ctx(ctx, TF_INVALID_ARGUMENT, "TestConcatLike: inputs must have 1 to %d dimensions, not %d", MAX_DIMS, r);
    goto done;
  }
  for (d = 0; d < r; ++d) dims[d] = TF_Dim(first, d);
  dims[0] = 0;
  for (i = 0; i < n; ++i) {
    int bad;
    TF_GetInput(ctx, i, &in, s);
    if (!expect_ok(ctx, s, "TF_GetInput(i)")) goto done;
    bad = TF_NumDims(in) != r;
    for (d = 1; !bad && d < r; ++d) bad = TF_Dim(in, d) != dims[d];
    if (bad) {
      char got[128], want[128];
      format_shape(in, got, sizeof got);
      format_shape(first, want, sizeof want);
      fail_ctx(ctx, TF_INVALID_ARGUMENT, "TestConcatLike: input %d has shape %s, input 0 %s", i, got, want);
      goto done;
    }
    dims[0] += TF_Dim(in, 0);
    TF_DeleteTensor(in);
    in = NULL;
    if (TF_IsRefInput(ctx, i, s) || !expect_ok(ctx, s, "TF_IsRefInput(i)")) {
      if (TF_GetCode(s) == TF_OK) check_failed(ctx, "TF_IsRefInput(%d) is true for a tensor input", i);
      goto done;
    }
    if (TF_GetOpKernelRequestedInput(ctx, (size_t)i).len == 0) {
      check_failed(ctx, "TF_GetOpKernelRequestedInput(%d) is empty", i);
      goto done;
    }
  }
  if (k->name == NULL || !view_equals(TF_GetOpKernelName(ctx), k->name)) {
    check_failed(ctx, "TF_GetOpKernelName is not the name construction saw (%s)", k->name ? k->name : "?");
    goto done;
  }
  for (d = 0, count = 1; d < r; ++d) count *= dims[d];
  out = TF_AllocateOutput(ctx, 0, k->dtype, dims, r, (size_t)count * elem, s);
  if (!expect_ok(ctx, s, "TF_AllocateOutput(0)")) goto done;
  if (TF_TensorElementCount(out) != count || TF_TensorByteSize(out) != (size_t)count * elem) {
    check_failed(ctx, "TF_AllocateOutput(0): %zu bytes, %lld elements for a shape of %lld", TF_TensorByteSize(out),
                 (long long)TF_TensorElementCount(out), (long long)count);
    goto done;
  }

  /* Row-major and concatenated along axis 0: the inputs' bytes, in order. */
  TF_IncNumDeferredOps(ctx);
  deferred = 1;
  for (i = 0; i < n; ++i) {
    TF_GetInput(ctx, i, &in, s);
    if (!expect_ok(ctx, s, "TF_GetInput(i)")) goto done;
    w.dst = (char *)TF_TensorData(out) + offset;
    w.src = TF_TensorData(in);
    w.size = TF_TensorByteSize(in);
    if (w.size > 0 && !launch(ctx, copy_run, &w)) goto done;
    offset += w.size;
    TF_DeleteTensor(in);
    in = NULL;
  }
done:
  if (deferred) TF_DecNumDeferredOps(ctx);
  if (in != NULL) TF_DeleteTensor(in);
  if (first != NULL) TF_DeleteTensor(first);
  if (out != NULL) TF_DeleteTensor(out);
  TF_DeleteStatus(s);
}

/* ======================================================================
 * Shape functions
 * ====================================================================== */

static void shape_same_as_input(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeHandle *h = TF_NewShapeHandle();
  TF_ShapeInferenceContextGetInput(ctx, 0, h, status);
  if (TF_GetCode(status) == TF_OK) TF_ShapeInferenceContextSetOutput(ctx, 0, h, status);
  TF_DeleteShapeHandle(h);
}

static void shape_scalar(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeHandle *h = TF_ShapeInferenceContextScalar(ctx);
  TF_ShapeInferenceContextSetOutput(ctx, 0, h, status);
  TF_DeleteShapeHandle(h);
}

static void shape_context(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeHandle *h = TF_ShapeInferenceContextVectorFromSize(ctx, CONTEXT_VALUES);
  TF_ShapeInferenceContextSetOutput(ctx, 0, h, status);
  TF_DeleteShapeHandle(h);
}

static void shape_unknown(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeInferenceContextSetUnknownShape(ctx, status);
}

/* The number of elements of a shape: 1 and *n if every dim is known. */
static int known_elements(TF_ShapeInferenceContext *ctx, TF_ShapeHandle *shape, int64_t *n) {
  TF_DimensionHandle *dim;
  int64_t rank, d;
  int known = 1;
  *n = 1;
  if (!TF_ShapeInferenceContextRankKnown(ctx, shape)) return 0;
  rank = TF_ShapeInferenceContextRank(ctx, shape);
  dim = TF_NewDimensionHandle();
  for (d = 0; d < rank && known; ++d) {
    TF_ShapeInferenceContextDim(ctx, shape, d, dim);
    known = TF_DimensionHandleValueKnown(dim);
    if (known) *n *= TF_DimensionHandleValue(dim);
  }
  TF_DeleteDimensionHandle(dim);
  return known;
}

/* TestTensorApi: y = [elements of x] (a vector of unknown size if they are
 * not known), facts = [TENSOR_FACTS]. */
static void shape_tensor_api(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeHandle *x = TF_NewShapeHandle(), *y = NULL, *facts = NULL;
  int64_t n;
  TF_ShapeInferenceContextGetInput(ctx, 0, x, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (known_elements(ctx, x, &n)) {
    y = TF_ShapeInferenceContextVectorFromSize(ctx, (size_t)n);
  } else {
    y = TF_NewShapeHandle(); /* unknown: given a rank, a vector of unknown size */
    TF_ShapeInferenceContextWithRank(ctx, y, 1, y, status);
    if (TF_GetCode(status) != TF_OK) goto done;
  }
  TF_ShapeInferenceContextSetOutput(ctx, 0, y, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  facts = TF_ShapeInferenceContextVectorFromSize(ctx, TENSOR_FACTS);
  TF_ShapeInferenceContextSetOutput(ctx, 1, facts, status);
done:
  TF_DeleteShapeHandle(x);
  if (y != NULL) TF_DeleteShapeHandle(y);
  if (facts != NULL) TF_DeleteShapeHandle(facts);
}

/* TestConcatLike: every input has the rank of input 0 (1 to MAX_DIMS) and
 * its dims after the first; the output is [sum of first dims] + those dims. */
static void shape_concat_like(TF_ShapeInferenceContext *ctx, TF_Status *status) {
  TF_ShapeHandle *first = TF_NewShapeHandle(), *in = TF_NewShapeHandle(), *rest = TF_NewShapeHandle();
  TF_ShapeHandle *head = NULL, *out = TF_NewShapeHandle();
  TF_DimensionHandle *a = TF_NewDimensionHandle(), *b = TF_NewDimensionHandle();
  int64_t n = TF_ShapeInferenceContextNumInputs(ctx), rank, i, d, total = 0;
  int known = 1;
  TF_DataType t = TF_FLOAT;
  char msg[160];

  TF_ShapeInferenceContext_GetAttrType(ctx, "T", &t, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (TF_DataTypeSize(t) == 0) {
    snprintf(msg, sizeof msg, "TestConcatLike: T must be a type of fixed size, not %d", (int)t);
    TF_SetStatus(status, TF_INVALID_ARGUMENT, msg);
    goto done;
  }
  TF_ShapeInferenceContextGetInput(ctx, 0, first, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_ShapeInferenceContextWithRankAtLeast(ctx, first, 1, first, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_ShapeInferenceContextWithRankAtMost(ctx, first, MAX_DIMS, first, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  if (!TF_ShapeInferenceContextRankKnown(ctx, first)) {
    TF_ShapeInferenceContextSetUnknownShape(ctx, status);
    goto done;
  }
  rank = TF_ShapeInferenceContextRank(ctx, first);
  for (i = 0; i < n; ++i) {
    TF_ShapeInferenceContextGetInput(ctx, (int)i, in, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    TF_ShapeInferenceContextWithRank(ctx, in, rank, in, status);
    if (TF_GetCode(status) != TF_OK) goto done;
    TF_ShapeInferenceContextDim(ctx, in, 0, a);
    if (TF_DimensionHandleValueKnown(a)) {
      total += TF_DimensionHandleValue(a);
    } else {
      known = 0;
    }
    for (d = 1; d < rank; ++d) {
      TF_ShapeInferenceContextDim(ctx, in, d, a);
      TF_ShapeInferenceContextDim(ctx, first, d, b);
      if (TF_DimensionHandleValueKnown(a) && TF_DimensionHandleValueKnown(b) &&
          TF_DimensionHandleValue(a) != TF_DimensionHandleValue(b)) {
        snprintf(msg, sizeof msg, "TestConcatLike: dimension %lld of input %lld is %lld, of input 0 %lld",
                 (long long)d, (long long)i, (long long)TF_DimensionHandleValue(a),
                 (long long)TF_DimensionHandleValue(b));
        TF_SetStatus(status, TF_INVALID_ARGUMENT, msg);
        goto done;
      }
    }
  }
  if (known) {
    head = TF_ShapeInferenceContextVectorFromSize(ctx, (size_t)total);
  } else {
    head = TF_NewShapeHandle();
    TF_ShapeInferenceContextWithRank(ctx, head, 1, head, status);
    if (TF_GetCode(status) != TF_OK) goto done;
  }
  TF_ShapeInferenceContextSubshape(ctx, first, 1, rank, rest, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_ShapeInferenceContextConcatenateShapes(ctx, head, rest, out, status);
  if (TF_GetCode(status) != TF_OK) goto done;
  TF_ShapeInferenceContextSetOutput(ctx, 0, out, status);
done:
  TF_DeleteShapeHandle(first);
  TF_DeleteShapeHandle(in);
  TF_DeleteShapeHandle(rest);
  if (head != NULL) TF_DeleteShapeHandle(head);
  TF_DeleteShapeHandle(out);
  TF_DeleteDimensionHandle(a);
  TF_DeleteDimensionHandle(b);
}

/* ======================================================================
 * TF_InitKernel
 * ====================================================================== */

static void registration_failed(const char *what, TF_Status *s) {
  COUNT(registration_errors);
  fprintf(stderr, "TESTDEV: registering %s failed: %s\n", what, TF_Message(s));
}

static void register_op(TF_OpDefinitionBuilder *b, const char *name, TF_Status *s) {
  TF_RegisterOpDefinition(b, s); /* takes the builder, success or not */
  if (TF_GetCode(s) != TF_OK) registration_failed(name, s);
}

typedef struct kernel_spec {
  const char *name, *op;
  void *(*create)(TF_OpKernelConstruction *);
  void (*compute)(void *, TF_OpKernelContext *);
  void (*compute_async)(void *, TF_OpKernelContext *, TF_AsyncOpKernelDoneCallback *);
  const char *type_attr; /* NULL: no type constraint */
  TF_DataType type;
  const char *host_memory; /* NULL: none */
  int32_t priority;
  const char *label; /* NULL: none */
} kernel_spec;

/* ======================================================================
 * Resource variables (the 2.6-2.18 helpers): AssignAddVariableOp and
 * AssignSubVariableOp through TF_AssignUpdateVariable, and
 * ResourceApplyGradientDescent (var -= alpha * delta) through the lock
 * holder and TF_GetInputTensorFromVariable. TESTDEV's device memory is host
 * memory, so the updates run right here.
 * ====================================================================== */

/* copyFunc: the helpers ask for a copy of the variable's buffer when a read
 * shares it (copy on write). kern_copy_swapped copies the wrong way round,
 * onto the read. */
static void variable_copy(TF_OpKernelContext *ctx, TF_Tensor *source, TF_Tensor *dest) {
  (void)ctx;
  if (TF_TensorByteSize(dest) == TF_TensorByteSize(source)) {
    if (fail_mode("kern_copy_swapped")) {
      memcpy(TF_TensorData(source), TF_TensorData(dest), TF_TensorByteSize(source));
    } else {
      memcpy(TF_TensorData(dest), TF_TensorData(source), TF_TensorByteSize(source));
    }
  }
}

/* updateFunc: var += value (Op 0, TensorFlow's ADD) or var -= value (1, SUB). */
static void variable_update(TF_OpKernelContext *ctx, TF_Tensor *var, TF_Tensor *value, int op) {
  float *v = (float *)TF_TensorData(var);
  const float *x = (const float *)TF_TensorData(value);
  int64_t i, n = TF_TensorElementCount(var);
  if (op != 0 && op != 1) {
    check_failed(ctx, "TF_AssignUpdateVariable passed Op %d, not ADD (0) or SUB (1)", op);
    return;
  }
  for (i = 0; i < n; ++i) v[i] = op == 0 ? v[i] + x[i] : v[i] - x[i];
}

static void assign_update_compute(TF_OpKernelContext *ctx, int op) {
  TF_Status *s = TF_NewStatus();
  TF_AssignUpdateVariable(ctx, 0, 1, op, 0, variable_copy, variable_update, s);
  if (TF_GetCode(s) != TF_OK) TF_OpKernelContext_Failure(ctx, s); /* e.g. a shape mismatch: TF's own error */
  TF_DeleteStatus(s);
}

static void assign_add_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  assign_update_compute(ctx, 0);
}

static void assign_sub_compute(void *kernel, TF_OpKernelContext *ctx) {
  (void)kernel;
  assign_update_compute(ctx, 1);
}

static void apply_gradient_descent_compute(void *kernel, TF_OpKernelContext *ctx) {
  static const int kVariableInputs[1] = {0};
  TF_Status *s = TF_NewStatus();
  TF_VariableInputLockHolder *holder = NULL;
  TF_Tensor *var = NULL, *alpha = NULL, *delta = NULL;
  (void)kernel;
  TF_MaybeLockVariableInputMutexesInOrder(ctx, true, false, kVariableInputs, 1, variable_copy, &holder, s);
  if (TF_GetCode(s) != TF_OK) {
    TF_OpKernelContext_Failure(ctx, s); /* not a variable: the caller's error */
    goto done;
  }
  if (holder == NULL) {
    check_failed(ctx, "TF_MaybeLockVariableInputMutexesInOrder returned OK and no holder");
    goto done;
  }
  TF_GetInputTensorFromVariable(ctx, 0, true, false, false, variable_copy, &var, s);
  if (TF_GetCode(s) != TF_OK) {
    TF_OpKernelContext_Failure(ctx, s); /* not a variable: the caller's error */
    goto done;
  }
  TF_GetInput(ctx, 1, &alpha, s);
  if (!expect_ok(ctx, s, "TF_GetInput(alpha)")) goto done;
  TF_GetInput(ctx, 2, &delta, s);
  if (!expect_ok(ctx, s, "TF_GetInput(delta)")) goto done;
  if (TF_NumDims(alpha) != 0 || TF_TensorElementCount(delta) != TF_TensorElementCount(var)) {
    fail_ctx(ctx, TF_INVALID_ARGUMENT, "ResourceApplyGradientDescent: alpha must be a scalar and delta as big as var");
    goto done;
  }
  {
    float *v = (float *)TF_TensorData(var);
    const float a = *(const float *)TF_TensorData(alpha), *d = (const float *)TF_TensorData(delta);
    int64_t i, n = TF_TensorElementCount(var);
    /* kern_sgd_sign: the step taken uphill */
    const float sign = fail_mode("kern_sgd_sign") ? -1.0f : 1.0f;
    for (i = 0; i < n; ++i) v[i] -= sign * a * d[i];
  }
done:
  TF_ReleaseVariableInputLockHolder(holder);
  TF_DeleteTensor(var);
  TF_DeleteTensor(alpha);
  TF_DeleteTensor(delta);
  TF_DeleteStatus(s);
}

static void register_kernel(const kernel_spec *k, TF_Status *s) {
  TF_KernelBuilder *b =
      k->compute_async != NULL
          ? TF_NewAsyncKernelBuilder(k->op, DEVICE_TYPE, k->create, k->compute_async, delete_kernel)
          : TF_NewKernelBuilder(k->op, DEVICE_TYPE, k->create, k->compute, delete_kernel);
  if (k->type_attr != NULL) {
    TF_KernelBuilder_TypeConstraint(b, k->type_attr, k->type, s);
    if (TF_GetCode(s) != TF_OK) {
      registration_failed(k->name, s);
      TF_DeleteKernelBuilder(b);
      return;
    }
  }
  if (k->host_memory != NULL) TF_KernelBuilder_HostMemory(b, k->host_memory);
  if (k->priority != 0) TF_KernelBuilder_Priority(b, k->priority);
  if (k->label != NULL) TF_KernelBuilder_Label(b, k->label);
  TF_RegisterKernelBuilder(k->name, b, s); /* the registry owns the builder now */
  if (TF_GetCode(s) != TF_OK) {
    registration_failed(k->name, s);
    TF_DeleteKernelBuilder(b);
  }
}

/* Cast float -> int32: two type constraints, which kernel_spec has no room for. */
static void register_cast(TF_Status *s) {
  TF_KernelBuilder *b = TF_NewKernelBuilder("Cast", DEVICE_TYPE, create_plain, cast_compute, delete_kernel);
  TF_KernelBuilder_TypeConstraint(b, "SrcT", TF_FLOAT, s);
  if (TF_GetCode(s) == TF_OK) TF_KernelBuilder_TypeConstraint(b, "DstT", TF_INT32, s);
  if (TF_GetCode(s) == TF_OK) TF_RegisterKernelBuilder("Cast_TESTDEV_float_int32", b, s);
  if (TF_GetCode(s) != TF_OK) {
    registration_failed("Cast_TESTDEV_float_int32", s);
    TF_DeleteKernelBuilder(b);
  }
}

static void define_ops(TF_Status *s) {
  TF_OpDefinitionBuilder *b;

  b = TF_NewOpDefinitionBuilder("TestAsyncIdentity");
  TF_OpDefinitionBuilderAddInput(b, "input: T");
  TF_OpDefinitionBuilderAddOutput(b, "output: T");
  TF_OpDefinitionBuilderAddAttr(b, "T: type");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_same_as_input);
  register_op(b, "op TestAsyncIdentity", s);

  b = TF_NewOpDefinitionBuilder("TestAttrs");
  TF_OpDefinitionBuilderAddOutput(b, "out: float");
  TF_OpDefinitionBuilderAddAttr(b, "i: int");
  TF_OpDefinitionBuilderAddAttr(b, "f: float = 0.5");
  TF_OpDefinitionBuilderAddAttr(b, "b: bool = false");
  TF_OpDefinitionBuilderAddAttr(b, "t: type = DT_INT32");
  TF_OpDefinitionBuilderAddAttr(b, "s: string = 'hello'");
  TF_OpDefinitionBuilderAddAttr(b, "shape: shape");
  TF_OpDefinitionBuilderAddAttr(b, "li: list(int) = [1, 2, 3]");
  TF_OpDefinitionBuilderAddAttr(b, "lf: list(float) = []");
  TF_OpDefinitionBuilderAddAttr(b, "lb: list(bool) = [true, false]");
  TF_OpDefinitionBuilderAddAttr(b, "lt: list(type) = [DT_FLOAT]");
  TF_OpDefinitionBuilderAddAttr(b, "ls: list(string) = ['x', 'yz']");
  /* No defaults for these: TensorFlow would read them as proto text, the
   * shims in their own notation; "[]" both read alike. */
  TF_OpDefinitionBuilderAddAttr(b, "tensor: tensor");
  TF_OpDefinitionBuilderAddAttr(b, "tensors: list(tensor) = []");
  TF_OpDefinitionBuilderAddAttr(b, "fn: func");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_unknown);
  register_op(b, "op TestAttrs", s);

  b = TF_NewOpDefinitionBuilder("TestFail");
  TF_OpDefinitionBuilderAddOutput(b, "out: float");
  TF_OpDefinitionBuilderAddAttr(b, "code: int");
  TF_OpDefinitionBuilderAddAttr(b, "message: string = 'TestFail failed as asked'");
  TF_OpDefinitionBuilderSetIsStateful(b, true);
  register_op(b, "op TestFail", s);

  b = TF_NewOpDefinitionBuilder("TestConstructFail");
  TF_OpDefinitionBuilderAddOutput(b, "out: float");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_scalar);
  register_op(b, "op TestConstructFail", s);

  b = TF_NewOpDefinitionBuilder("TestContext");
  TF_OpDefinitionBuilderAddInput(b, "x: T");
  TF_OpDefinitionBuilderAddOutput(b, "out: int64");
  TF_OpDefinitionBuilderAddAttr(b, "T: type");
  TF_OpDefinitionBuilderSetIsStateful(b, true); /* its output depends on the step */
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_context);
  register_op(b, "op TestContext", s);

  b = TF_NewOpDefinitionBuilder("TestHostCallback");
  TF_OpDefinitionBuilderAddOutput(b, "out: int32");
  TF_OpDefinitionBuilderAddAttr(b, "fail: bool = false");
  TF_OpDefinitionBuilderSetIsStateful(b, true);
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_scalar);
  register_op(b, "op TestHostCallback", s);

  b = TF_NewOpDefinitionBuilder("TestTensorApi");
  TF_OpDefinitionBuilderAddInput(b, "x: float");
  TF_OpDefinitionBuilderAddOutput(b, "y: int32");
  TF_OpDefinitionBuilderAddOutput(b, "facts: int64");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_tensor_api);
  register_op(b, "op TestTensorApi", s);

  b = TF_NewOpDefinitionBuilder("TestStatusApi");
  TF_OpDefinitionBuilderAddOutput(b, "codes: int32");
  TF_OpDefinitionBuilderAddAttr(b, "errnos: list(int) = []");
  TF_OpDefinitionBuilderAddAttr(b, "fail_errno: int = 0");
  register_op(b, "op TestStatusApi", s); /* no shape function: the output's shape is unknown */

  b = TF_NewOpDefinitionBuilder("TestConcatLike");
  TF_OpDefinitionBuilderAddInput(b, "values: N * T");
  TF_OpDefinitionBuilderAddOutput(b, "output: T");
  TF_OpDefinitionBuilderAddAttr(b, "N: int >= 1");
  TF_OpDefinitionBuilderAddAttr(b, "T: type");
  TF_OpDefinitionBuilderSetShapeInferenceFunction(b, shape_concat_like);
  register_op(b, "op TestConcatLike", s);

  /* An op this plugin version retired: defined the way it used to be, then
   * dropped. The flags and the deprecation go with the builder; nothing of
   * it is registered (tfp_op_new("TestRetired") must fail). */
  b = TF_NewOpDefinitionBuilder("TestRetired");
  TF_OpDefinitionBuilderAddInput(b, "inputs: N * float");
  TF_OpDefinitionBuilderAddOutput(b, "sum: float");
  TF_OpDefinitionBuilderAddAttr(b, "N: int >= 1");
  TF_OpDefinitionBuilderSetIsCommutative(b, true);
  TF_OpDefinitionBuilderSetIsAggregate(b, true);
  TF_OpDefinitionBuilderSetAllowsUninitializedInput(b, true);
  TF_OpDefinitionBuilderDeprecated(b, 1, "TestRetired is retired: use AddN");
  TF_DeleteOpDefinitionBuilder(b);
}

void TF_InitKernel(void) {
  static const kernel_spec kernels[] = {
      {"AddV2_TESTDEV_float", "AddV2", create_typed, addv2_compute, NULL, "T", TF_FLOAT, NULL, 0, NULL},
      {"AddV2_TESTDEV_int32", "AddV2", create_typed, addv2_compute, NULL, "T", TF_INT32, NULL, 0, NULL},
      {"MatMul_TESTDEV_float", "MatMul", matmul_create, matmul_compute, NULL, "T", TF_FLOAT, NULL, 0, NULL},
      {"BiasAdd_TESTDEV_float", "BiasAdd", create_plain, bias_add_compute, NULL, "T", TF_FLOAT, NULL, 0, NULL},
      {"Softmax_TESTDEV_float", "Softmax", create_plain, softmax_compute, NULL, "T", TF_FLOAT, NULL, 0, NULL},
      {"Sum_TESTDEV_float", "Sum", sum_create, sum_compute, NULL, "T", TF_FLOAT, "reduction_indices", 0, NULL},
      /* the loser first: a registry that takes the first match fails the test */
      {"Identity_TESTDEV_p0", "Identity", create_plain, identity_loser_compute, NULL, NULL, TF_FLOAT, NULL, 0,
       NULL},
      {"Identity_TESTDEV_p1", "Identity", create_plain, identity_compute, NULL, NULL, TF_FLOAT, NULL, 1, NULL},
      {"Identity_TESTDEV_special", "Identity", create_plain, identity_special_compute, NULL, NULL, TF_FLOAT, NULL,
       0, "special"},
      {"Shape_TESTDEV_int32", "Shape", create_plain, shape_compute, NULL, "out_type", TF_INT32, "output", 0, NULL},
      {"TestAsyncIdentity_TESTDEV", "TestAsyncIdentity", create_plain, NULL, async_compute, NULL, TF_FLOAT, NULL,
       0, NULL},
      {"TestAttrs_TESTDEV", "TestAttrs", attrs_create, attrs_compute, NULL, NULL, TF_FLOAT, NULL, 0, NULL},
      {"TestFail_TESTDEV", "TestFail", fail_create, fail_compute, NULL, NULL, TF_FLOAT, NULL, 0, NULL},
      {"TestConstructFail_TESTDEV", "TestConstructFail", construct_fail_create, construct_fail_compute, NULL, NULL,
       TF_FLOAT, NULL, 0, NULL},
      {"TestContext_TESTDEV", "TestContext", context_create, context_compute, NULL, NULL, TF_FLOAT, NULL, 0, NULL},
      {"TestHostCallback_TESTDEV", "TestHostCallback", callback_create, callback_compute, NULL, NULL, TF_FLOAT,
       "out", 0, NULL},
      {"TestTensorApi_TESTDEV", "TestTensorApi", create_plain, tensor_api_compute, NULL, NULL, TF_FLOAT, NULL, 0,
       NULL},
      {"TestStatusApi_TESTDEV", "TestStatusApi", status_api_create, status_api_compute, NULL, NULL, TF_FLOAT, NULL,
       0, NULL},
      {"AssignAddVariableOp_TESTDEV_float", "AssignAddVariableOp", create_plain, assign_add_compute, NULL,
       "dtype", TF_FLOAT, NULL, 0, NULL},
      {"AssignSubVariableOp_TESTDEV_float", "AssignSubVariableOp", create_plain, assign_sub_compute, NULL,
       "dtype", TF_FLOAT, NULL, 0, NULL},
      {"ResourceApplyGradientDescent_TESTDEV_float", "ResourceApplyGradientDescent", create_plain,
       apply_gradient_descent_compute, NULL, "T", TF_FLOAT, NULL, 0, NULL},
      /* any T: the kernel copies bytes */
      {"TestConcatLike_TESTDEV", "TestConcatLike", concat_create, concat_compute, NULL, NULL, TF_FLOAT, NULL, 0,
       NULL},
  };
  TF_Status *s = TF_NewStatus();
  size_t i;
  COUNT(init_kernel_calls);
  define_ops(s);
  for (i = 0; i < sizeof kernels / sizeof kernels[0]; ++i) register_kernel(&kernels[i], s);
  register_cast(s);
  if (fail_mode("kern_duplicate")) register_kernel(&kernels[0], s);
  if (fail_mode("kern_gpu")) {
    TF_KernelBuilder *b = TF_NewKernelBuilder("AddV2", "GPU", create_typed, addv2_compute, delete_kernel);
    TF_KernelBuilder_TypeConstraint(b, "T", TF_FLOAT, s);
    TF_RegisterKernelBuilder("AddV2_GPU_float", b, s);
  }
  TF_DeleteStatus(s);
}
