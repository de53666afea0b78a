"""Features normalised under `torch.inference_mode()` are inference tensors: a model
trained on them cannot save them for backward, which raises (SL108)."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
X = torch.randn(64, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()

with torch.inference_mode():
    features = (X - X.mean(0)) / X.std(0)

loss = F.cross_entropy(model(features), y)
loss.backward()
print("loss:", loss.item())
