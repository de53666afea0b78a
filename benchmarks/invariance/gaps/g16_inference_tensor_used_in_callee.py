import torch
from torch import nn

model = nn.Linear(5, 5)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 5)
with torch.inference_mode():
    mask = (torch.rand(4, 5) > 0.3).float()


def masked(model, x, mask):
    return model(x) * mask


for step in range(3):
    opt.zero_grad()
    out = masked(model, x, mask)  # want: SL108 (at the call, where the fix goes)
    out.pow(2).mean().backward()
    opt.step()
