# The package's epoch helpers, reached with relative imports (run as a module of the
# package: `from .metrics import accuracy`); train.py calls them, nothing here does.
from mxnet import autograd

from .metrics import accuracy


def train_epoch(net, data_iter, loss_fn, trainer, batch_size):
    for x, y in data_iter:
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch_size)


def evaluate(net, data_iter):
    correct, seen = 0.0, 0
    for x, y in data_iter:
        with autograd.record():  # expect: SL103
            out = net(x)
        correct += accuracy(out, y)
        seen += x.shape[0]
    return correct / seen
