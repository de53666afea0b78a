# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum "Trying to backward through the graph a second time"
# threads about LSTMs: the hidden state is carried from batch to batch, never detached.
hidden = None
for x, y in train_loader:
    optimizer.zero_grad()
    out, hidden = rnn(x, hidden)  # expect: SL204
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
