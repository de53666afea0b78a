from mxnet import autograd, gluon, nd

net = gluon.nn.Dense(1)
net.initialize()
x = nd.ones((4, 3))


def run(fn, *args):
    return fn(*args)


def step():
    with autograd.record():
        loss = (net(x) ** 2).mean()
    return loss


loss = run(step)
loss.backward()  # want: none (SL101 is reported: `run` returns what `step` recorded)
