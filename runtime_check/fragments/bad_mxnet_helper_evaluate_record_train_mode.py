# verdict: confirmed:outputs-differ
# Project-helper style, modelled on zackchase/mxnet-the-straight-dope#527 (an
# `evaluate_accuracy(data_iterator, net)` that opens `autograd.record(train_mode=...)` to
# choose dropout): the evaluation runs with Dropout and BatchNorm in training mode.
import mxnet as mx
from mxnet import autograd, nd


def evaluate_accuracy(data_iterator, net):
    acc = mx.metric.Accuracy()
    with autograd.record(train_mode=True):  # expect: SL103
        for i, (data, label) in enumerate(data_iterator):
            data = data.as_in_context(ctx).reshape((-1, 784))
            output = net(data)
            predictions = nd.argmax(output, axis=1)
            acc.update(preds=predictions, labels=label.as_in_context(ctx))
    return acc.get()[1]
