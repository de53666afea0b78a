# The correct twin of bad_torch_post_manual_sgd_inplace.py: the update runs under no_grad().
w = torch.randn(16, 1, requires_grad=True)
for x, y in train_loader:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.01 * w.grad
    w.grad.zero_()
