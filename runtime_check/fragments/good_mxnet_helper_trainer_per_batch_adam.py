# The correct twin of bad_mxnet_helper_trainer_per_batch_adam.py: one Trainer.
from mxnet import autograd, gluon


def fit(net, train_data, loss_fn):
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    for data, label in train_data:
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
