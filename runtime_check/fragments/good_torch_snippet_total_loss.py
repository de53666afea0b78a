# The correct twin of bad_torch_snippet_total_loss.py: the running total is a number.
import torch

for epoch in range(2):
    total_loss = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print(epoch, total_loss)
