# The correct twin of bad_torch_helper_evaluate_leaves_eval.py: training mode each epoch.
import torch


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return sum(model(x).argmax(1).eq(y).sum().item() for x, y in loader)


def fit(model, train_loader, val_loader, optimizer, criterion):
    for epoch in range(3):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, val_loader))
