# verdict: confirmed:grads-differ
# Forum-post style, modelled on PyTorch-forum "model does not learn at all" threads
# where zero_grad sits between backward and step (every step sees zero gradients).
import torch

for x, y in dataloader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.zero_grad()  # expect: SL203
    optimizer.step()
