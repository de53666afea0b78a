import torch


def restore(prev):
    torch.set_grad_enabled(prev)


def validate(model, x):
    prev = torch.is_grad_enabled()
    torch.set_grad_enabled(False)  # want: none (restored in `finally`, by `restore`)
    try:
        return model(x).sum().item()
    finally:
        restore(prev)


print(validate(torch.nn.Linear(3, 1), torch.randn(2, 3)))
