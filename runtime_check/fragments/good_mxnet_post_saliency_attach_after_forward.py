# The correct twin of bad_mxnet_post_saliency_attach_after_forward.py: attach_grad() before the forward pass.
x = nd.random.uniform(shape=(1, 16))
x.attach_grad()
with autograd.record():
    out = net(x)
    score = nd.max(out)
score.backward()
print(nd.abs(x.grad).max())
