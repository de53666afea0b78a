import torch

X, y = torch.randn(32, 2), torch.randn(32, 1)
w = torch.zeros(2, 1, requires_grad=True)


def sgd(w, lr):
    w -= lr * w.grad  # want: SL301
    return w


for epoch in range(3):
    loss = ((X @ w - y) ** 2).mean()
    loss.backward()
    w = sgd(w, 0.1)
    w.grad.zero_()
