import torch

w = torch.zeros(3, requires_grad=True)


class Config:
    def w(self):
        return 1


w -= 0.1
# gate case, finds: nothing
