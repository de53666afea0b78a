import torch
x = torch.randn(5, requires_grad
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
     =True).double()
y = (x.sin() * x).sum()
# gate case, finds: SL302
