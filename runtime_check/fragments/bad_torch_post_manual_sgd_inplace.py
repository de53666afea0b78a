# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum "a leaf Variable that requires grad is being used in
# an in-place operation" threads: a hand-written SGD step on a weight tensor.
w = torch.randn(16, 1, requires_grad=True)
for x, y in train_loader:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w -= 0.01 * w.grad  # expect: SL301
    w.grad.zero_()
