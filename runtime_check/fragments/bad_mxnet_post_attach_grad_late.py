# verdict: confirmed:error
# As pasted, modelled on discuss.mxnet.io "attach_grad after computation: Cannot
# differentiate node" threads: the gradient buffer is attached after the forward pass.
x = nd.array([[1.0, 2.0], [3.0, 4.0]])
with autograd.record():
    y = 2 * x * x
x.attach_grad()  # expect: SL303
y.backward()
print(x.grad)
