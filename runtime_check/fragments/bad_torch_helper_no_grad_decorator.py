# verdict: confirmed:error
# Project-helper style: a `fit_batch` decorated with @torch.no_grad() copied from the
# predict helper next to it; modelled on forum threads where the decorator was pasted
# onto the training step.
import torch


@torch.no_grad()
def fit_batch(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()  # expect: SL105
    optimizer.step()
    return loss.item()
