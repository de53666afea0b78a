# verdict: confirmed:grads-differ
# As pasted, modelled on discuss.mxnet.io "gradient is wrong / partial after asnumpy"
# threads: a term of the loss is computed in NumPy and brought back with nd.array.
x = nd.array([1.0, 2.0, 3.0])
x.attach_grad()
with autograd.record():
    y = x * x
    z = nd.array(y.asnumpy()) * x  # expect: SL206
z.backward()
print(x.grad)
