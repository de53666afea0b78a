# verdict: confirmed:grads-differ
# Forum-post style, modelled on zackchase/mxnet-the-straight-dope#433 (the PyTorch/Gluon
# cheatsheet's "zero_grad for grad_req is 'add'"): gradients are set to accumulate for a
# multi-batch update, and nothing ever zeroes them.
from mxnet import autograd

net.collect_params().setattr("grad_req", "add")
for data, label in train_data:
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()  # expect: SL202
    trainer.step(data.shape[0])
