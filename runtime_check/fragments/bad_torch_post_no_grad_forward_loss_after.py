# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum "element 0 of tensors does not require grad and
# does not have a grad_fn" threads (issue 41's example): the forward pass was put under
# no_grad "to save memory" and the loss computed after it. No import, nothing defined.
for x, y in train_loader:
    with torch.no_grad():
        out = model(x)
    loss = criterion(out, y)
    optimizer.zero_grad()
    loss.backward()  # expect: SL101
    optimizer.step()
