import torch
from torch import nn

model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(8, 3), torch.randn(8, 1)


class SquaredMean(nn.Module):
    def forward(self, err):
        return (err ** 2).mean()


criterion = SquaredMean()
for step in range(2):
    opt.zero_grad()
    pred = model(x)
    with torch.inference_mode():
        err = pred - y
    loss = criterion(err)  # want: none (SL108 is reported: nothing here saves err for backward)
    loss.backward()  # want: SL101
    opt.step()
