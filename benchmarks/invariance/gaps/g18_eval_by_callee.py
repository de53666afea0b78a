import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)


def to_eval(model):
    model.eval()


for epoch in range(2):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    to_eval(model)  # want: SL207 (at the call, where the fix goes)
    with torch.no_grad():
        print(nn.functional.mse_loss(model(x), y).item())
