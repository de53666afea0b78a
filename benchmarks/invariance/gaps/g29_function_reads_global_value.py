import torch

w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    loss = (w * 2).sum()


def step():
    loss.backward()  # want: SL101


step()
