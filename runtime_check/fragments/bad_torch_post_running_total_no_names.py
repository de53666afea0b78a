# verdict: confirmed:graph-retained
# As pasted, modelled on the PyTorch FAQ "Don't accumulate history across your training
# loop" (docs/notes/faq.html) and the forum threads it answers: not a single framework
# name in the post, only PyTorch's loop.
total_loss = 0
for x, y in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: SL201
print(total_loss / len(train_loader))
