import numpy as np
import torch


def helper(x):
    return np.abs(x).mean()


def train(net, xb):
    loss = torch.from_numpy(np.asarray(helper(net(xb).detach().numpy())))
    loss.backward()


def other(x):
    return helper(x)


ALIAS = helper
# gate case, finds: SL206
