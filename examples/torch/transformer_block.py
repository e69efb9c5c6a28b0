"""A pre-norm transformer block from torch.nn: single-head attention (q, k, v
projections, softmax(q k^T / sqrt(d)) v, output projection), layer norm,
a GELU MLP, residuals. Batch 2, sequence 16, width 32."""
import math

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(d)
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Linear(d, d)
        self.v = torch.nn.Linear(d, d)
        self.o = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, hidden)
        self.fc2 = torch.nn.Linear(hidden, d)
        self.d = d

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        att = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d), dim=-1)
        x = x + self.o(att @ v)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


torch.manual_seed(3)
model = Block()
example_inputs = (torch.randn(2, 16, 32, generator=torch.Generator().manual_seed(4)),)
