// Parsing JSON into a boost::json DOM while keeping the decimal text of every non-integer number, so
// that microseconds can be converted to ns exactly (a double cannot hold 1234.567 exactly, and Boost
// 1.81 does not round every decimal correctly), and locating syntax errors by line and column.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/json/value.hpp>

namespace regionprof::report_detail {

/// A place in a JSON document: the readable path for messages (`runs[2].regions[0].calls`) and an
/// unambiguous key for the number texts (object keys escaped, so `a.b` and `a` -> `b` differ).
class json_location {
 public:
  json_location member(std::string_view key) const;
  json_location element(std::size_t index) const;
  const std::string& text() const noexcept { return text_; }  ///< "" at the root
  const std::string& key() const noexcept { return key_; }

 private:
  std::string text_;
  std::string key_;
};

/// The key json_location::key() gives for one object member / array element, appended to `key`.
void append_member_key(std::string& key, std::string_view member);
void append_element_key(std::string& key, std::size_t index);

/// A syntax error: where (1-based line and column in bytes, 0-based byte offset) and Boost's message.
struct json_syntax_error {
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::uint64_t offset = 0;
  std::string message;
};

/// A parsed document and, by json_location::key(), the text of each number Boost read as a double.
/// When a key repeats in an object, the last member wins in both (as in Boost.JSON's DOM).
struct json_with_number_text {
  boost::json::value document;
  std::unordered_map<std::string, std::string> double_texts;
};

/// Parses `text` as one standard JSON document (no comments, no trailing commas, valid UTF-8, nesting
/// up to 64 levels; trailing whitespace only). Returns false and fills `error` when it is not one.
bool parse_json_with_number_text(std::string_view text, json_with_number_text& out, json_syntax_error& error);

}  // namespace regionprof::report_detail
