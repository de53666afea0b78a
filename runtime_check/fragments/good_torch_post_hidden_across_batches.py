# The correct twin of bad_torch_post_hidden_across_batches.py: the state is detached before each batch.
hidden = None
for x, y in train_loader:
    optimizer.zero_grad()
    if hidden is not None:
        hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
