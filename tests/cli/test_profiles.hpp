// Profiles of examples/cpu_pipeline shared by the diff and report tests: two separate processes of the
// same build, started together, 20 measured runs each, written once per test process.
#pragma once

#include <string>

namespace cli_test {

/// build/bin/cpu_pipeline --runs 20 -o <temp>/pipeline_a.json (written on first use, with B).
const std::string& pipeline_profile_a();
/// A second, separate run of the same program: pipeline_b.json.
const std::string& pipeline_profile_b();

}  // namespace cli_test
