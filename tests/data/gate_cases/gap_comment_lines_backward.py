import torch
optimizer = torch.optim.SGD(params, lr=0.01)
for epoch in range(5):
    (loss.backward
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
    )()
    optimizer.step()
# gate case, finds: SL202
