# The correct twin of bad_torch_post_optimizer_each_epoch.py: the optimizer is built once.
optimizer = optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
