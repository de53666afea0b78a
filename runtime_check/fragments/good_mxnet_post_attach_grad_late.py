# The correct twin of bad_mxnet_post_attach_grad_late.py: attach_grad() before the forward pass.
x = nd.array([[1.0, 2.0], [3.0, 4.0]])
x.attach_grad()
with autograd.record():
    y = 2 * x * x
y.backward()
print(x.grad)
