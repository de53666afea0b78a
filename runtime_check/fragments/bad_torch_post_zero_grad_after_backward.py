# verdict: confirmed:grads-differ
# As pasted, modelled on PyTorch-forum "my model does not learn, loss stays the same"
# threads: zero_grad() sits between backward() and step().
for x, y in train_loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()  # expect: SL203
    optimizer.step()
