"""A training step decorated with `@torch.no_grad()` (copied from an evaluation
helper): its loss has no graph, and backward raises (SL105)."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(64, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()


@torch.no_grad()  # copied from evaluate(): wrong on a training step
def train_step(inputs, targets):
    opt.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    opt.step()
    return loss.item()


for step in range(5):
    print("loss:", train_step(X, y))
