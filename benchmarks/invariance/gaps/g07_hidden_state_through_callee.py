import torch
from torch import nn

rnn = nn.GRU(4, 6)
head = nn.Linear(6, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
h = torch.zeros(1, 2, 6)


def advance(chunk, h):
    out, h = rnn(chunk, h)  # want: SL204
    return out, h


for t in range(3):
    out, h = advance(torch.randn(5, 2, 4), h)
    loss = head(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
