# verdict: confirmed:grads-differ
# Project-helper style, modelled on Wangyixinxin/ACN#9 ("the discriminator optimizer is
# instantiated inside the batch loop ... resets Adam's internal state"), written for
# Gluon: `fit(net, train_data, loss_fn)` makes an Adam Trainer for every batch.
from mxnet import autograd, gluon


def fit(net, train_data, loss_fn):
    for data, label in train_data:
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})  # expect: SL211
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
