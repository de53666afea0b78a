# verdict: confirmed:outputs-differ
# Project-helper style, modelled on giotto-ai/giotto-deep#40 and SeanNaren/
# deepspeech.pytorch#22 (evaluation and train/eval mode): `fit` calls an `evaluate` that
# sets `model.eval()` each epoch and never turns training mode back on.
import torch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader)


def fit(model, train_loader, val_loader, optimizer, criterion):
    model.train()
    for epoch in range(3):
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, val_loader))  # expect: SL207
