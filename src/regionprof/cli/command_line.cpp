#include "regionprof/cli/command_line.hpp"

#include <algorithm>

namespace regionprof::cli {
namespace {

constexpr std::size_t help_column = 24;   // where the help text of every option starts
constexpr std::size_t synopsis_width = 100;

bool is_short(std::string_view name) { return name.size() == 2 && name[0] == '-' && name[1] != '-'; }

bool looks_like_option(std::string_view arg) { return arg.size() > 1 && arg.front() == '-'; }

}  // namespace

command_line::option& command_line::add(std::string_view name, std::string_view value_name, std::string_view help) {
  if (sections_.empty()) sections_.emplace_back();
  option& o = sections_[current_section_].options.emplace_back();
  o.name = name;
  o.value_name = value_name;
  o.help = help;
  return o;
}

command_line& command_line::section(std::string_view title) {
  const auto found = std::find_if(sections_.begin(), sections_.end(),
                                  [title](const option_section& s) { return s.title == title; });
  current_section_ = static_cast<std::size_t>(found - sections_.begin());
  if (found == sections_.end()) sections_.push_back({std::string(title), {}});
  return *this;
}

command_line& command_line::value(std::string_view name, std::string_view value_name, std::string_view help,
                                  value_handler apply) {
  add(name, value_name, help).apply = std::move(apply);
  return *this;
}

command_line& command_line::repeated(std::string_view name, std::string_view value_name, std::string_view help,
                                     value_handler apply) {
  option& o = add(name, value_name, help);
  o.repeats = true;
  o.apply = std::move(apply);
  return *this;
}

command_line& command_line::flag(std::string_view name, std::string_view help, std::function<void()> apply) {
  add(name, "", help).apply = [apply = std::move(apply)](std::string_view, std::string_view) { apply(); };
  return *this;
}

command_line& command_line::operand(std::string_view name, std::string_view missing,
                                    std::function<void(std::string_view)> apply) {
  operand_name_ = name;
  missing_ = missing;
  apply_operand_ = std::move(apply);
  return *this;
}

command_line& command_line::operands(std::string_view name, std::string_view missing,
                                     std::function<void(std::string_view)> apply) {
  operand(name, missing, std::move(apply));
  operand_repeats_ = true;
  return *this;
}

command_line& command_line::command(std::string_view name, std::string_view arguments, std::string_view missing,
                                    std::vector<std::string>& words) {
  operand_name_ = name;
  operand_arguments_ = arguments;
  missing_ = missing;
  command_words_ = &words;
  return *this;
}

bool command_line::apply_option(std::span<char* const> args, std::size_t& next) const {
  const std::string_view arg = args[next];
  for (const option_section& s : sections_) {
    for (const option& o : s.options) {
      const std::string_view name = o.name;
      const bool exact = arg == name;
      const bool with_equals = arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=';
      const bool attached = is_short(name) && arg.size() > name.size() && arg.starts_with(name);
      if (!exact && !with_equals && !(attached && !o.value_name.empty())) continue;
      const std::string setting = "option " + o.name;
      std::string_view value;
      if (o.value_name.empty()) {
        if (!exact) throw usage_error(setting + " takes no value");
        ++next;
      } else if (exact) {
        if (next + 1 >= args.size()) throw usage_error(setting + " needs a value");
        value = args[next + 1];
        next += 2;
      } else {
        value = arg.substr(name.size() + (with_equals ? 1 : 0));
        ++next;
      }
      try {
        o.apply(setting, value);
      } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
      }
      return true;
    }
  }
  return false;
}

command_line& command_line::operands(std::string_view name, std::string_view missing, std::size_t count,
                                     std::function<void(std::string_view)> apply) {
  operand(name, missing, std::move(apply));
  operand_count_ = count;
  return *this;
}

bool command_line::parse(std::span<char* const> args) const {
  bool only_operands = false;
  std::size_t operands_seen = 0;
  std::string first_operand;
  for (std::size_t next = 0; next < args.size();) {
    const std::string_view arg = args[next];
    if (!only_operands) {
      if (arg == "-h" || arg == "--help") return false;
      if (arg == "--") {
        only_operands = true;
        ++next;
        continue;
      }
      if (apply_option(args, next)) continue;
      if (looks_like_option(arg)) throw usage_error("unknown option '" + std::string(arg) + "'");
    }
    if (command_words_ != nullptr) {
      command_words_->assign(args.begin() + static_cast<std::ptrdiff_t>(next), args.end());
      return true;
    }
    if (!operand_repeats_ && operands_seen == 1 && operand_count_ == 1) {
      throw usage_error("one " + operand_name_ + " only, got '" + first_operand + "' and '" + std::string(arg) + "'");
    }
    if (!operand_repeats_ && operands_seen == operand_count_) {
      throw usage_error("expected " + std::to_string(operand_count_) + " operands (" + operand_name_ + "), got another: '" +
                        std::string(arg) + "'");
    }
    if (operands_seen++ == 0) first_operand = arg;
    if (apply_operand_) apply_operand_(arg);
    ++next;
  }
  const std::size_t needed = operand_repeats_ ? 1 : operand_count_;
  if (!operand_name_.empty() && operands_seen < needed) throw usage_error("missing " + missing_);
  return true;
}

std::string command_line::synopsis() const {
  std::vector<std::string> items;
  for (const option_section& s : sections_) {
    for (const option& o : s.options) {
      std::string item = "[" + o.name + (o.value_name.empty() ? "" : " " + o.value_name) + "]";
      if (o.repeats) item += "...";
      items.push_back(std::move(item));
    }
  }
  if (command_words_ != nullptr) {
    items.emplace_back("[--]");
    items.push_back(operand_name_ + (operand_arguments_.empty() ? "" : " " + operand_arguments_));
  } else if (!operand_name_.empty()) {
    items.push_back(operand_name_ + (operand_repeats_ ? "..." : ""));
  }
  const std::string indent(std::string_view("usage: ").size() + invocation_.size() + 1, ' ');
  std::string text = invocation_;
  std::size_t line_length = std::string_view("usage: ").size() + text.size();
  for (const std::string& item : items) {
    if (line_length + 1 + item.size() > synopsis_width) {
      text += "\n" + indent + item;
      line_length = indent.size() + item.size();
    } else {
      text += " " + item;
      line_length += 1 + item.size();
    }
  }
  return text;
}

std::string command_line::options_help() const {
  std::string text;
  const auto entry = [&text](std::string label, std::string_view help) {
    label = "  " + label;
    if (label.size() + 1 > help_column) {
      text += label + "\n" + std::string(help_column, ' ');
    } else {
      text += label + std::string(help_column - label.size(), ' ');
    }
    for (std::size_t start = 0; start < help.size();) {
      const std::size_t end = std::min(help.find('\n', start), help.size());
      if (start > 0) text += std::string(help_column, ' ');
      text.append(help.substr(start, end - start)).append("\n");
      start = end + 1;
    }
  };
  for (const option_section& s : sections_) {
    if (!text.empty()) text += "\n";
    if (!s.title.empty()) text += s.title + ":\n";
    for (const option& o : s.options) entry(o.name + (o.value_name.empty() ? "" : " " + o.value_name), o.help);
  }
  text += "\n";
  entry("-h, --help", "Show this help.");
  return text;
}

}  // namespace regionprof::cli
