#include "py_options.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace regionprof::python {

using options::option;
using options::option_kind;
using options::option_value;

namespace {

[[noreturn]] void type_error(const option& o, const char* expected, nb::handle value) {
  const std::string type_name = nb::cast<std::string>(nb::handle(value.type()).attr("__name__"));
  const std::string shown = nb::cast<std::string>(nb::repr(value));
  throw nb::type_error((std::string(o.python) + " must be " + expected + ", not " + type_name + " (" + shown + ")").c_str());
}

bool is_int(nb::handle value) { return PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr()); }

/// A path keyword: a str or os.PathLike, `~` expanded.
std::string path_of(const option& o, nb::handle value) {
  const nb::module_ os = nb::module_::import_("os");
  if (!nb::isinstance<nb::str>(value) && !nb::isinstance(value, os.attr("PathLike"))) {
    type_error(o, "a str or os.PathLike", value);
  }
  nb::object text = os.attr("fspath")(value);
  if (!nb::isinstance<nb::str>(text)) type_error(o, "a str or os.PathLike", value);
  return nb::cast<std::string>(os.attr("path").attr("expanduser")(text));
}

/// `value` as the option's value; nullopt: None where it means the default (run marker, region rules).
std::optional<option_value> value_of(const option& o, nb::handle value) {
  const bool none = value.is_none();
  switch (o.kind) {
    case option_kind::count:
    case option_kind::optional_count: {
      if (none && o.kind == option_kind::optional_count) return option_value();
      if (!is_int(value)) type_error(o, o.kind == option_kind::count ? "an int" : "an int or None", value);
      if (nb::cast<bool>(value.attr("__lt__")(0))) {
        throw nb::value_error((std::string(o.python) + " must be at least " + std::to_string(o.min) + ", not " +
                               nb::cast<std::string>(nb::str(value)))
                                  .c_str());
      }
      const unsigned long long number = PyLong_AsUnsignedLongLong(value.ptr());
      if (PyErr_Occurred() != nullptr) {
        PyErr_Clear();
        throw nb::value_error((std::string(o.python) + " must be at most " + std::to_string(o.max) + ", not " +
                               nb::cast<std::string>(nb::str(value)))
                                  .c_str());
      }
      return static_cast<std::uint64_t>(number);
    }
    case option_kind::flag:
      if (!PyBool_Check(value.ptr())) type_error(o, "a bool", value);
      return value.ptr() == Py_True;
    case option_kind::optional_number:
      if (none) return option_value();
      if (!is_int(value) && !PyFloat_Check(value.ptr())) type_error(o, "a number or None", value);
      return nb::cast<double>(nb::float_(value));
    case option_kind::optional_path:
      if (none) return option_value();
      return path_of(o, value);
    case option_kind::run_marker:
      if (none) return std::nullopt;
      if (!nb::isinstance<nb::str>(value)) type_error(o, "a str (a regex)", value);
      return nb::cast<std::string>(value);
    case option_kind::region_rules: {
      if (none) return std::nullopt;
      const char* expected = "a list of 'REGEX=KIND' strings";
      if (nb::isinstance<nb::str>(value) || nb::isinstance<nb::bytes>(value) ||
          !nb::isinstance(value, nb::module_::import_("collections.abc").attr("Sequence"))) {
        type_error(o, expected, value);
      }
      std::vector<std::string> rules;
      for (nb::handle rule : value) {
        if (!nb::isinstance<nb::str>(rule)) type_error(o, expected, value);
        rules.push_back(nb::cast<std::string>(rule));
      }
      return rules;
    }
    case option_kind::graph_attribution:
      if (!nb::isinstance<nb::str>(value)) type_error(o, "'capture' or 'launch'", value);
      return nb::cast<std::string>(value);
  }
  type_error(o, "a value", value);
}

nb::object to_python(const option_value& value) {
  if (const auto* flag = std::get_if<bool>(&value)) return nb::bool_(*flag);
  if (const auto* number = std::get_if<std::uint64_t>(&value)) return nb::int_(*number);
  if (const auto* real = std::get_if<double>(&value)) return nb::float_(*real);
  if (const auto* text = std::get_if<std::string>(&value)) return nb::str(text->c_str());
  if (const auto* texts = std::get_if<std::vector<std::string>>(&value)) return nb::cast(*texts);
  return nb::none();
}

/// The options a Python function starts from.
profile_options defaults_of(std::string_view function) {
  return function == "profile" || function == "steps" ? profile_options{} : options::command_defaults();
}

}  // namespace

options::option_surface surface_of(std::string_view function) {
  if (function == "profile") return options::py_profile;
  if (function == "analyze") return options::py_analyze;
  if (function == "run") return options::py_run;
  if (function == "steps") return options::py_steps;
  throw nb::value_error(("no option table for '" + std::string(function) + "'").c_str());
}

profile_options options_from_python(std::string_view function, nb::handle given, profile_options base) {
  const options::option_surface surface = surface_of(function);
  for (auto [key, value] : nb::cast<nb::dict>(given)) {
    const std::string name = nb::cast<std::string>(key);
    const option* o = options::find_option(surface, name);
    if (o == nullptr) {
      throw nb::type_error((std::string(function) + "() got an unexpected keyword argument '" + name + "'").c_str());
    }
    if (const std::optional<option_value> converted = value_of(*o, value)) {
      options::set_option(base, *o, name, *converted);  // setting_error: a ValueError naming the keyword
    }
  }
  return base;
}

void add_options_api(nb::module_& m) {
  m.def(
      "option_table",
      [](const std::string& function) {
        const profile_options defaults = defaults_of(function);
        nb::list table;
        for (const option* o : options::options_of(surface_of(function))) {
          nb::dict entry;
          entry["name"] = std::string(o->python);
          entry["kind"] = std::string(options::to_string(o->kind));
          const bool rule_default = o->kind == option_kind::run_marker || o->kind == option_kind::region_rules;
          entry["default"] = rule_default ? nb::none() : to_python(o->get(defaults));
          entry["doc"] = std::string(o->doc);
          entry["flag"] = std::string(o->flag);
          table.append(entry);
        }
        return table;
      },
      nb::arg("function"),
      "The keyword options of regionprof.profile ('profile'), analyze or run, in declaration order: dicts of "
      "name, kind, default (None: the default rules or marker, or unset), doc and the command's flag.");
  m.def(
      "run_flags",
      [](nb::handle given) {
        const profile_options options = options_from_python("run", given, options::command_defaults());
        std::vector<std::string> flags;
        for (auto [key, value] : nb::cast<nb::dict>(given)) {
          const option& o = *options::find_option(options::py_run, nb::cast<std::string>(key));
          const option_value set = o.get(options);
          if (value.is_none() || std::holds_alternative<std::monostate>(set)) continue;
          if (o.kind == option_kind::flag) {
            if (std::get<bool>(set)) flags.emplace_back(o.flag);
          } else if (const auto* rules = std::get_if<std::vector<std::string>>(&set)) {
            for (const std::string& rule : *rules) flags.insert(flags.end(), {std::string(o.flag), rule});
          } else {
            flags.insert(flags.end(), {std::string(o.flag), options::option_text(o, set)});
          }
        }
        return nb::make_tuple(flags, writes_windows(options), options.processes);
      },
      nb::arg("options"),
      "regionprof run's flags for regionprof.run's keyword options (checked as regionprof.run names them), "
      "whether they ask for windows, and the process count.");
}

}  // namespace regionprof::python
