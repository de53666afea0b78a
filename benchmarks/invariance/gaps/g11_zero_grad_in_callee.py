import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)


def reset(opt):
    opt.zero_grad()


for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    reset(opt)  # want: SL203 (at the call: the helper is fine, its call is misplaced)
    opt.step()
