# The correct twin of bad_torch_helper_executor_no_zero_grad.py: zero_grad before backward.
import torch


def executor_train(model, optimizer, data_loader, criterion, log_interval):
    model.train()
    for batch_idx, (feats, target) in enumerate(data_loader):
        optimizer.zero_grad()
        loss = criterion(model(feats), target)
        loss.backward()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print(batch_idx, loss.item())
