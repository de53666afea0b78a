# verdict: confirmed:outputs-differ
# As pasted, modelled on discuss.mxnet.io "predictions change every time I run them /
# dropout at test time" threads: the prediction is made inside record(), which turns
# training mode (Dropout) on.
with autograd.record():  # expect: SL103
    pred = net(x_test)
print(nd.argmax(pred, axis=1))
