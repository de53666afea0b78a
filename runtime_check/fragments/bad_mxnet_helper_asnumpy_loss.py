# verdict: confirmed:error
# Project-helper style: a Gluon `train_epoch(net, train_data, trainer, loss_fn)` whose
# loss goes through NumPy (`asnumpy`) and back; modelled on discuss.mxnet.io threads about
# custom losses written with NumPy.
from mxnet import autograd, nd


def train_epoch(net, train_data, trainer, loss_fn):
    for data, label in train_data:
        with autograd.record():
            loss = loss_fn(net(data), label)
            loss = nd.array(loss.asnumpy())  # expect: SL206
        loss.backward()
        trainer.step(data.shape[0])
