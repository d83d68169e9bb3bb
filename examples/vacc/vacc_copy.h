// SPDX-License-Identifier: Apache-2.0
//
// Copying device memory: the one place every vacc transfer goes through
// (the memcpy callbacks of SP_StreamExecutor and the kernels' copyFunc), so a
// vendor swaps in their DMA engine here and nowhere else.
#ifndef VACC_COPY_H_
#define VACC_COPY_H_

#include <cstdint>

#include "vacc_compute_units.h"

namespace vacc {

// Copies `size` bytes. Large copies made from a unit (stream work) are split
// across the units, as a device with several copy engines would; small ones,
// and copies from other threads, are one memcpy.
// TODO(vendor): a DMA transfer (host <-> device, device <-> device).
void Copy(ComputeUnits& units, void* dst, const void* src, uint64_t size);

}  // namespace vacc

#endif  // VACC_COPY_H_
