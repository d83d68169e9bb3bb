// SPDX-License-Identifier: Apache-2.0
//
// Fills the callback tables TensorFlow asks for. Each takes the negotiated
// struct size (vacc_struct_size.h) and sets only the fields inside it.
#ifndef VACC_CALLBACKS_H_
#define VACC_CALLBACKS_H_

#include <cstddef>

#include "tensorflow/c/experimental/stream_executor/stream_executor.h"

namespace vacc {

void FillStreamExecutor(SP_StreamExecutor* se, size_t size);  // vacc_stream_executor.cc
void FillTimerFns(SP_TimerFns* timer_fns, size_t size);        // vacc_stream_executor.cc

}  // namespace vacc

#endif  // VACC_CALLBACKS_H_
