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


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor) -> None:
    """One training step: forward, a loss, backward, the optimizer's step, zero_grad."""
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
