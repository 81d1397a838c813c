// read_job: a saved job report (`"kind": "regionprof_job"`) -> the job_report merge_ranks made. The
// rank profiles are read back into the one result model and joined again, so the job report is never
// held twice: the cross-rank figures and the job's warnings are recomputed by the one merge. And
// read_saved_report: either kind of saved report, by its `kind`, from one parse.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include "regionprof/job/job.hpp"
#include "regionprof/json/json_with_number_text.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "regionprof/saved/profile_value.hpp"

namespace regionprof {
namespace {

namespace json = boost::json;
using report_detail::json_location;

using saved_detail::present_member;

bool is_job_document(const json::value& document) {
  if (!document.is_object()) return false;
  const json::value* kind = present_member(document.get_object(), "kind");
  return kind != nullptr && kind->is_string() && kind->get_string() == "regionprof_job";
}

job_report job_of(const report_detail::json_with_number_text& parsed, const std::string& name) {
  const json_location root;
  if (!parsed.document.is_object()) throw profile_read_error(name, "", "not a regionprof job report (not an object)");
  if (!is_job_document(parsed.document)) {
    throw profile_read_error(name, "", "not a regionprof job report (no \"kind\": \"regionprof_job\")");
  }
  const json::object& top = parsed.document.get_object();
  const json::value* version = present_member(top, "schema_version");
  if (version == nullptr || !version->is_int64() || version->get_int64() != 1) {
    throw profile_read_error(name, "schema_version", "expected 1 (the job report schema this reader reads)");
  }
  const json::value* ranks = present_member(top, "ranks");
  if (ranks == nullptr || !ranks->is_array() || ranks->get_array().empty()) {
    throw profile_read_error(name, "ranks", "expected a non-empty array of rank profiles");
  }
  const json_location ranks_at = root.member("ranks");
  std::vector<named_profile> profiles;
  profiles.reserve(ranks->get_array().size());
  for (std::size_t i = 0; i < ranks->get_array().size(); ++i) {
    const json::value& entry = ranks->get_array()[i];
    const json_location at = ranks_at.element(i);
    if (!entry.is_object()) throw profile_read_error(name, at.text(), "expected an object (one rank)");
    const json::value* profile = present_member(entry.get_object(), "profile");
    if (profile == nullptr) throw profile_read_error(name, at.member("profile").text(), "required key missing");
    std::string file;
    if (const json::value* f = present_member(entry.get_object(), "file")) {
      if (!f->is_string()) throw profile_read_error(name, at.member("file").text(), "expected a string");
      file = std::string(f->get_string());
    }
    profiles.push_back({std::move(file), saved_detail::read_profile_value(*profile, at.member("profile"), name,
                                                                          parsed.double_texts)});
  }
  job_report job = merge_ranks(std::move(profiles));
  if (const json::value* created = present_member(top, "created_at"); created != nullptr && created->is_string()) {
    job.created_at = std::string(created->get_string());
  }
  return job;
}

}  // namespace

job_report read_job_text(std::string_view text, const std::string& name) { return job_of(saved_detail::parse_document(text, name), name); }

job_report read_job(const std::string& path) { return read_job_text(saved_detail::read_text_file(path), path); }

saved_report read_saved_report_text(std::string_view text, const std::string& name) {
  const report_detail::json_with_number_text parsed = saved_detail::parse_document(text, name);
  saved_report saved;
  if (is_job_document(parsed.document)) {
    saved.job = job_of(parsed, name);
  } else {
    saved.profile = saved_detail::read_profile_value(parsed.document, json_location(), name, parsed.double_texts);
  }
  return saved;
}

saved_report read_saved_report(const std::string& path) {
  return read_saved_report_text(saved_detail::read_text_file(path), path);
}

}  // namespace regionprof
