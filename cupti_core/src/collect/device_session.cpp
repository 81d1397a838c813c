// Placeholder until the CUPTI collector lands (issue 5): no device tracing, said in the report.
#include "regionprof/device_session.hpp"

namespace regionprof {
namespace {

class unavailable_session final : public device_session {
 public:
  bool available() const override { return false; }
  std::string unavailable_reason() const override { return "this build has no CUPTI collector yet"; }
  void start() override {}
  void synchronize() override {}
  void stop(trace& out) override {
    out.warnings.push_back({warning_code::device_tracing_unavailable, warning_source::cupti,
                            "device tracing unavailable: " + unavailable_reason() + "; the profile is CPU-only"});
  }
};

}  // namespace

std::unique_ptr<device_session> make_device_session(const device_options&) {
  return std::make_unique<unavailable_session>();
}

}  // namespace regionprof
