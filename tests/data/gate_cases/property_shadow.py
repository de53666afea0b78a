import torch

with torch.no_grad():
    loss = model(x).sum()


class Result:
    @property
    def loss(self):
        return self._loss


loss.backward()
# gate case, finds: nothing
