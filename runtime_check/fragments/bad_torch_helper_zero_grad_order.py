# verdict: confirmed:grads-differ
# Project-helper style: `train_one_epoch(model, loader, optimizer, criterion)` where the
# zero_grad was moved "to clean up" after backward; modelled on PyTorch-forum "loss does
# not decrease at all" threads.
import torch


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()  # expect: SL203
        optimizer.step()
