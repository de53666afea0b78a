import torch
from torch.nn.functional import cross_entropy as xent

model = torch.nn.Linear(2, 2)
total = 0
for x, y in data:
    l = xent(model(x), y)
    total += l
# gate case, finds: SL201
