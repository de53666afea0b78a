from mxnet import autograd, nd

x = nd.arange(4).reshape((4, 1))


def track(x):
    x.attach_grad()  # want: SL303


with autograd.record():
    y = 2 * nd.dot(x.T, x)
    track(x)
y.backward()
