import torch

model = torch.nn.Linear(4, 1)


def no_grad_from_here():
    torch.set_grad_enabled(False)  # want: SL106


def evaluate(xb):
    model.eval()
    no_grad_from_here()
    return model(xb).sum().item()  # want: none (SL103 is reported: recording is off here)


print(evaluate(torch.randn(8, 4)))
