# verdict: confirmed:error
# Forum-post style, modelled on discuss.pytorch.org/t/inplace-operation-changes-is-leaf-
# attribute/120297 (`c += 1` on a tensor that requires grad): a PGD-style perturbation is
# stepped in place with autograd still recording.
import torch

delta = torch.zeros_like(x, requires_grad=True)
for step in range(5):
    loss = criterion(model(x + delta), y)
    loss.backward()
    delta += alpha * delta.grad.sign()  # expect: SL301
    delta.grad.zero_()
print(delta.abs().max())
