# The correct twin of bad_mxnet_post_saliency_input_off_screen.py: the buffer is attached
# before the forward pass.
img.attach_grad()
with autograd.record():
    out = net(img)
    score = out[0, label]
score.backward()
saliency = img.grad.abs().max(axis=1)
print(saliency)
