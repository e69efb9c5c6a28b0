"""Example 5.1 of the text: y = sum(gelu(x @ W)), x 32x64, W 64x64 a
parameter. `backward = True`: the exporter also writes the joint graph
(forward and the gradient of y with respect to W, as Listing 5.2)."""
import torch
import torch.nn.functional as F


class Example51(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(51)
        self.W = torch.nn.Parameter(torch.randn(64, 64, generator=g) / 8)

    def forward(self, x):
        return F.gelu(x @ self.W).sum()


model = Example51()
example_inputs = (torch.randn(32, 64, generator=torch.Generator().manual_seed(52)),)
backward = True
