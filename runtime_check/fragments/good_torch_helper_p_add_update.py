# The correct twin of bad_torch_helper_p_add_update.py: the update runs under no_grad.
import torch


def train(model, loader, criterion, args):
    model.train()
    for batch, (data, targets) in enumerate(loader):
        model.zero_grad()
        loss = criterion(model(data), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-args.lr)
