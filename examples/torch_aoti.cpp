// torch_aoti: an AOTInductor package run from LibTorch, profiled module by module through regionprof::profile.
//
// Make the package in Python with regionprof.torch.aoti_compile_and_package (docs/torch.md, "AOTInductor"):
// it is torch's aoti_compile_and_package plus the record of which module each kernel belongs to. Here the
// package is loaded with torch::inductor::AOTIModelPackageLoader, as a deployment would, and
// regionprof::torch::instrument_package makes its modules regions: each kernel call one instance of its
// module's region. The input is one tensor of the given shape, random with a fixed seed: floats, or with
// --int64-below N integers in [0, N) (token ids for a language model).
//
// Usage: torch_aoti PACKAGE --input-shape 8,32 [--int64-below N] [-o profile.json] [--model NAME]
//                   [--every-level] [--ops] [--runs N]
// Prints the Markdown report.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "command_line.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/torch/torch.hpp"

namespace {

struct arguments {
  std::string package;
  std::vector<std::int64_t> input_shape;
  std::int64_t int64_below = 0;  // 0: a float input
  std::optional<std::string> json_path;
  std::string model = "model";
  bool every_level = false;
  bool ops = false;
  std::size_t runs = 10;
};

/// `8,32` as {8, 32}.
std::vector<std::int64_t> shape(example::command_line& line) {
  std::string_view text = line.value();
  std::vector<std::int64_t> dims;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view dim = text.substr(0, comma);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
    if (error != std::errc{} || end != dim.data() + dim.size() || value <= 0) {
      line.fail("--input-shape needs positive dimensions separated by commas, e.g. 8,32");
    }
    dims.push_back(value);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  if (dims.empty()) line.fail("--input-shape needs dimensions, e.g. 8,32");
  return dims;
}

arguments parse_arguments(int argc, char** argv) {
  arguments args;
  example::command_line line{"torch_aoti", "PACKAGE --input-shape D0,D1,... [--int64-below N] [-o profile.json] "
                                           "[--model NAME] [--every-level] [--ops] [--runs N]", argc, argv};
  while (line.next()) {
    const std::string_view flag = line.flag();
    if (flag == "-o" || flag == "--output") {
      args.json_path = std::string(line.value());
    } else if (flag == "--input-shape") {
      args.input_shape = shape(line);
    } else if (flag == "--int64-below") {
      args.int64_below = static_cast<std::int64_t>(line.positive());
    } else if (flag == "--model") {
      args.model = std::string(line.value());
    } else if (flag == "--every-level") {
      args.every_level = true;
    } else if (flag == "--ops") {
      args.ops = true;
    } else if (flag == "--runs") {
      args.runs = line.positive();
    } else if (flag == "-h" || flag == "--help") {
      line.fail("profiles an AOTInductor package module by module and prints the report");
    } else if (!flag.empty() && flag[0] != '-' && args.package.empty()) {
      args.package = std::string(flag);
    } else {
      line.fail("unknown argument '" + std::string(flag) + "'");
    }
  }
  if (args.package.empty()) line.fail("no package given");
  if (args.input_shape.empty()) line.fail("--input-shape is required");
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  const arguments args = parse_arguments(argc, argv);
  try {
    torch::manual_seed(0);
    at::set_num_threads(1);  // one intra-op thread: steadier per-run times on a small, shared machine
    const c10::InferenceMode inference;
    // Instrumented first: a package that carries no module record is refused before anything loads.
    regionprof::torch::instrument_options instrument_options;
    instrument_options.every_level = args.every_level;
    instrument_options.ops = args.ops;
    auto handle = regionprof::torch::instrument_package(args.package, instrument_options, args.model);
    torch::inductor::AOTIModelPackageLoader loader(args.package, args.model);
    const std::vector<at::Tensor> inputs{args.int64_below > 0
                                             ? torch::randint(0, args.int64_below, args.input_shape, torch::kLong)
                                             : torch::randn(args.input_shape)};

    regionprof::profile_options options;
    options.measured_runs = args.runs;
    options.module_types = handle.module_types();
    options.warnings = handle.warnings();
    options.target_type = "torch::inductor::AOTIModelPackageLoader";
    const regionprof::Profile profile = regionprof::profile([&] { loader.run(inputs); }, options);
    std::cout << regionprof::to_markdown(profile);
    if (args.json_path) {
      regionprof::write_json(profile, *args.json_path);
      std::cout << "wrote " << *args.json_path << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_aoti: %s\n", e.what());
    return 1;
  }
  return 0;
}
