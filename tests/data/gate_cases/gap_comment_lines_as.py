import torch
from torch.autograd import (backward
     # 0
     # 1
     # 2
     # 3
     # 4
     # 5
     # 6
     # 7
     # 8
     # 9
     # 10
     # 11
     # 12
     # 13
     # 14
     # 15
     as bw)
optimizer = torch.optim.SGD(params, lr=0.01)
for epoch in range(5):
    bw(loss)
    optimizer.step()
# gate case, finds: SL202
