import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def backprop(loss):
    loss.backward()  # want: SL105 (the decorator on `train_step` is the cause; SL101 is reported)


@torch.no_grad()
def train_step(x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    backprop(loss)
    opt.step()


train_step(torch.randn(8, 4), torch.randn(8, 1))
