# verdict: confirmed:grads-differ
# Project-helper style, modelled on alan-turing-institute/deepsensor#47 ("train_epoch
# re-instantiates the Adam optimiser at the start of each epoch ... loses the momentum"),
# written for Gluon: `train(net, train_data, loss_fn, epochs)` builds its Trainer per epoch.
from mxnet import autograd, gluon


def train(net, train_data, loss_fn, epochs):
    for epoch in range(epochs):
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})  # expect: SL211
        for data, label in train_data:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
