# The correct twin of bad_mxnet_snippet_asnumpy_loss_weight.py: the weight stays recorded.
from mxnet import autograd, nd

for data, label in train_data:
    with autograd.record():
        loss = loss_fn(net(data), label)
        weighted = (loss * loss).mean()
    weighted.backward()
    trainer.step(data.shape[0])
