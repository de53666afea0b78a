import torch
@(w := torch.ones(3, requires_grad=True)).register_hook
def g2(*a):
    a[0].sum().backward()
w.add_(1)
# gate case, finds: SL301
