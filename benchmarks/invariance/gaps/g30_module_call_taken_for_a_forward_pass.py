import torch
from torch import nn

model = nn.Linear(4, 2)


class SetEval(nn.Module):
    def forward(self, model):
        model.eval()


def evaluate(model, x):
    switch = SetEval()
    switch(model)  # want: none (SL103: its forward records nothing)
    with torch.no_grad():
        return model(x).argmax(1)


print(evaluate(model, torch.randn(3, 4)))
