# verdict: confirmed:error
# Project-helper style: a hand-written SGD update in a `sgd_update(model, lr)` helper,
# modelled on PyTorch-forum "a leaf Variable that requires grad is being used in an
# in-place operation" threads.
import torch


def train(model, loader, criterion, lr):
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        for p in model.parameters():
            p -= lr * p.grad  # expect: SL301
