# The correct twin of bad_torch_helper_manual_sgd.py.
import torch


def train(model, loader, criterion, lr):
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
