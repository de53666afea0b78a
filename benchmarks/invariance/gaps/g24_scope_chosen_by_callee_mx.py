import contextlib

from mxnet import autograd, gluon, nd

net = gluon.nn.Dense(1)
net.initialize(init="ones")


def scope_for(train):
    return autograd.record() if train else contextlib.nullcontext()


def run(x, train):
    with scope_for(train):
        loss = (net(x) ** 2).mean()
    if train:
        loss.backward()  # want: none (SL101 is reported)
    return loss.asscalar()


print(run(nd.ones((2, 3)), True), run(nd.ones((2, 3)), False))
