# verdict: confirmed:grads-differ
# Project-helper style, modelled on wenet-e2e/wekws#72/#73 ("when optimizer.step() is
# called, optimizer.zero_grad() is not called"): an executor's `train` helper steps on
# gradients summed over every batch so far.
import torch


def executor_train(model, optimizer, data_loader, criterion, log_interval):
    model.train()
    for batch_idx, (feats, target) in enumerate(data_loader):
        loss = criterion(model(feats), target)
        loss.backward()  # expect: SL202
        optimizer.step()
        if batch_idx % log_interval == 0:
            print(batch_idx, loss.item())
