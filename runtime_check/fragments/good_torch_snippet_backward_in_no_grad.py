# The correct twin of bad_torch_snippet_backward_in_no_grad.py.
import torch

for x, y in loader:
    optimizer.zero_grad()
    out = model(x)
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
