# The correct twin of bad_mxnet_post_forward_without_record.py: the forward pass and the loss are recorded.
for data, label in train_data:
    with autograd.record():
        output = net(data)
        loss = gluon.loss.L2Loss()(output, label)
    loss.backward()
    trainer.step(data.shape[0])
    print(mx.nd.mean(loss).asscalar())
