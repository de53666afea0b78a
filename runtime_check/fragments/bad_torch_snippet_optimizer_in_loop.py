# verdict: confirmed:grads-differ
# Forum-post style, modelled on PyTorch-forum "Adam/momentum has no effect" threads where
# the optimizer is built inside the loop, so its state restarts every step.
import torch

for x, y in loader:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # expect: SL211
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
