// Op ranges: each torch operator, autograd function and record_function block a range in NVTX's
// default domain named as torch names it (`aten::linear`, `AddmmBackward0`, `Optimizer.step#SGD.step`),
// from one global RecordFunction callback. One definition for both users: the LibTorch adapter
// (instrument_options::ops, pushing through NVTX) and the Python package's ops=True, whose extension
// (op_ranges_extension.cpp, beside this file in the wheel) is compiled against the user's torch and
// pushes through the capture's push_default_range. Only <ATen/record_function.h>: that compile takes
// seconds.
#pragma once

#include <ATen/record_function.h>

#include <memory>

namespace regionprof::torch::op_ranges {

/// The callback pushing one range per op. Start and end run on the op's thread, as a pair (torch picks
/// an op's callbacks once, when it starts, so a callback removed meanwhile still ends what it began).
/// No inputs and no ids: the cheapest observation RecordFunction offers. Scopes: operators (FUNCTION),
/// autograd nodes (BACKWARD_FUNCTION) and `record_function` blocks (USER_SCOPE), as torch's NVTX mode
/// (`emit_nvtx`) gives them, less its per-call name suffix.
///
///   const at::CallbackHandle handle = at::addGlobalCallback(op_ranges::callback<&push, &pop>());
template <int (*Push)(const char*), int (*Pop)()>
at::RecordFunctionCallback callback() {
  return at::RecordFunctionCallback(
             [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
               Push(fn.name());
               return nullptr;
             },
             [](const at::RecordFunction&, at::ObserverContext*) { Pop(); })
      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE});
}

}  // namespace regionprof::torch::op_ranges
