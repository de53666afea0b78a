# verdict: confirmed:error
# Project-helper style, modelled on PJLab-ADG/nr3d_lib#12 ("torch.no_grad needs to be
# instantiated with parenthesis"): an `evaluate` helper opens the class, not an instance.
import torch


def evaluate(model, val_loader, criterion):
    model.eval()
    total = 0.0
    with torch.no_grad:  # expect: SL107
        for x, y in val_loader:
            total += criterion(model(x), y).item()
    return total / len(val_loader)
