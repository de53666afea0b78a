import torch

w = torch.randn(3, requires_grad=True)
loss = (w * 2).sum()


def backprop(loss):
    loss.backward()  # want: SL102


with torch.no_grad():
    backprop(loss)
