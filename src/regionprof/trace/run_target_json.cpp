#include "regionprof/trace/run_target_json.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

namespace regionprof {
namespace {

boost::json::value to_value(const std::string& text) { return boost::json::string(text); }
boost::json::value to_value(std::uint64_t number) { return number; }
boost::json::value to_value(std::int64_t number) { return number; }
boost::json::value to_value(const std::vector<std::string>& words) {
  boost::json::array out;
  for (const std::string& word : words) out.emplace_back(boost::json::string(word));
  return out;
}

bool from_value(const boost::json::value& value, std::string& out) {
  if (!value.is_string()) return false;
  out = std::string(value.get_string());
  return true;
}

bool from_value(const boost::json::value& value, std::uint64_t& out) {
  if (value.is_uint64()) {
    out = value.get_uint64();
    return true;
  }
  if (value.is_int64() && value.get_int64() >= 0) {
    out = static_cast<std::uint64_t>(value.get_int64());
    return true;
  }
  return false;
}

bool from_value(const boost::json::value& value, std::int64_t& out) {
  if (value.is_int64()) {
    out = value.get_int64();
    return true;
  }
  if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    out = static_cast<std::int64_t>(value.get_uint64());
    return true;
  }
  return false;
}

bool from_value(const boost::json::value& value, std::vector<std::string>& out) {
  if (!value.is_array()) return false;
  std::vector<std::string> words;
  for (const boost::json::value& word : value.get_array()) {
    if (!word.is_string()) return false;
    words.emplace_back(word.get_string());
  }
  out = std::move(words);
  return true;
}

}  // namespace

void run_target::set_process(const process_identity& identity) {
  rank = identity.rank;
  local_rank = identity.local_rank;
  world_size = identity.world_size;
  host = identity.host;
  pid = identity.pid;
}

namespace trace_detail {

boost::json::object target_members(const run_target& target) {
  boost::json::object out;
#define REGIONPROF_TARGET_MEMBER(name, value_type) \
  if (target.name) out[#name] = to_value(*target.name);
#include "regionprof/trace/run_target.def"
#undef REGIONPROF_TARGET_MEMBER
  for (const foreign_member& member : target.foreign) out[member.name] = member.value->value;
  return out;
}

void add_target_member(run_target& target, std::string_view name, boost::json::value value) {
  if (name == "type") throw std::invalid_argument("run_target: `type` is run_target::type, not a member");
#define REGIONPROF_TARGET_MEMBER(member, value_type)                   \
  if (name == #member && !target.member) {                             \
    value_type typed{};                                                \
    if (from_value(value, typed)) {                                    \
      target.member = std::move(typed);                                \
      return;                                                          \
    }                                                                  \
  }
#include "regionprof/trace/run_target.def"
#undef REGIONPROF_TARGET_MEMBER
  target.foreign.push_back({std::string(name), std::make_shared<const detail::json_value_holder>(
                                                   detail::json_value_holder{std::move(value)})});
}

const boost::json::value* foreign_value(const run_target& target, std::string_view name) {
  for (const foreign_member& member : target.foreign) {
    if (member.name == name) return &member.value->value;
  }
  return nullptr;
}

}  // namespace trace_detail
}  // namespace regionprof
