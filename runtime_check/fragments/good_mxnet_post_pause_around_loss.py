# The correct twin of bad_mxnet_post_pause_around_loss.py: the loss is recorded.
for data, label in train_data:
    with autograd.record():
        output = net(data)
        loss = nd.mean(nd.square(output - label))
    loss.backward()
    trainer.step(data.shape[0])
