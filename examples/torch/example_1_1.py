"""Example 1.1 of the text: sum((x + y).relu() * 2, -1) on two 64x128 inputs
(Listing 5.1 is its operator-level graph)."""
import torch


def model(primals_1, primals_2):
    return ((primals_1 + primals_2).relu() * 2).sum(-1)


g = torch.Generator().manual_seed(11)
example_inputs = (torch.randn(64, 128, generator=g), torch.randn(64, 128, generator=g))
