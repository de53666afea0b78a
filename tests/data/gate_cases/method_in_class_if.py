import torch
class A:
    if True:
        def m(self, y):
            y.sum().backward()
    def b(self, x):
        w = torch.ones(2, requires_grad=True)
        return self.m((w * x).detach())
# gate case, finds: SL206
