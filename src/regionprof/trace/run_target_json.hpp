// Report `target` as JSON and back: the one codec of run_target (trace.hpp), for the JSON report, the
// Chrome trace, the profile reader and the Kineto importer. Members in run_target.def's order, then the
// foreign ones as they were read.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "regionprof/trace/trace.hpp"

namespace regionprof {
namespace detail {

/// A foreign member's value, as read.
struct json_value_holder {
  boost::json::value value;
};

}  // namespace detail

namespace trace_detail {

/// The target's members but `type`: the modelled ones that are set, in run_target.def's order, then the
/// foreign ones.
boost::json::object target_members(const run_target& target);

/// The member `name` with `value` into `target`: a modelled member when `value` has its type (an
/// integer member takes a non-negative integer, or for `pid` any integer in range; a string member a
/// string; `command` an array of strings), else a foreign one. `type` is no member: std::invalid_argument.
void add_target_member(run_target& target, std::string_view name, boost::json::value value);

/// The value of the foreign member `name`, or null.
const boost::json::value* foreign_value(const run_target& target, std::string_view name);

}  // namespace trace_detail
}  // namespace regionprof
