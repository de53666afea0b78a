# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum "loss.backward() fails after I evaluate first"
# threads: torch.set_grad_enabled(False) switched off for a sanity evaluation, never back,
# so the loss of the training loop has no graph.
torch.set_grad_enabled(False)
print(criterion(model(val_x), val_y).item())
for x, y in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()  # expect: SL101
    optimizer.step()
