// torch's op ranges as NVTX ranges (torch.autograd.profiler.emit_nvtx, regionprof.torch's ops=True):
// torch names each `<op>, seq = N, op_id = M` (and `, sizes = [...]`, `, input_op_ids = [...]` with
// shapes recorded), a new name per call. Keyed by `<op>`, calls of one op are one key-average row. The
// capture cuts the suffix as it records default-domain ASCII ranges (nvtxRangePushA/StartA, what torch
// calls), so names repeat; strip_torch_op_suffixes applies the same rule to a whole trace.
#pragma once

#include <cstddef>
#include <string_view>

#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// `name` without torch's per-call suffix (from the first `, seq = `, `, op_id = `, `, sizes = ` or
/// `, input_op_ids = `); `name` itself when it has none.
///
/// ```
/// regionprof::torch_op_name("aten::addmm, seq = 4, op_id = 64");  // "aten::addmm"
/// ```
std::string_view torch_op_name(std::string_view name) noexcept;

/// Renames every range of the default NVTX domain whose name carries torch's suffix to torch_op_name of
/// it (each distinct name looked at once). Returns how many intervals were renamed.
std::size_t strip_torch_op_suffixes(trace& t);

}  // namespace regionprof
