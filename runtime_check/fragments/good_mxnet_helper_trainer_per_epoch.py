# The correct twin of bad_mxnet_helper_trainer_per_epoch.py: one Trainer for the run.
from mxnet import autograd, gluon


def train(net, train_data, loss_fn, epochs):
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    for epoch in range(epochs):
        for data, label in train_data:
            with autograd.record():
                loss = loss_fn(net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
