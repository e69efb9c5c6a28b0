"""Cross-entropy loss of a linear classifier from torch.nn: mean over a batch
of 8 of -log softmax(x W^T + b)[target], 10 classes."""
import torch
import torch.nn.functional as F


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(20, 10)

    def forward(self, x, target):
        return F.cross_entropy(self.fc(x), target)


torch.manual_seed(5)
model = Classifier()
g = torch.Generator().manual_seed(6)
example_inputs = (torch.randn(8, 20, generator=g), torch.randint(0, 10, (8,), generator=g))
