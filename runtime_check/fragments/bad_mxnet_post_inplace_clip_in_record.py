# verdict: confirmed:error
# As pasted, modelled on discuss.mxnet.io "Assigning to NDArrays that are already in a
# computational graph will cause undefined behavior" threads: the output is clipped in place.
x = nd.array([0.5, 1.5, -2.0])
x.attach_grad()
with autograd.record():
    y = x * 3
    y[:] = nd.clip(y, -1, 1)  # expect: SL304
y.backward()
print(x.grad)
