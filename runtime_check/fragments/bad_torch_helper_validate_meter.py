# verdict: confirmed:graph-retained
# Project-helper style, modelled on hszhao/semseg#60 ("out of memory" during validation):
# `validate(val_loader, model, criterion)` puts the model in eval mode, moves each batch
# with `.cuda(non_blocking=True)` and logs into an AverageMeter, but runs the forward pass
# with autograd recording on.
import time

import torch


def validate(val_loader, model, criterion):
    model.eval()
    end = time.time()
    for i, (input, target) in enumerate(val_loader):
        data_time.update(time.time() - end)
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)  # expect: SL103
        loss = criterion(output, target)
        losses.update(loss.item(), input.size(0))
        end = time.time()
    return losses.avg
