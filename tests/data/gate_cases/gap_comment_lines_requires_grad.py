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
print(x.grad)  # its gradient is wanted: the name should hold the leaf
# gate case, finds: SL302
