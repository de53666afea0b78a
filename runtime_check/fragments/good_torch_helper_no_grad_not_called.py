# The correct twin of bad_torch_helper_no_grad_not_called.py: `torch.no_grad()` called.
import torch


def evaluate(model, val_loader, criterion):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in val_loader:
            total += criterion(model(x), y).item()
    return total / len(val_loader)
