# The correct twin of bad_mxnet_snippet_attach_grad_after_forward.py: attach first.
from mxnet import autograd, nd

for data, label in test_data:
    data.attach_grad()
    with autograd.record():
        output = net(data)
        loss = loss_fn(output, label)
    loss.backward()
    adversarial = data + 0.1 * nd.sign(data.grad)
    print(net(adversarial).argmax(axis=1))
