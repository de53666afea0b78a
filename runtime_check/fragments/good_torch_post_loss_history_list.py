# The correct twin of bad_torch_post_loss_history_list.py: the history keeps numbers.
loss_history = []
for epoch in range(2):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        loss_history.append(loss.item())
