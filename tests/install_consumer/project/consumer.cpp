// A program built against the installed package: emits a region and checks a rule.
#include <cstdio>

#include <regionprof/analysis/analysis.hpp>
#include <regionprof/regions/regions.hpp>
#include <regionprof/trace/trace.hpp>

int main() {
  regionprof::trace t;
  const auto id = t.strings.intern("layer_0");
  const auto rule = regionprof::parse_region_arg("layer_(.*)=layer");
  const regionprof::registered_region region{"layer", "0"};
  { regionprof::scoped_region scope{region}; }
  const bool ok = t.strings.view(id) == "layer_0" && rule.kind == "layer" && region.range_name() == "layer:0";
  std::puts(ok ? "consumer ok" : "consumer FAILED");
  return ok ? 0 : 1;
}
