#!/usr/bin/python3
"""Exports a small MLP for Fashion-MNIST (784 -> 128 -> 10) as a TorchScript module for pacer.

    /usr/bin/python3 scripts/examples/export_mlp.py net.pt
    build/pacer run configs/fashion-mnist.toml --set model.name=torchscript \
        --set model.file=net.pt --set data.max_train=3000 --set max_steps=50

Needs Debian's python3-torch (apt-get install python3-torch), the same torch version (1.13) as
the libtorch pacer links against. pacer trains every parameter of the module, in the order of
module.parameters(), starting from the values saved here; forward must map a batch of rows
(rows x 784, in the parameters' dtype) to rows x 10 logits, and pacer applies cross-entropy.
"""
import sys

import torch
from torch import nn


class Mlp(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "net.pt"
    torch.manual_seed(0)
    model = Mlp(784, 128, 10)  # .double() here would train in float64
    torch.jit.script(model).save(path)
    count = sum(p.numel() for p in model.parameters())
    print(f"wrote {path}: {count} parameters, {next(model.parameters()).dtype}")


if __name__ == "__main__":
    main()
