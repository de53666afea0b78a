"""Prediction wrapped in `autograd.record()`: recording turns on training mode, so
Dropout drops units and the predictions are noisy (SL103)."""
import mxnet as mx
from mxnet import autograd, gluon, nd

mx.random.seed(0)
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dropout(0.5), gluon.nn.Dense(1))
net.initialize(mx.init.Xavier())
X = nd.random.normal(shape=(32, 4))


def predict(batch):
    with autograd.record():
        out = net(batch)
    return out.asnumpy()


print("prediction:", predict(X[:2]))
