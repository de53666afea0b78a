# verdict: confirmed:grads-differ
# As pasted, modelled on discuss.mxnet.io saliency-map threads ("x.grad is all zeros /
# Cannot differentiate node"): the input's gradient buffer is attached after the forward
# pass that uses it.
x = nd.random.uniform(shape=(1, 16))
with autograd.record():
    out = net(x)
    x.attach_grad()  # expect: SL303
    score = nd.max(out)
score.backward()
print(nd.abs(x.grad).max())
