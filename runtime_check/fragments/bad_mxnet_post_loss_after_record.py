# verdict: confirmed:error
# As pasted, modelled on discuss.mxnet.io "Cannot differentiate node because it is not in
# a computational graph" threads: only the forward pass is inside record().
for data, label in train_data:
    with autograd.record():
        output = net(data)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()(output, label)
    loss.backward()  # expect: SL101
    trainer.step(data.shape[0])
