# The correct twin of bad_torch_snippet_zero_grad_before_step.py.
import torch

for x, y in dataloader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
