// The saved-profile reader's entry points for readers of documents that hold profiles (job reports).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "regionprof/json/json_with_number_text.hpp"
#include "regionprof/model/profile.hpp"

namespace regionprof::saved_detail {

/// The member `name` of `object`, or nullptr when it is absent or null (the readers' one rule for an
/// optional key).
const boost::json::value* present_member(const boost::json::object& object, std::string_view name);

/// `text` parsed, keeping each number's text (parse_json_with_number_text); profile_read_error naming
/// `name` and the line, column and byte offset of a syntax error.
report_detail::json_with_number_text parse_document(std::string_view text, const std::string& name);

/// Reads the profile `value`, which sits at `at` in the document `name` (messages name the key as
/// `ranks[1].profile.runs[0].calls`); `double_texts` is the document's (parse_json_with_number_text).
/// Throws profile_read_error as read_profile_text does.
Profile read_profile_value(const boost::json::value& value, const report_detail::json_location& at,
                           const std::string& name, const std::unordered_map<std::string, std::string>& double_texts);

/// The whole file; profile_read_error naming `path` when it cannot be opened or read.
std::string read_text_file(const std::string& path);

}  // namespace regionprof::saved_detail
