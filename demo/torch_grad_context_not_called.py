"""`with torch.no_grad:` without the call raises TypeError when the `with` runs (SL107)."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
X = torch.randn(16, 4)

with torch.no_grad:
    probabilities = model(X).softmax(-1)
print("probabilities:", probabilities[:2])
