// TorchScript models for the LibTorch benchmarks, built in C++ (torch::jit::Module + define), so no
// model file is needed.
#pragma once

#include <torch/script.h>

#include <cstdint>
#include <string>

namespace regionprof_bench {

inline torch::jit::Module scripted_linear(std::int64_t in, std::int64_t out) {
  torch::jit::Module linear("Linear");
  linear.register_parameter("weight", torch::randn({out, in}) / static_cast<double>(in), false);
  linear.register_parameter("bias", torch::randn({out}), false);
  linear.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  return linear;
}

inline torch::jit::Module scripted_gelu() {
  torch::jit::Module gelu("GELU");
  gelu.define("def forward(self, x):\n  return torch.gelu(x)\n");
  return gelu;
}

inline torch::jit::Module scripted_layer_norm(std::int64_t width) {
  torch::jit::Module norm("LayerNorm");
  norm.register_parameter("weight", torch::ones({width}), false);
  norm.register_parameter("bias", torch::zeros({width}), false);
  norm.define("def forward(self, x):\n  return torch.layer_norm(x, [" + std::to_string(width) +
              "], self.weight, self.bias, 1e-05, False)\n");
  return norm;
}

/// The model: embedding 1000x256, 4 blocks of Linear(256,256) + GELU + LayerNorm, head
/// Linear(256,1000). Input: int64 token ids of shape [batch]. 18 modules below the root.
inline torch::jit::Module scripted_mlp(std::int64_t vocabulary = 1000, std::int64_t width = 256,
                                       int blocks = 4) {
  torch::jit::Module embedding("Embedding");
  embedding.register_parameter("weight", torch::randn({vocabulary, width}), false);
  embedding.define("def forward(self, ids):\n  return torch.embedding(self.weight, ids)\n");

  torch::jit::Module root("MLP");
  root.register_module("embedding", embedding);
  std::string body = "def forward(self, ids):\n  x = self.embedding.forward(ids)\n";
  for (int i = 0; i < blocks; ++i) {
    torch::jit::Module block("Block");
    block.register_module("linear", scripted_linear(width, width));
    block.register_module("act", scripted_gelu());
    block.register_module("norm", scripted_layer_norm(width));
    block.define("def forward(self, x):\n  return self.norm.forward(self.act.forward(self.linear.forward(x)))\n");
    const std::string name = "block" + std::to_string(i);
    root.register_module(name, block);
    body += "  x = self." + name + ".forward(x)\n";
  }
  root.register_module("head", scripted_linear(width, vocabulary));
  body += "  return self.head.forward(x)\n";
  root.define(body);
  root.eval();
  return root;
}

/// Three Linear(8, 8) layers: so little work that the per-region cost shows.
inline torch::jit::Module scripted_tiny(int layers = 3, std::int64_t width = 8) {
  torch::jit::Module root("Tiny");
  std::string body = "def forward(self, x):\n";
  for (int i = 0; i < layers; ++i) {
    const std::string name = "layer" + std::to_string(i);
    root.register_module(name, scripted_linear(width, width));
    body += "  x = self." + name + ".forward(x)\n";
  }
  body += "  return x\n";
  root.define(body);
  root.eval();
  return root;
}

}  // namespace regionprof_bench
