"""`total_loss += loss` keeps every step's graph alive until the epoch ends (SL201):
memory grows with the number of steps; `loss.item()` keeps only the number."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(64, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()

total_loss = 0
for step in range(8):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    total_loss += loss
print("mean loss:", float(total_loss) / 8)
