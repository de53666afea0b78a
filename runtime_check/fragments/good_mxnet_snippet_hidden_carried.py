# The correct twin of bad_mxnet_snippet_hidden_carried.py.
from mxnet import autograd

hidden = net.begin_state(batch_size=4)
for data, target in train_data:
    hidden = [h.detach() for h in hidden]
    with autograd.record():
        output, hidden = net(data, hidden)
        loss = loss_fn(output, target)
    loss.backward(retain_graph=True)
    trainer.step(4)
