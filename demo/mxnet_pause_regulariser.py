"""A regulariser scaled inside `autograd.pause()` and then backpropagated: the paused
part was not recorded, so backward cannot differentiate it and raises (SL101)."""
import mxnet as mx
from mxnet import autograd, gluon, nd

mx.random.seed(0)
net = gluon.nn.Dense(1, in_units=4)
net.initialize(mx.init.Xavier())
w = net.weight.data()
w.attach_grad()
with autograd.record():
    penalty = (w * w).sum()
    with autograd.pause():
        scaled = penalty * 0.01
scaled.backward()
print("gradient norm:", w.grad.norm().asscalar())
