import mxnet as mx
from mxnet import autograd, gluon, nd

net = gluon.nn.Dense(1)
net.initialize()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
x, y = nd.ones((4, 3)), nd.zeros((4, 1))


def backprop(loss):
    loss.backward()


for epoch in range(2):
    with autograd.record():  # want: none (its result is backpropagated, by `backprop`)
        loss = ((net(x) - y) ** 2).mean()
    backprop(loss)
    trainer.step(4)
