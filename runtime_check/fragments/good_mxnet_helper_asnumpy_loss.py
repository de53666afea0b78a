# The correct twin of bad_mxnet_helper_asnumpy_loss.py.
from mxnet import autograd, nd


def train_epoch(net, train_data, trainer, loss_fn):
    for data, label in train_data:
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
