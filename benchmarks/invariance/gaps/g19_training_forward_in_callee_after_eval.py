import torch
from torch import nn

model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
model.eval()
with torch.no_grad():
    print("baseline", (model(x).argmax(1) == y).float().mean().item())


def forward(model, x):
    return model(x)  # want: SL207 (trains in eval mode)


for step in range(3):
    loss = nn.functional.cross_entropy(forward(model, x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
