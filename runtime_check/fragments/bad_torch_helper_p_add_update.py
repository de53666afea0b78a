# verdict: confirmed:error
# Project-helper style, modelled on pytorch/examples#779 (word_language_model: `p.add_(-lr,
# p.grad)` raised "a leaf Variable that requires grad is being used in an in-place
# operation"): a hand-rolled SGD step inside `train(model, loader, criterion, args)`.
import torch


def train(model, loader, criterion, args):
    model.train()
    for batch, (data, targets) in enumerate(loader):
        model.zero_grad()
        loss = criterion(model(data), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.add_(p.grad, alpha=-args.lr)  # expect: SL301
