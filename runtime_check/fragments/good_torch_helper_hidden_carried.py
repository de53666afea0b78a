# The correct twin of bad_torch_helper_hidden_carried.py.
import torch


def train(model, loader, optimizer, criterion):
    hidden = model.init_hidden(4)
    for x, y in loader:
        optimizer.zero_grad()
        hidden = hidden.detach()
        out, hidden = model(x, hidden)
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
