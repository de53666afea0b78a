import torch
from torch import nn

model = nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)


def total(task_losses):
    return torch.tensor(task_losses).sum()  # want: SL206


out = model(x)
task_losses = [out[:, 0].pow(2).mean(), out[:, 1].abs().mean()]
loss = total(task_losses)
opt.zero_grad()
loss.backward()
opt.step()
