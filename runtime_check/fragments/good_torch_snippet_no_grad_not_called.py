# The correct twin of bad_torch_snippet_no_grad_not_called.py.
import torch

model.eval()
with torch.no_grad():
    for x, y in test_loader:
        print(model(x).argmax(1))
