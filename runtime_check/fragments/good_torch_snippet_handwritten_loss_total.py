# The correct twin of bad_torch_snippet_handwritten_loss_total.py.
import torch

epoch_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    epoch_loss += loss.item()
print(epoch_loss)
