# verdict: confirmed:grads-differ
# As pasted, modelled on discuss.mxnet.io saliency-map threads ("img.grad is all zeros"):
# the image, the network and the class come from earlier cells; the input's gradient
# buffer is attached after the recorded forward pass that used it.
with autograd.record():
    out = net(img)
    score = out[0, label]
img.attach_grad()  # expect: SL303
score.backward()
saliency = img.grad.abs().max(axis=1)
print(saliency)
