# verdict: confirmed:grads-differ
# Forum-post style, modelled on PyTorch-forum "loss goes up / explodes after a few
# iterations" threads where the loop never calls zero_grad (gradients accumulate).
import torch

for epoch in range(num_epochs):
    for data, target in loader:
        output = model(data)
        loss = criterion(output, target)
        loss.backward()  # expect: SL202
        optimizer.step()
