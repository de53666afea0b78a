import torch
def float(m, o, x):
    x.add_(1)
@float(model, opt, torch.randn(3, requires_grad=True))
def g0_0(*a):
    pass
# gate case, finds: SL301
