// regionprof's own metadata in a Chrome trace: the top-level 'regionprof' object and the ranges'
// args.domain, written by regionprof's Chrome writer (report/chrome_trace.cpp).
#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <string_view>

#include "regionprof/trace/trace.hpp"

namespace regionprof::import_detail {

class input_errors;

/// Restores the 'regionprof' object `own` (at input offset `offset`, for errors) over the
/// importer's defaults: the target's type, device_tracing, run_wall_times_ns, module_types; its warnings
/// go before the importer's own. schema_version 1 only (absent: 1).
void restore_regionprof_metadata(trace& t, const boost::json::object& own, const input_errors& errors,
                                 std::uint64_t offset);

/// The NVTX domain named by a range's args.domain, added when new. The writer writes args.domain
/// only for domains other than the unnamed domain 0.
domain_index restore_domain(trace& t, std::string_view name);

}  // namespace regionprof::import_detail
