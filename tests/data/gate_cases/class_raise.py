import torch


class Config:
    raise RuntimeError("not importable")


model = torch.nn.Linear(2, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in range(3):
    loss = model(x).sum()
    loss.backward()
    opt.step()
# gate case, finds: nothing
