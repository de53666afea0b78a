# verdict: confirmed:grads-differ
# Forum-post style, modelled on NaJaeMin92/pytorch-DANN#1 ("optim was repeatedly defined
# in for loop"): the optimizer is rebuilt every batch to apply a progress-dependent
# learning rate, so its momentum restarts each step.
import torch
import torch.optim as optim

for epoch in range(2):
    for batch_idx, (x, y) in enumerate(train_loader):
        p = (batch_idx + epoch * len(train_loader)) / (2 * len(train_loader))
        optimizer = optim.SGD(model.parameters(), lr=0.01 / (1 + 10 * p) ** 0.75, momentum=0.9)  # expect: SL211
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
