# The correct twin of bad_torch_snippet_pgd_delta_inplace.py: the step under no_grad.
import torch

delta = torch.zeros_like(x, requires_grad=True)
for step in range(5):
    loss = criterion(model(x + delta), y)
    loss.backward()
    with torch.no_grad():
        delta += alpha * delta.grad.sign()
    delta.grad.zero_()
print(delta.abs().max())
