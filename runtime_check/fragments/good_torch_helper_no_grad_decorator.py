# The correct twin of bad_torch_helper_no_grad_decorator.py.
import torch


def fit_batch(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
