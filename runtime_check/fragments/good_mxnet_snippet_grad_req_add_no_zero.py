# The correct twin of bad_mxnet_snippet_grad_req_add_no_zero.py: zeroed after each step.
from mxnet import autograd

net.collect_params().setattr("grad_req", "add")
for data, label in train_data:
    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(data.shape[0])
    net.collect_params().zero_grad()
