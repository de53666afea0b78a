import torch

w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    loss = (w * 2).sum()


def run_step(fn, *args):
    return fn(*args)


def step(loss):
    loss.backward()  # want: SL101


run_step(step, loss)
