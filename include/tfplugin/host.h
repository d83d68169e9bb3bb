/* SPDX-License-Identifier: Apache-2.0
 * tfplugin host: load a PluggableDevice plugin and drive it the way
 * TensorFlow does, without TensorFlow. Link with libtfplugin_shims (which
 * also stands in for the TF C API the plugin imports).
 *
 * What "the way TensorFlow does" means here:
 *  - the plugin is dlopen'ed with RTLD_NOW | RTLD_LOCAL, so a symbol no
 *    release's plugin C API has fails the load. (The shims define the
 *    functions of *every* release, so a plugin importing one the emulated
 *    release no longer exports still loads here; `validate_plugin --tf R`
 *    reports those imports: rule TFP-SYM-UNDEFINED-IMPORT.);
 *  - SE_InitPlugin gets structs whose struct_size is pre-filled with the
 *    emulated release's *_STRUCT_SIZE, its fields are read at that
 *    release's offsets, and every check that release makes is applied
 *    (failures come back as statuses naming the struct and field instead
 *    of aborting the process);
 *  - TF_InitKernel registers kernels; running an op picks the kernel by
 *    device type, type constraints and priority, copies inputs to the
 *    device (host-memory args stay on the host), hands the kernel the
 *    device's stream, and copies outputs back;
 *  - closing tears down in TF's order, calling every destroy_* callback.
 *
 * Threads: a tfp_host may be used from several threads; a tfp_op from one
 * thread at a time (run several tfp_op concurrently for parallel kernels).
 * Errors: every function taking a TF_Status reports through it; none aborts.
 */
#ifndef TFPLUGIN_HOST_H_
#define TFPLUGIN_HOST_H_

#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"
#include "tfplugin/struct_size.h"

#define TFP_HOST_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfp_host tfp_host;
typedef struct tfp_op tfp_op;

typedef struct tfp_host_options {
  size_t struct_size;     /* TFP_HOST_OPTIONS_STRUCT_SIZE */
  const char *tf_release; /* release to emulate, "2.16"; NULL: the newest */
  int skip_kernels;       /* non-zero: do not call TF_InitKernel */
} tfp_host_options;
#define TFP_HOST_OPTIONS_STRUCT_SIZE TF_OFFSET_OF_END(tfp_host_options, skip_kernels)

/* Entry points a plugin may export (bits of tfp_host_entry_points). */
enum {
  TFP_ENTRY_SE_INIT_PLUGIN = 1 << 0,     /* SE_InitPlugin: a device */
  TFP_ENTRY_TF_INIT_KERNEL = 1 << 1,     /* TF_InitKernel: kernels, ops */
  TFP_ENTRY_TF_INIT_GRAPH = 1 << 2,      /* TF_InitGraph: graph optimizer */
  TFP_ENTRY_TF_INIT_PROFILER = 1 << 3,   /* TF_InitProfiler: profiler */
  TFP_ENTRY_TFNPD_INIT_PLUGIN = 1 << 4,  /* TFNPD_InitPlugin: next-pluggable device */
  TFP_ENTRY_GET_PJRT_API = 1 << 5        /* GetPjrtApi: PJRT plugin */
};
#define TFP_ENTRY_COUNT 6

/* Loads the plugin at `path` and registers it: SE_InitPlugin (if exported)
 * and TF_InitKernel (if exported, unless skipped). Graph, profiler, NPD and
 * PJRT entry points are found and reported, not called. NULL on failure. */
TFP_HOST_EXPORT tfp_host *tfp_host_open(const char *path, const tfp_host_options *options,
                                        TF_Status *status);
/* Tears down (TF's order, every destroy_* callback) and unloads. NULL ok. */
TFP_HOST_EXPORT void tfp_host_close(tfp_host *host);

TFP_HOST_EXPORT const char *tfp_host_path(const tfp_host *host);
/* The emulated release ("2.21"). */
TFP_HOST_EXPORT const char *tfp_host_release(const tfp_host *host);
TFP_HOST_EXPORT unsigned tfp_host_entry_points(const tfp_host *host);
/* "SE_InitPlugin" for TFP_ENTRY_SE_INIT_PLUGIN, ...; NULL for other values. */
TFP_HOST_EXPORT const char *tfp_host_entry_point_name(unsigned entry_point_bit);

/* ---- Platform and devices (NULL / 0 when the plugin has no SE_InitPlugin) */
TFP_HOST_EXPORT const char *tfp_host_platform_name(const tfp_host *host);
TFP_HOST_EXPORT const char *tfp_host_platform_type(const tfp_host *host);
TFP_HOST_EXPORT int tfp_host_device_count(const tfp_host *host);

typedef struct tfp_device_info {
  size_t struct_size; /* TFP_DEVICE_INFO_STRUCT_SIZE */
  int ordinal;
  const char *name;          /* "/job:localhost/replica:0/task:0/device:VACC:0" */
  const char *hardware_name; /* SP_Device fields; NULL if the plugin left them */
  const char *device_vendor;
  const char *pci_bus_id;
  int64_t numa_node;         /* SP_DeviceFns; -1 if not provided */
  int64_t memory_bandwidth;  /* bytes/s; -1 if not provided */
  double gflops;             /* -1 if not provided */
  int64_t memory_total;      /* device_memory_usage; -1 if it failed */
  int64_t memory_free;
} tfp_device_info;
#define TFP_DEVICE_INFO_STRUCT_SIZE TF_OFFSET_OF_END(tfp_device_info, memory_free)

/* Fills `info` (struct_size set by the caller) for device `ordinal`. */
TFP_HOST_EXPORT void tfp_host_device_info(tfp_host *host, int ordinal, tfp_device_info *info,
                                          TF_Status *status);

/* ---- Device memory, through the plugin's SP_StreamExecutor */
TFP_HOST_EXPORT void *tfp_host_allocate(tfp_host *host, int ordinal, uint64_t size, TF_Status *status);
TFP_HOST_EXPORT void tfp_host_deallocate(tfp_host *host, int ordinal, void *ptr, uint64_t size);
/* Synchronous copies (sync_memcpy_htod / sync_memcpy_dtoh). */
TFP_HOST_EXPORT void tfp_host_memcpy_htod(tfp_host *host, int ordinal, void *device_dst,
                                          const void *host_src, uint64_t size, TF_Status *status);
TFP_HOST_EXPORT void tfp_host_memcpy_dtoh(tfp_host *host, int ordinal, void *host_dst,
                                          const void *device_src, uint64_t size, TF_Status *status);
/* Waits for all work on the device (synchronize_all_activity). */
TFP_HOST_EXPORT void tfp_host_synchronize(tfp_host *host, int ordinal, TF_Status *status);

/* ---- What the plugin registered */
TFP_HOST_EXPORT int tfp_host_kernel_count(const tfp_host *host);

typedef struct tfp_kernel_info {
  size_t struct_size; /* TFP_KERNEL_INFO_STRUCT_SIZE */
  const char *name;   /* as given to TF_RegisterKernelBuilder */
  const char *op;
  const char *device_type;
  const char *label;  /* "" if none */
  int32_t priority;
  int is_async;
  int num_type_constraints;
  const char *const *constraint_attrs;  /* [num_type_constraints] */
  const TF_DataType *constraint_types;  /* [num_type_constraints] */
  int num_host_memory_args;
  const char *const *host_memory_args;  /* [num_host_memory_args] */
  const char *op_signature;             /* the op's definition; NULL if unknown op */
  const char *description;              /* one line for humans */
} tfp_kernel_info;
#define TFP_KERNEL_INFO_STRUCT_SIZE TF_OFFSET_OF_END(tfp_kernel_info, description)

/* Kernel `i` of this host's plugin (0 <= i < tfp_host_kernel_count);
 * strings live as long as the host. Returns 0, or -1 if `i` is out of range. */
TFP_HOST_EXPORT int tfp_host_kernel_info(const tfp_host *host, int i, tfp_kernel_info *info);

/* Ops the plugin defined (TF_RegisterOpDefinition), and any op's signature. */
TFP_HOST_EXPORT int tfp_host_op_count(const tfp_host *host);
TFP_HOST_EXPORT const char *tfp_host_op_name(const tfp_host *host, int i);
/* "MatMul(a: T, b: T) -> (product: T); ..." for a plugin-defined or
 * TensorFlow op; NULL if unknown. Valid as long as the host. */
TFP_HOST_EXPORT const char *tfp_host_op_signature(tfp_host *host, const char *op_name);

/* ---- Running one op on a device */
/* A node of `op_name` on device `ordinal`. Fails (NOT_FOUND) for an op
 * neither TensorFlow nor the plugin defines. */
TFP_HOST_EXPORT tfp_op *tfp_op_new(tfp_host *host, const char *op_name, int ordinal, TF_Status *status);
TFP_HOST_EXPORT void tfp_op_delete(tfp_op *op);

/* Sets an attr from text, parsed by the op's declared attr type: "3",
 * "true", "float", "[1, 2, 2, 1]", "SAME", "[2, 3]" (a shape) ... */
TFP_HOST_EXPORT void tfp_op_set_attr(tfp_op *op, const char *name, const char *value, TF_Status *status);
TFP_HOST_EXPORT void tfp_op_set_attr_int(tfp_op *op, const char *name, int64_t value);
TFP_HOST_EXPORT void tfp_op_set_attr_float(tfp_op *op, const char *name, float value);
TFP_HOST_EXPORT void tfp_op_set_attr_bool(tfp_op *op, const char *name, int value);
TFP_HOST_EXPORT void tfp_op_set_attr_type(tfp_op *op, const char *name, TF_DataType value);
TFP_HOST_EXPORT void tfp_op_set_attr_string(tfp_op *op, const char *name, const char *value);
TFP_HOST_EXPORT void tfp_op_set_attr_int_list(tfp_op *op, const char *name, const int64_t *values, int n);

/* Appends a host tensor as the next input (copied; the caller keeps it). */
TFP_HOST_EXPORT void tfp_op_add_input(tfp_op *op, const TF_Tensor *host_tensor, TF_Status *status);
/* Drops the inputs, to run the same node (same kernel) on new ones. */
TFP_HOST_EXPORT void tfp_op_clear_inputs(tfp_op *op);

/* Resolves attrs and types, selects and creates the kernel (first run, or
 * after attrs changed), copies inputs to the device, computes, waits for
 * the stream, copies outputs back. The kernel's status comes back here. */
TFP_HOST_EXPORT void tfp_op_run(tfp_op *op, TF_Status *status);

TFP_HOST_EXPORT int tfp_op_num_outputs(const tfp_op *op);
/* Output `i` of the last run, on the host; owned by the op until the next
 * run or tfp_op_delete. NULL if out of range or not run. */
TFP_HOST_EXPORT const TF_Tensor *tfp_op_output(const tfp_op *op, int i);
/* The chosen kernel ("MatMul on VACC {T=float}"), after a run; else NULL. */
TFP_HOST_EXPORT const char *tfp_op_kernel(const tfp_op *op);

/* ---- Resource variables
 * What VarHandleOp and AssignVariableOp make in TensorFlow: a tensor in a
 * device's memory that kernels update in place, reached through a resource
 * handle input (DT_RESOURCE, in host memory). The shims' variable helpers
 * (TF_GetInputTensorFromVariable, TF_AssignUpdateVariable,
 * TF_MaybeLockVariableInputMutexesInOrder, TF_ReleaseVariableInputLockHolder;
 * TensorFlow exports them from 2.6 to 2.18) find the variable from that
 * handle, as TensorFlow's do. */
typedef struct tfp_variable tfp_variable;
/* A variable on device `ordinal` holding a copy of `initial` (a host tensor
 * of a numeric type). Deleted with tfp_variable_delete, before the host. */
TFP_HOST_EXPORT tfp_variable *tfp_variable_new(tfp_host *host, int ordinal, const TF_Tensor *initial,
                                               TF_Status *status);
TFP_HOST_EXPORT void tfp_variable_delete(tfp_variable *variable);
/* Its value now, copied to a new host tensor the caller deletes. */
TFP_HOST_EXPORT TF_Tensor *tfp_variable_read(tfp_variable *variable, TF_Status *status);
/* Holds a read that shares the variable's device buffer, as TensorFlow does
 * while a ReadVariableOp output is alive (at most one). The next kernel that
 * updates the variable finds the buffer shared: the helpers then have the
 * kernel copy it (its copyFunc) into a new buffer and update that, as
 * TensorFlow's do, so the read keeps the old value. */
TFP_HOST_EXPORT void tfp_variable_hold_read(tfp_variable *variable, TF_Status *status);
/* The held read's value, copied to a new host tensor the caller deletes;
 * the read is released. */
TFP_HOST_EXPORT TF_Tensor *tfp_variable_release_read(tfp_variable *variable, TF_Status *status);
/* Appends the variable's handle as the op's next input (a DT_RESOURCE
 * scalar); the variable must outlive the op's runs. */
TFP_HOST_EXPORT void tfp_op_add_variable(tfp_op *op, tfp_variable *variable, TF_Status *status);

/* ---- Finding plugins as TensorFlow does */
/* Plugin files TensorFlow would load from `location`: the file itself, or
 * the shared objects ("*.so", "*.so.<digit>...") directly in a directory,
 * sorted. Returns the count (-1 with status set if `location` does not
 * exist); *paths is a NULL-terminated array to free with tfp_host_free_paths. */
TFP_HOST_EXPORT int tfp_host_discover(const char *location, char ***paths, TF_Status *status);
/* The same for $TF_PLUGGABLE_DEVICE_LIBRARY_PATH (0 if unset or empty). */
TFP_HOST_EXPORT int tfp_host_discover_env(char ***paths, TF_Status *status);
TFP_HOST_EXPORT void tfp_host_free_paths(char **paths);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TFPLUGIN_HOST_H_ */
