# The correct twin of bad_mxnet_post_trainer_in_epoch_loop.py: the Trainer is built once.
trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
for epoch in range(3):
    for data, label in train_data:
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(data.shape[0])
