"""A small MXNet/Gluon regression script with three autograd-scope bugs.

Run it: the last part crashes with "Cannot differentiate node" (SL101).
"""
import mxnet as mx
from mxnet import autograd, gluon, nd

mx.random.seed(0)
net = gluon.nn.HybridSequential()
net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dropout(0.5), gluon.nn.Dense(1))
net.initialize(mx.init.Xavier())
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
loss_fn = gluon.loss.L2Loss()

X = nd.random.normal(shape=(32, 4))
Y = X.sum(axis=1, keepdims=True)

# Bug: backward inside pause() -- the author believes it "pauses" the update.
with autograd.pause():
    for epoch in range(3):
        with autograd.record():
            loss = loss_fn(net(X), Y)
        loss.backward()
        trainer.step(X.shape[0])


def predict(batch):
    # Bug: recording during prediction turns Dropout on -- predictions are noisy.
    with autograd.record():
        out = net(batch)
    return out.asnumpy()


print("prediction:", predict(X[:2]))

# Bug: the regulariser is computed inside pause(), then backpropagated.
w = net[0].weight.data()
w.attach_grad()
with autograd.record():
    penalty = (w * w).sum()
with autograd.pause():
    scaled = penalty * 0.01
scaled.backward()
