#include "regionprof/json/json_with_number_text.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value_stack.hpp>

namespace regionprof::report_detail {
namespace {

namespace json = boost::json;

/// Builds the DOM as Boost.JSON's own parser does (value_stack) and tracks where each value sits, to
/// file the text of each double under its location key.
struct number_text_handler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  /// An open object or array. `prefix` is the location key of the container itself.
  struct frame {
    bool array = false;
    std::size_t index = 0;  ///< arrays: the element being read
    std::string prefix;
    std::string member;     ///< objects: the key of the member being read
    bool member_done = true;
  };

  json::value_stack st;
  std::vector<frame> frames;
  std::string number;  // the parts of the number being read
  std::unordered_map<std::string, std::string>* texts = nullptr;

  std::string value_key() const {
    if (frames.empty()) return {};
    const frame& top = frames.back();
    std::string key = top.prefix;
    if (top.array) {
      append_element_key(key, top.index);
    } else {
      append_member_key(key, top.member);
    }
    return key;
  }
  void value_done() {
    if (!frames.empty() && frames.back().array) ++frames.back().index;
  }
  void open(bool array) {
    frame opened;
    opened.array = array;
    opened.prefix = value_key();
    frames.push_back(std::move(opened));
  }
  void close() {
    frames.pop_back();
    value_done();
  }
  void key_part(json::string_view s) {
    frame& top = frames.back();
    if (top.member_done) {
      top.member.clear();
      top.member_done = false;
    }
    top.member.append(s.data(), s.size());
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) {
    open(false);
    return true;
  }
  bool on_object_end(std::size_t n, json::error_code&) {
    st.push_object(n);
    close();
    return true;
  }
  bool on_array_begin(json::error_code&) {
    open(true);
    return true;
  }
  bool on_array_end(std::size_t n, json::error_code&) {
    st.push_array(n);
    close();
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    key_part(s);
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    key_part(s);
    frames.back().member_done = true;
    st.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    st.push_string(s);
    value_done();
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    number.clear();
    st.push_int64(i);
    value_done();
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    number.clear();
    st.push_uint64(u);
    value_done();
    return true;
  }
  bool on_double(double d, json::string_view s, json::error_code&) {
    number.append(s.data(), s.size());
    (*texts)[value_key()] = std::move(number);
    number.clear();
    st.push_double(d);
    value_done();
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    st.push_bool(b);
    value_done();
    return true;
  }
  bool on_null(json::error_code&) {
    st.push_null();
    value_done();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

json::parse_options strict_options() {
  json::parse_options options;
  options.max_depth = 64;
  return options;
}

}  // namespace

void append_member_key(std::string& key, std::string_view member) {
  key += '.';
  for (const char c : member) {
    if (c == '.' || c == '[' || c == '\\') key += '\\';
    key += c;
  }
}

void append_element_key(std::string& key, std::size_t index) {
  key += '[';
  key += std::to_string(index);
  key += ']';
}

json_location json_location::member(std::string_view name) const {
  json_location child;
  child.text_.reserve(text_.size() + name.size() + 1);
  child.text_ = text_;
  if (!child.text_.empty()) child.text_ += '.';
  child.text_.append(name);
  child.key_ = key_;
  append_member_key(child.key_, name);
  return child;
}

json_location json_location::element(std::size_t index) const {
  json_location child;
  child.text_ = text_ + '[' + std::to_string(index) + ']';
  child.key_ = key_;
  append_element_key(child.key_, index);
  return child;
}

bool parse_json_with_number_text(std::string_view text, json_with_number_text& out, json_syntax_error& error) {
  out.double_texts.clear();
  json::basic_parser<number_text_handler> parser(strict_options());
  parser.handler().st.reset();
  parser.handler().texts = &out.double_texts;
  json::error_code ec;
  const std::size_t consumed = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && !parser.done()) ec = json::error::incomplete;
  // write_some stops after the document and the whitespace after it; anything left is extra data.
  if (!ec && consumed < text.size()) ec = json::error::extra_data;
  if (ec) {
    const std::size_t offset = consumed < text.size() ? consumed : text.size();
    error.offset = offset;
    error.line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++error.line;
        line_start = i + 1;
      }
    }
    error.column = offset - line_start + 1;
    error.message = ec.message();
    return false;
  }
  out.document = parser.handler().st.release();
  return true;
}

}  // namespace regionprof::report_detail
