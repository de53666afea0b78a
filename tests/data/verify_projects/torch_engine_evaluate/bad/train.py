# entry: python train.py
import torch
from torch.utils.data import DataLoader, TensorDataset

from engine import evaluate, train_one_epoch
from models import Net


def main():
    torch.manual_seed(0)
    device = torch.device("cpu")
    model = Net(num_classes=4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(32, 20), torch.randint(0, 4, (32,)))
    train_loader = DataLoader(data, batch_size=8, shuffle=True)
    val_loader = DataLoader(data, batch_size=8)
    for epoch in range(2):
        train_one_epoch(model, train_loader, optimizer, device)
        loss, correct = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: val loss {loss:.3f}, {correct} correct")


if __name__ == "__main__":
    main()
