# The correct twin of bad_torch_post_running_total_no_names.py: the running total is a number.
total_loss = 0
for x, y in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total_loss += loss.item()
print(total_loss / len(train_loader))
