# verdict: confirmed:error
# As pasted, modelled on discuss.mxnet.io threads where pause() was meant to exclude a
# regulariser and ended up around the whole loss.
for data, label in train_data:
    with autograd.record():
        output = net(data)
        with autograd.pause():
            loss = nd.mean(nd.square(output - label))
    loss.backward()  # expect: SL101
    trainer.step(data.shape[0])
