"""An LSTM's state carried from one training step to the next with its graph: the
second backward goes through the first step's freed graph and raises (SL204)."""
import torch
from torch import nn

torch.manual_seed(0)
lstm = nn.LSTM(3, 5)
head = nn.Linear(5, 1)
opt = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
state = None
for step in range(3):
    opt.zero_grad()
    out, state = lstm(torch.randn(4, 2, 3), state)
    loss = head(out).pow(2).mean()
    loss.backward()
    opt.step()
    print("step", step, "loss", round(loss.item(), 4))
