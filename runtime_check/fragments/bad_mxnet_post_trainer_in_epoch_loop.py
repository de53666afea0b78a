# verdict: confirmed:grads-differ
# As pasted, modelled on discuss.mxnet.io "Adam loss jumps at every epoch" threads: the
# gluon.Trainer (and its optimizer state) is built anew each epoch.
for epoch in range(3):
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})  # expect: SL211
    for data, label in train_data:
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
