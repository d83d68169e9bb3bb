// SPDX-License-Identifier: Apache-2.0
//
// The device's configuration, read once from the environment when TensorFlow
// calls SE_InitPlugin. A vendor replaces most of this with what the hardware
// reports (TODO(vendor) marks the spots).
#ifndef VACC_CONFIG_H_
#define VACC_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace vacc {

struct Config {
  // VACC_DEVICE_COUNT: devices the platform reports (1..64).
  int device_count = 1;
  // VACC_THREADS: worker threads ("compute units") per device; default: the
  // machine's hardware threads.
  int compute_units = 1;
  // VACC_MEMORY_MB: each device's memory capacity; default: 4096 MiB, or a
  // quarter of physical memory if that is smaller.
  uint64_t memory_bytes = 0;
  // VACC_SPIN_US: how long an idle worker (or a host thread waiting for a
  // stream) spins before it sleeps. Spinning hands over work in ~0.3 us;
  // waking a sleeping thread costs tens of us. 0 disables spinning.
  std::chrono::microseconds spin{50};
  // VACC_USE_BFC (0/1): let TensorFlow's BFC allocator carve tensors out of
  // large chunks it allocates from us (1, default), or call allocate /
  // deallocate for every tensor (0: slower, but each tensor is a separate
  // device allocation, which makes out-of-bounds bugs visible).
  bool use_bfc_allocator = true;
  // VACC_MEMORY_GROWTH (0/1): with BFC, TensorFlow grows its pool as needed
  // (1, default) instead of reserving nearly all device memory up front (0).
  bool force_memory_growth = true;
  // VACC_GFLOPS / VACC_MEMORY_BANDWIDTH (bytes/s): what SP_DeviceFns reports.
  // 0 (default): measured once, on first use, on this machine.
  // TODO(vendor): the hardware's datasheet figures.
  double gflops = 0;
  int64_t memory_bandwidth = 0;
  // VACC_SIMD: the instruction set kernels use (kernels/vacc_simd.h):
  // "best" (default), "scalar", or a Highway target name such as "AVX2".
  std::string simd = "best";
  // VACC_GEMM_TILE: the packed GEMM driver's tile (kernels/gemm/
  // vacc_gemm_microkernel.h, TileShape): "auto" (default: this host's
  // measured choice), "tall" (12 x 32 on AVX-512) or "wide" (6 x 64).
  std::string gemm_tile = "auto";
  // VACC_SYNC_KERNELS (0/1): kernels wait for their work before returning to
  // TensorFlow (1, default); why: kernels/vacc_kernel.h.
  bool sync_kernels = true;

  // Reads the variables above. On a malformed or out-of-range value, returns
  // false and sets *error to a message naming the variable and the value.
  static bool FromEnvironment(Config* config, std::string* error);
};

// Measured device characteristics, computed once per process on first call.
double MeasureGflops(int compute_units);
int64_t MeasureMemoryBandwidth();

}  // namespace vacc

#endif  // VACC_CONFIG_H_
