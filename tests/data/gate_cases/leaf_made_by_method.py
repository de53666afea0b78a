import torch
w.requires_grad_()
w.add_(1)
# gate case, finds: SL301
