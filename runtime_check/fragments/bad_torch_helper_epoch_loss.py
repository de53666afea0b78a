# verdict: confirmed:graph-retained
# Project-helper style (an `engine.py` train_one_epoch as in many classification
# repositories), modelled on the same forum memory-growth threads: the epoch loss it
# returns is a tensor holding every batch's graph.
import torch


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    running = 0.0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running = running + loss  # expect: SL201
    return running / len(loader)
