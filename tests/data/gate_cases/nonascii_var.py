import torch

权重 = torch.zeros(3, requires_grad=True)
权重 -= 0.1
# gate case, finds: SL301
