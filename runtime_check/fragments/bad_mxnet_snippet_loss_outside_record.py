# verdict: confirmed:error
# Forum-post style, modelled on discuss.mxnet.io "Cannot differentiate node because it is
# not in a computational graph" threads: the loss is computed after the record scope.
from mxnet import autograd

for data, label in train_data:
    with autograd.record():
        output = net(data)
    loss = loss_fn(output, label)
    loss.backward()  # expect: SL101
    trainer.step(data.shape[0])
