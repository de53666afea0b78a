# The correct twin of bad_torch_post_no_grad_forward_loss_after.py: the forward pass records.
for x, y in train_loader:
    out = model(x)
    loss = criterion(out, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
