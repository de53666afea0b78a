# The correct twin of bad_mxnet_snippet_loss_outside_record.py.
from mxnet import autograd

for data, label in train_data:
    with autograd.record():
        output = net(data)
        loss = loss_fn(output, label)
    loss.backward()
    trainer.step(data.shape[0])
