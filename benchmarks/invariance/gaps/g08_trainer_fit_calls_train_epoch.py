import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)


class Trainer:
    def fit(self, total):
        for epoch in range(3):
            total = self.train_epoch(total)
        return total

    def train_epoch(self, total):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        total += loss  # want: SL201
        return total


print(Trainer().fit(0.0).item())
