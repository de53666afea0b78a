import torch
from torch import nn

model = nn.Linear(4, 2)


def logits_of(model, x):
    return model(x)  # want: SL103


def evaluate(model, x):
    model.eval()
    return logits_of(model, x).argmax(1)


print(evaluate(model, torch.randn(3, 4)))
