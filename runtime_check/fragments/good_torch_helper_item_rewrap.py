# The correct twin of bad_torch_helper_item_rewrap.py.
import torch


def train_epoch(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
