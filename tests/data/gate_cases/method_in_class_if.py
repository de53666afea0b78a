import torch
class A:
    if True:
        def m(self, y):
            y.sum().backward()
    def b(self, x):
        return self.m(x.detach())
# gate case, finds: SL206
