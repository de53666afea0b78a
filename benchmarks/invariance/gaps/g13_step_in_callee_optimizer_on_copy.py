import copy

import torch
from torch import nn

pretrained = nn.Linear(4, 1)
opt = torch.optim.SGD(pretrained.parameters(), lr=0.1)
model = copy.deepcopy(pretrained)
x, y = torch.randn(8, 4), torch.randn(8, 1)


def update(opt):
    opt.step()


for epoch in range(3):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    update(opt)  # want: SL208 (at the call: the helper is fine, its call is misplaced)
