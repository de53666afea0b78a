# The correct twin of bad_torch_post_zero_grad_after_backward.py: zero_grad() before the forward pass.
for x, y in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
