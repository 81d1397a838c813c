#include "regionprof/trace/trace.hpp"

namespace regionprof {

string_table::string_table() { intern(std::string_view{}); }

string_table::string_table(const string_table& other) : string_table() {
  for (std::size_t i = 1; i < other.size(); ++i) intern(other.view(static_cast<name_id>(i)));
}

string_table& string_table::operator=(const string_table& other) {
  if (this != &other) {
    string_table copy(other);
    *this = std::move(copy);
  }
  return *this;
}

name_id string_table::intern(std::string_view text) {
  if (auto found = index_.find(text); found != index_.end()) return found->second;
  const std::string& stored = storage_.emplace_back(text);
  const auto id = static_cast<name_id>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

name_id string_table::find(std::string_view text) const {
  auto found = index_.find(text);
  return found == index_.end() ? npos : found->second;
}

}  // namespace regionprof
