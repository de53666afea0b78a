import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for step in range(3):
    losses = [nn.functional.mse_loss(model(x), y)]
    for loss in losses:
        loss.backward()
    opt.zero_grad()  # want: SL203
    opt.step()
