# The correct twin of bad_torch_snippet_hidden_carried.py: the state is detached.
import torch

hidden = model.init_hidden(4)
for x, y in train_loader:
    optimizer.zero_grad()
    hidden = hidden.detach()
    output, hidden = model(x, hidden)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
