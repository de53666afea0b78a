# The correct twin of bad_mxnet_snippet_inplace_clip_in_record.py: a new array.
from mxnet import autograd, nd

for data, label in train_data:
    with autograd.record():
        output = net(data)
        output = nd.clip(output, -1, 1)
        loss = loss_fn(output, label)
    loss.backward()
    trainer.step(data.shape[0])
