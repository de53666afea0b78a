# verdict: confirmed:grads-differ
# As pasted, modelled on PyTorch-forum "Adam does not converge / loss jumps at every epoch"
# threads: the optimizer is built again at the start of every epoch.
for epoch in range(3):
    optimizer = optim.Adam(model.parameters(), lr=1e-3)  # expect: SL211
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
