# verdict: confirmed:grads-differ
# Project-helper style: a custom loss helper that goes through `.item()` and wraps the
# number back into a tensor; modelled on PyTorch-forum "my model's weights never change"
# threads (`torch.tensor(loss.item(), requires_grad=True)`).
import torch


def train_epoch(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss = torch.tensor(loss.item(), requires_grad=True)  # expect: SL206
        loss.backward()
        optimizer.step()
