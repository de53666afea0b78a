import torch
w = torch.zeros(3, requires_grad=True)
def helper(m, o, x):
    x -= 0.1 * x.grad
@helper(model, opt, w)
def g0_0(*a):
    pass
# gate case, finds: SL301
