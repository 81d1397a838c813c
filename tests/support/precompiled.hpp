// The headers most test files include, precompiled once for every test program (tests/CMakeLists.txt):
// at -O0 parsing them was about two thirds of a test file's compile (tests/report/test_json_report.cpp:
// 5.8 s of 8 s). Only headers from outside the project: a change to regionprof rebuilds no precompiled
// header. A file that defines BOOST_TEST_MODULE includes Boost.Test itself, after the define, and is
// compiled without this header.
#pragma once

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
