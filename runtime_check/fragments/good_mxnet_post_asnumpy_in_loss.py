# The correct twin of bad_mxnet_post_asnumpy_in_loss.py: the term stays an NDArray.
x = nd.array([1.0, 2.0, 3.0])
x.attach_grad()
with autograd.record():
    y = x * x
    z = y * x
z.backward()
print(x.grad)
