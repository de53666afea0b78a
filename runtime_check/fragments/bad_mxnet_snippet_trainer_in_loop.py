# verdict: confirmed:grads-differ
# Forum-post style, modelled on discuss.mxnet.io threads where `gluon.Trainer` is built
# inside the batch loop (its momentum restarts every step).
from mxnet import autograd, gluon

for data, label in train_data:
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})  # expect: SL211
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(data.shape[0])
