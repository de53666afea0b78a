# verdict: confirmed:error
# Forum-post style, modelled on PyTorch-forum "element 0 of tensors does not require
# grad and does not have a grad_fn" threads: the loss is computed under no_grad.
import torch

for x, y in loader:
    optimizer.zero_grad()
    with torch.no_grad():
        out = model(x)
        loss = criterion(out, y)
    loss.backward()  # expect: SL101
    optimizer.step()
