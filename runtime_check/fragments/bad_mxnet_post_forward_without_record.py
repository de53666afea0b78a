# verdict: confirmed:error
# As pasted, modelled on discuss.mxnet.io first-steps threads ("Cannot differentiate node
# because it is not in a computational graph. You need to set is_recording to true"):
# the training loop never opens record().
for data, label in train_data:
    output = net(data)
    loss = gluon.loss.L2Loss()(output, label)
    loss.backward()  # expect: SL101
    trainer.step(data.shape[0])
    print(mx.nd.mean(loss).asscalar())
