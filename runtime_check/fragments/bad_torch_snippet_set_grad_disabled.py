# verdict: confirmed:error
# Forum-post style, modelled on PyTorch-forum threads where an inference cell ran
# `torch.set_grad_enabled(False)` and the training cell pasted after it fails.
import torch

torch.set_grad_enabled(False)
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()  # expect: SL101
    optimizer.step()
