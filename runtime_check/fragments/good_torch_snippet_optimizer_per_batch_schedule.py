# The correct twin of bad_torch_snippet_optimizer_per_batch_schedule.py: one optimizer,
# its learning rate set per batch.
import torch
import torch.optim as optim

optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    for batch_idx, (x, y) in enumerate(train_loader):
        p = (batch_idx + epoch * len(train_loader)) / (2 * len(train_loader))
        for group in optimizer.param_groups:
            group["lr"] = 0.01 / (1 + 10 * p) ** 0.75
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
