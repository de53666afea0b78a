# verdict: confirmed:error
# Project-helper style: the `train(model, loader, optimizer, criterion)` of a char-RNN
# repository, modelled on PyTorch-forum truncated-BPTT threads (no repackage_hidden).
import torch


def train(model, loader, optimizer, criterion):
    hidden = model.init_hidden(4)
    for x, y in loader:
        optimizer.zero_grad()
        out, hidden = model(x, hidden)  # expect: SL204
        loss = criterion(out, y)
        loss.backward()
        optimizer.step()
