import torch
from helpers import objective as loss_fn


def train(data, loss_fn=None):
    total = 0
    for x in data:
        total += loss_fn(x)
    return total
# gate case, finds: nothing
