"""Small models the Python tests share, and their training step (imported by the test files as ``models``)."""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


class Vae(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Linear(8, 4)
        self.dec = nn.Linear(4, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.enc(x))

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return self.dec(z)

    def _private_helper(self) -> int:
        return 1


class LinearNormBlock(nn.Module):
    """``relu(n(l(x)))``: what inductor fuses (the layer norm and the relu) across a module's children."""

    def __init__(self, width: int = 32, out: int = 32) -> None:
        super().__init__()
        self.l = nn.Linear(width, out)
        self.n = nn.LayerNorm(out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.n(self.l(x)))


class Net(nn.Module):
    """Two blocks and the root's own ``* 2``, which inductor fuses into ``b``'s last kernel (the compiled
    tests' model; their module docstrings give inductor's kernels for it)."""

    def __init__(self, width: int = 32, narrow: int = 32) -> None:
        super().__init__()
        self.a = LinearNormBlock(width, width)
        self.b = LinearNormBlock(width, narrow)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x)) * 2


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor) -> None:
    """One training step: forward, a loss, backward, the optimizer's step, zero_grad."""
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
