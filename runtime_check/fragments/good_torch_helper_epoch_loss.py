# The correct twin of bad_torch_helper_epoch_loss.py.
import torch


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    running = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running = running + loss.item()
    return running / len(loader)
