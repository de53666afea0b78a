# The correct twin of bad_torch_snippet_no_zero_grad.py.
import torch

for epoch in range(num_epochs):
    for data, target in loader:
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
