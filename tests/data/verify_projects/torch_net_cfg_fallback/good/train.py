# entry: python train.py
from types import SimpleNamespace

import torch
from torch import nn

from engine import train_one_epoch
from models import Net


def main():
    torch.manual_seed(0)
    cfg = SimpleNamespace(in_features=12, hidden=24, classes=5)
    model = Net(cfg)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loader = [(torch.randn(8, cfg.in_features), torch.randint(0, cfg.classes, (8,))) for _ in range(4)]
    for epoch in range(2):
        loss = train_one_epoch(model, loader, optimizer, criterion)
        print(f"epoch {epoch}: train loss {float(loss):.3f}")


if __name__ == "__main__":
    main()
