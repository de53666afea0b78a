import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 1)


class Accumulate(nn.Module):
    def forward(self, total, loss):
        return total + loss  # want: SL201 (SL204 is reported at the call instead)


acc = Accumulate()
total = torch.zeros(())
for step in range(3):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    total = acc(total, loss)
print(total.item())
