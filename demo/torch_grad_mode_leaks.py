"""`evaluate()` turns gradients off globally and never turns them back on (SL106): the
first epoch trains, the evaluation after it leaks, and the second epoch's backward
raises (its loss has no graph)."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(64, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()


def evaluate(inputs, targets):
    model.eval()
    torch.set_grad_enabled(False)  # leaks to the caller
    acc = (model(inputs).argmax(1) == targets).float().mean().item()
    model.train()
    return acc


for epoch in range(3):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    print("epoch", epoch, "loss", loss.item(), "accuracy", evaluate(X, y))
