# The epoch helpers of the project (train.py calls them; nothing here does).
import torch


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()


def evaluate(model, loader):
    scores = []
    with torch.no_grad():
        for x, y in loader:
            out = model(x)  # expect: SL207
            scores.append(out.softmax(1).max(1).values.mean().item())
    return sum(scores) / len(scores)
