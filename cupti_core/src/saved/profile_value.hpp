// The saved-profile reader's entry points for readers of documents that hold profiles (job reports).
#pragma once

#include <string>
#include <unordered_map>

#include <boost/json/value.hpp>

#include "regionprof/profile.hpp"
#include "json/json_with_number_text.hpp"

namespace regionprof::saved_detail {

/// Reads the profile `value`, which sits at `at` in the document `name` (messages name the key as
/// `ranks[1].profile.runs[0].calls`); `double_texts` is the document's (parse_json_with_number_text).
/// Throws profile_read_error as read_profile_text does.
Profile read_profile_value(const boost::json::value& value, const report_detail::json_location& at,
                           const std::string& name, const std::unordered_map<std::string, std::string>& double_texts);

/// The whole file; profile_read_error naming `path` when it cannot be opened or read.
std::string read_text_file(const std::string& path);

}  // namespace regionprof::saved_detail
