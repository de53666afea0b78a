# verdict: confirmed:outputs-differ
# Forum-post style, modelled on apache/mxnet#14564 ("Features of autograd.record": the
# predictions of a loaded model differ inside `record()`): the forward passes of an
# inference run are wrapped in `autograd.record()`, which turns on training mode.
from mxnet import autograd

with autograd.record():  # expect: SL103
    outputs = [model(X) for X in data]
print([o.argmax(axis=1) for o in outputs])
