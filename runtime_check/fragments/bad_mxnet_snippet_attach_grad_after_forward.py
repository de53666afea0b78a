# verdict: confirmed:grads-differ
# Forum-post style, modelled on apache/mxnet#8495 (an `attach_grad()` that decides whether
# "Cannot differentiate node" is raised): an adversarial-example loop attaches the input's
# gradient buffer after the forward pass already used it. (On mxnet 1.9.1 nothing raises:
# `data.grad` silently stays zero, so the attack never moves the input.)
from mxnet import autograd, nd

for data, label in test_data:
    with autograd.record():
        output = net(data)
        data.attach_grad()  # expect: SL303
        loss = loss_fn(output, label)
    loss.backward()
    adversarial = data + 0.1 * nd.sign(data.grad)
    print(net(adversarial).argmax(axis=1))
