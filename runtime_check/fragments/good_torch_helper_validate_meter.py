# The correct twin of bad_torch_helper_validate_meter.py: the forward pass under no_grad.
import time

import torch


def validate(val_loader, model, criterion):
    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        data_time.update(time.time() - end)
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.no_grad():
            output = model(input)
            loss = criterion(output, target)
        losses.update(loss.item(), input.size(0))
        end = time.time()
    return losses.avg
