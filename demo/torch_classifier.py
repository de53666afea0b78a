"""A small PyTorch classifier with grad-mode scope bugs.

Run it: `with torch.no_grad:` raises TypeError; fix that and `evaluate` leaks
`set_grad_enabled(False)` into the training loop, whose step is decorated with
`@torch.no_grad()` anyway and crashes on backward.
"""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(64, 4)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()


def evaluate(inputs, targets):
    model.eval()
    torch.set_grad_enabled(False)  # leaks to the caller
    acc = (model(inputs).argmax(1) == targets).float().mean().item()
    model.train()
    return acc


@torch.no_grad()  # copied from evaluate(): wrong on a training step
def train_step(inputs, targets):
    opt.zero_grad()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    opt.step()
    return loss.item()


def predict(inputs):
    model.eval()
    return model(inputs).softmax(-1)


with torch.inference_mode():
    features = (X - X.mean(0)) / X.std(0)

print("accuracy before:", evaluate(X, y))
with torch.no_grad:
    print("probabilities:", predict(X[:2]))
for step in range(5):
    print("loss:", train_step(X, y))

# Fine-tune on the normalised features (made under inference_mode: cannot be saved for backward).
loss = F.cross_entropy(model(features), y)
loss.backward()
