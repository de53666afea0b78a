import torch
from torch import nn

model = nn.Linear(4, 1)
x, y = torch.randn(8, 4), torch.randn(8, 1)


def make_opt(model):
    return torch.optim.Adam(model.parameters(), lr=1e-3)  # want: SL211


for step in range(3):
    opt = make_opt(model)
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
