# verdict: confirmed:grads-differ
# As pasted, modelled on PyTorch-forum "loss explodes after a few iterations" threads whose
# answer is the missing optimizer.zero_grad(): no import, nothing defined.
for epoch in range(2):
    for x, y in train_loader:
        output = model(x)
        loss = criterion(output, y)
        loss.backward()  # expect: SL202
        optimizer.step()
