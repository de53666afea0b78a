# verdict: confirmed:error
# Project-helper style: a Gluon `fit(net, train_data, trainer, loss_fn)` whose forward is
# wrapped in `autograd.pause()` copied from the evaluation helper; modelled on
# discuss.mxnet.io "Cannot differentiate node" threads.
from mxnet import autograd


def fit(net, train_data, trainer, loss_fn):
    for data, label in train_data:
        with autograd.pause():
            loss = loss_fn(net(data), label)
        loss.backward()  # expect: SL101
        trainer.step(data.shape[0])
