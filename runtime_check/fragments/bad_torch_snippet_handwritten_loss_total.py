# verdict: confirmed:graph-retained
# Forum-post style, modelled on PyTorch-forum regression questions ("memory keeps growing
# in my training loop"): the loss is written by hand, so nothing names its kind (the
# targets must be floats shaped like the output), and the loss tensor is summed.
import torch

epoch_loss = 0
for x, y in loader:
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    epoch_loss += loss  # expect: SL201
print(epoch_loss)
