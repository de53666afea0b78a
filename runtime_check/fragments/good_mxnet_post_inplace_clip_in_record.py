# The correct twin of bad_mxnet_post_inplace_clip_in_record.py: the clip makes a new array.
x = nd.array([0.5, 1.5, -2.0])
x.attach_grad()
with autograd.record():
    y = x * 3
    y = nd.clip(y, -1, 1)
y.backward()
print(x.grad)
