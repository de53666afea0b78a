import torch
from torch import nn

gen, disc = nn.Linear(3, 4), nn.Linear(4, 1)
opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)


def critic_loss(disc, fake, real):
    return disc(fake).mean() - disc(real).mean()  # want: SL205


for step in range(3):
    real = torch.randn(8, 4)
    fake = gen(torch.randn(8, 3))
    opt_d.zero_grad()
    loss_d = critic_loss(disc, fake, real)
    loss_d.backward()
    opt_d.step()
