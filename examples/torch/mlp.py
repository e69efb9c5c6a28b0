"""A two-layer MLP from torch.nn: Linear(64, 128), ReLU, Linear(128, 10)."""
import torch

torch.manual_seed(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
example_inputs = (torch.randn(16, 64, generator=torch.Generator().manual_seed(2)),)
