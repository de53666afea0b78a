# The correct twin of bad_mxnet_snippet_trainer_in_loop.py.
from mxnet import autograd, gluon

trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
for data, label in train_data:
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(data.shape[0])
