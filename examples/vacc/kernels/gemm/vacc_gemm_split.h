// SPDX-License-Identifier: Apache-2.0
//
// What the GEMM drivers (vacc_gemm.cc, vacc_gemm_small_m.cc,
// vacc_gemm_conv_direct.cc) share for cutting work into blocks and handing
// them to the compute units.
#ifndef VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
#define VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "kernels/gemm/vacc_gemm.h"
#include "kernels/gemm/vacc_gemm_microkernel.h"
#include "vacc_compute_units.h"
#include "vacc_shares.h"
#include "vacc_spin_lock.h"

namespace vacc {
namespace gemm {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// True, with C done, when the product is empty: no rows or columns, or an
// empty sum (K = 0: C is zeroed, or left as it is when accumulating). Every
// driver starts with it, so none divides by a zero K.
inline bool EmptyProduct(const PackableA& a, const Matrix& b, float* c, int64_t ldc,
                         bool accumulate) {
  const int64_t m = a.rows(), k = a.cols(), n = b.cols;
  if (m == 0 || n == 0) return true;
  if (k > 0) return false;
  if (!accumulate) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
  }
  return true;
}

// Threads that take part in a parallel step on `units`: the units, plus the
// caller when it is not one of them (1 without units).
inline int Participants(ComputeUnits* units) {
  return units == nullptr ? 1 : units->size() + (units->OnUnit() ? 0 : 1);
}

// A as a float32 matrix with contiguous rows, which the row kernels read in
// place; NULL when it must be packed (im2col, transposed, 16-bit).
inline const Matrix* FloatRowsInPlace(const PackableA& a) {
  const Matrix* m = a.InMemory();
  return m != nullptr && m->dtype == TF_FLOAT && m->col_stride == 1 ? m : nullptr;
}

// Rows [first, rows) of a block of C against one packed B panel, A's rows
// read in place (lda apart, from the block's first row): tiles fitted to
// the rows left (RowsKernel::TileRows). A row of A is one run of kc values,
// or, for the direct convolution, runs of seg_len values seg_stride apart.
inline void RowTilesInPlace(const RowsKernel& kernel, int64_t kc, const float* a, int64_t lda,
                            const float* b_panel, float* c, int64_t ldc, int64_t first,
                            int64_t rows, int n, bool accumulate, int64_t seg_len = 0,
                            int64_t seg_stride = 0) {
  if (seg_len == 0) seg_len = kc;
  for (int64_t i = first; i < rows;) {
    const int r = RowsKernel::TileRows(rows - i);
    kernel.run[r](kc, a + i * lda, lda, seg_len, seg_stride, b_panel, c + i * ldc, ldc, n,
                  accumulate);
    i += r;
  }
}

// The same with A packed as MR-row panels (PackableA::Pack of the block).
inline void RowTilesPacked(const MicroKernel& kernel, int64_t kc, const float* packed_a,
                           const float* b_panel, float* c, int64_t ldc, int64_t rows, int n,
                           bool accumulate) {
  for (int64_t i = 0; i < rows; i += kernel.mr) {
    const int m = static_cast<int>(std::min<int64_t>(kernel.mr, rows - i));
    kernel.run(kc, packed_a + i * kc, b_panel, c + i * ldc, ldc, m, n, accumulate);
  }
}

// body(begin, end) over [0, n): split across `units` (items taken one by one,
// dynamically), or all on the calling thread when units is nullptr.
inline void ForEach(ComputeUnits* units, size_t n,
                    const std::function<void(size_t, size_t)>& body) {
  if (units == nullptr) {
    body(0, n);
  } else {
    units->ParallelFor(n, 1, body);
  }
}

// body(begin, end) over [0, n) of a few large items (GEMM tiles): handed out
// one item at a time, so no unit waits long for the last one.
inline void ForEachItem(ComputeUnits* units, size_t n,
                        const std::function<void(size_t, size_t)>& body) {
  if (units == nullptr) {
    body(0, n);
  } else {
    units->ParallelForEachItem(n, body);
  }
}

// body(p) for each participant p of a parallel step on `units` (the caller
// is participant 0), or body(0) alone without units.
inline void ForEachParticipant(ComputeUnits* units, const std::function<void(int)>& body) {
  const int parts = Participants(units);
  if (parts == 1) {
    body(0);
    return;
  }
  units->ParallelFor(static_cast<size_t>(parts), 1, [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) body(static_cast<int>(p));
  });
}

// Work done once per item by whichever unit needs the item first, while
// others that need it meanwhile wait: a packed block is made by the first
// tile that uses it, inside the parallel step, instead of in a step of its
// own with a barrier after it.
class OnceEach {
 public:
  explicit OnceEach(size_t n) : state_(new std::atomic<uint8_t>[n]) {
    for (size_t i = 0; i < n; ++i) state_[i].store(kTodo, std::memory_order_relaxed);
  }
  // Runs work if no one has started the item yet, and waits for the item
  // to be complete otherwise.
  template <typename F>
  void Run(size_t item, F&& work) {
    TryRun(item, std::forward<F>(work));
    Wait(item);
  }

  // Runs work if no one has started the item yet; returns at once if
  // someone has (it may not be complete: Wait for it). Lets a unit claim
  // the parts of a block nobody is making yet, then wait for the rest, so
  // two units needing one block both pack it instead of one waiting.
  template <typename F>
  void TryRun(size_t item, F&& work) {
    std::atomic<uint8_t>& s = state_[item];
    if (s.load(std::memory_order_acquire) != kTodo) return;
    uint8_t todo = kTodo;
    if (s.compare_exchange_strong(todo, kRunning, std::memory_order_acq_rel)) {
      work();
      s.store(kDone, std::memory_order_release);
    }
  }

  // Items [first, first + count) make one block: claims and runs
  // work(i) for each item i of it nobody has started, then waits for the
  // rest. Units needing the same block at once share its making instead of
  // one waiting for the other (the GEMM's A blocks, packed in slices).
  template <typename F>
  void RunEach(size_t first, size_t count, F&& work) {
    for (size_t i = 0; i < count; ++i) TryRun(first + i, [&] { work(i); });
    for (size_t i = 0; i < count; ++i) Wait(first + i);
  }

  // Returns once the item is complete.
  void Wait(size_t item) {
    std::atomic<uint8_t>& s = state_[item];
    // Another unit is making it (a few microseconds); yield if that takes
    // long, e.g. when that unit lost its core. Not SpinUntil: it yields
    // after 2 us, and on this VM that made the 1x1 Conv2D (a plain GEMM) at
    // 2 units 30% slower (73 vs 107 GFLOP/s, bench_vacc_conv).
    for (int spins = 0; s.load(std::memory_order_acquire) != kDone; ++spins) {
      if (spins < 4096) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  static constexpr uint8_t kTodo = 0, kRunning = 1, kDone = 2;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
};

}  // namespace gemm
}  // namespace vacc

#endif  // VACC_KERNELS_GEMM_VACC_GEMM_SPLIT_H_
