# The correct twin of bad_mxnet_post_loss_after_record.py: the loss is computed inside record().
for data, label in train_data:
    with autograd.record():
        output = net(data)
        loss = gluon.loss.SoftmaxCrossEntropyLoss()(output, label)
    loss.backward()
    trainer.step(data.shape[0])
