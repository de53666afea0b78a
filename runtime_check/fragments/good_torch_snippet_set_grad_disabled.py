# The correct twin of bad_torch_snippet_set_grad_disabled.py.
import torch

for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
