# verdict: confirmed:grads-differ
# Forum-post style, modelled on apache/mxnet#11882 (NDArray to NumPy in a training
# script): the per-batch weight is computed from the loss through `.asnumpy()` and
# multiplied back in, so that factor's own gradient is lost.
from mxnet import autograd, nd

for data, label in train_data:
    with autograd.record():
        loss = loss_fn(net(data), label)
        weight = nd.array(loss.asnumpy())  # expect: SL206
        weighted = (weight * loss).mean()
    weighted.backward()
    trainer.step(data.shape[0])
