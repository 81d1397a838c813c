// torch_mlp: a small LibTorch model profiled module by module through regionprof::profile.
//
// The model: an embedding, three blocks of Linear + GELU + LayerNorm, a Linear head, and glue outside
// any module (scaling the embedding, centring the features, log-softmax). Two variants with the same
// weights and the same output:
//   TorchScript (default)  the model built as torch::jit::Module and run with graph optimisation on;
//                          regions untuned_module:embedding, :blocks, :head (with --every-level also
//                          blocks.block0, blocks.block0.linear, ...).
//   --eager                the torch::nn model, instrumented in place: untuned_module:embedding,
//                          :blocks.0 ... :blocks.2, :head. The Sequential `blocks` is called from custom
//                          code, where no hook can see it, so its children take its place (they are
//                          wrapped); Block's forward carries REGIONPROF_MODULE_REGION(), and the
//                          built-in embedding and head are called through regionprof::torch::call.
// The report shows per run how the CPU time splits between the modules and the residual (the glue);
// with --ops, also the aten operators each module ran ("Ops per region"). With --train each run is a
// training step (forward, NLL loss against random targets, backward, SGD step, zero_grad) and each module's
// backward is a region of its own (`untuned_module_backward:<path>`, instrument_options::backward).
//
// Usage: torch_mlp [-o profile.json] [--eager] [--every-level] [--ops] [--train] [--runs N] [--batch N]
// Prints the Markdown report.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "command_line.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/torch/torch.hpp"

namespace {

constexpr std::int64_t vocabulary = 1000;
constexpr std::int64_t width = 128;
constexpr int block_count = 3;

// ---- Eager model ---------------------------------------------------------------------------------

struct BlockImpl : torch::nn::Module {
  BlockImpl()
      : linear(register_module("linear", torch::nn::Linear(width, width))),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})))) {}

  torch::Tensor forward(torch::Tensor x) {
    REGIONPROF_MODULE_REGION();  // this block's region, whenever it is instrumented
    return norm(torch::gelu(linear(x)));
  }

  torch::nn::Linear linear;
  torch::nn::LayerNorm norm;
};
TORCH_MODULE(Block);

/// The glue (scaling, centring, log-softmax) is outside any module.
struct TinyLMImpl : torch::nn::Module {
  TinyLMImpl()
      : embedding(register_module("embedding", torch::nn::Embedding(vocabulary, width))),
        blocks(register_module("blocks", torch::nn::Sequential())),
        head(register_module("head", torch::nn::Linear(width, vocabulary))) {
    for (int i = 0; i < block_count; ++i) blocks->push_back(Block());
  }

  torch::Tensor forward(torch::Tensor ids) {
    // regionprof::torch::call opens a built-in module's region around a direct call.
    torch::Tensor x = regionprof::torch::call(embedding, ids) * std::sqrt(static_cast<double>(width));
    x = blocks->forward(x);  // each block in its own region (the Sequential's children are wrapped)
    x = x - x.mean(-1, /*keepdim=*/true);
    return torch::log_softmax(regionprof::torch::call(head, x), -1);
  }

  torch::nn::Embedding embedding;
  torch::nn::Sequential blocks;
  torch::nn::Linear head;
};
TORCH_MODULE(TinyLM);

// ---- TorchScript model, same weights ---------------------------------------------------------------

torch::jit::Module scripted_linear(const torch::nn::Linear& eager) {
  torch::jit::Module linear("Linear");
  linear.register_parameter("weight", eager->weight, false);
  linear.register_parameter("bias", eager->bias, false);
  linear.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  return linear;
}

torch::jit::Module scripted_block(Block& eager) {
  torch::jit::Module gelu("GELU");
  gelu.define("def forward(self, x):\n  return torch.gelu(x)\n");
  torch::jit::Module norm("LayerNorm");
  norm.register_parameter("weight", eager->norm->weight, false);
  norm.register_parameter("bias", eager->norm->bias, false);
  norm.define("def forward(self, x):\n  return torch.layer_norm(x, [" + std::to_string(width) +
              "], self.weight, self.bias, 1e-05, False)\n");
  torch::jit::Module block("Block");
  block.register_module("linear", scripted_linear(eager->linear));
  block.register_module("act", gelu);
  block.register_module("norm", norm);
  block.define("def forward(self, x):\n  return self.norm.forward(self.act.forward(self.linear.forward(x)))\n");
  return block;
}

torch::jit::Module scripted_tiny_lm(TinyLM& eager) {
  torch::jit::Module embedding("Embedding");
  embedding.register_parameter("weight", eager->embedding->weight, false);
  embedding.define("def forward(self, ids):\n  return torch.embedding(self.weight, ids)\n");

  torch::jit::Module blocks("Blocks");
  std::string blocks_forward = "def forward(self, x):\n";
  for (int i = 0; i < block_count; ++i) {
    Block block(eager->blocks->ptr<BlockImpl>(static_cast<std::size_t>(i)));
    blocks.register_module("block" + std::to_string(i), scripted_block(block));
    blocks_forward += "  x = self.block" + std::to_string(i) + ".forward(x)\n";
  }
  blocks.define(blocks_forward + "  return x\n");

  torch::jit::Module root("TinyLM");
  root.register_module("embedding", embedding);
  root.register_module("blocks", blocks);
  root.register_module("head", scripted_linear(eager->head));
  root.define("def forward(self, ids):\n"
              "  x = self.embedding.forward(ids) * " + std::to_string(std::sqrt(static_cast<double>(width))) + "\n"
              "  x = self.blocks.forward(x)\n"
              "  x = x - x.mean(-1, keepdim=True)\n"
              "  return torch.log_softmax(self.head.forward(x), -1)\n");
  root.eval();
  return root;
}

// ---- Command line ----------------------------------------------------------------------------------

struct arguments {
  std::optional<std::string> json_path;
  bool eager = false;
  bool every_level = false;
  bool ops = false;
  bool train = false;
  std::size_t runs = 10;
  std::int64_t batch = 64;
};

arguments parse_arguments(int argc, char** argv) {
  arguments args;
  example::command_line line{"torch_mlp", "[-o profile.json] [--eager] [--every-level] [--ops] [--train] [--runs N] "
                                          "[--batch N]", argc, argv};
  while (line.next()) {
    const std::string_view flag = line.flag();
    if (flag == "-o" || flag == "--output") {
      args.json_path = std::string(line.value());
    } else if (flag == "--eager") {
      args.eager = true;
    } else if (flag == "--every-level") {
      args.every_level = true;
    } else if (flag == "--ops") {
      args.ops = true;
    } else if (flag == "--train") {
      args.train = true;
    } else if (flag == "--runs") {
      args.runs = line.positive();
    } else if (flag == "--batch") {
      args.batch = static_cast<std::int64_t>(line.positive());
    } else if (flag == "-h" || flag == "--help") {
      line.fail("profiles a small LibTorch model module by module and prints the report");
    } else {
      line.fail("unknown argument '" + std::string(flag) + "'");
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  const arguments args = parse_arguments(argc, argv);
  try {
    torch::manual_seed(0);
    at::set_num_threads(1);  // one intra-op thread: steadier per-run times on a small, shared machine
    std::optional<c10::InferenceMode> inference;  // inference: no autograd at all; training needs it
    if (!args.train) inference.emplace();
    TinyLM eager;
    eager->eval();
    torch::jit::Module scripted = scripted_tiny_lm(eager);  // the same parameter tensors
    const torch::Tensor ids = torch::randint(0, vocabulary, {args.batch}, torch::kLong);
    const torch::Tensor targets = torch::randint(0, vocabulary, {args.batch}, torch::kLong);
    torch::optim::SGD optimizer(eager->parameters(), torch::optim::SGDOptions(1e-3));

    regionprof::torch::instrument_options instrument_options;
    instrument_options.every_level = args.every_level;
    instrument_options.ops = args.ops;
    instrument_options.backward = args.train;
    regionprof::profile_options options;
    options.measured_runs = args.runs;

    torch::Tensor output;
    // One run: a forward, or with --train a whole training step.
    const auto run = [&](const auto& forward) {
      output = forward();
      if (!args.train) return;
      torch::nll_loss(output, targets).backward();
      optimizer.step();
      optimizer.zero_grad();
    };
    std::optional<regionprof::Profile> profile;
    if (args.eager) {
      auto handle = regionprof::torch::instrument(*eager, instrument_options);
      options.module_types = handle.module_types();
      options.target_type = "torch::nn::Module";
      profile.emplace(regionprof::profile([&] { run([&] { return eager->forward(ids); }); }, options));
    } else {
      auto handle = regionprof::torch::instrument(scripted, instrument_options);
      options.module_types = handle.module_types();
      options.target_type = "torch::jit::Module";
      profile.emplace(
          regionprof::profile([&] { run([&] { return handle.module().forward({ids}).toTensor(); }); }, options));
    }
    // Both variants compute the same function with the same weights.
    const torch::NoGradGuard no_grad;
    output = args.eager ? eager->forward(ids) : scripted.forward({ids}).toTensor();
    const torch::Tensor other = args.eager ? scripted.forward({ids}).toTensor() : eager->forward(ids);
    std::cout << regionprof::to_markdown(*profile);
    std::cout << "\nmax |eager - TorchScript| over the output: " << (output - other).abs().max().item<double>()
              << "\n";
    if (args.json_path) {
      regionprof::write_json(*profile, *args.json_path);
      std::cout << "wrote " << *args.json_path << "\n";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_mlp: %s\n", e.what());
    return 1;
  }
  return 0;
}
