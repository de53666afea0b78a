# The correct twin of bad_mxnet_post_penalty_asscalar.py: the penalty stays an NDArray.
for data, label in train_data:
    with autograd.record():
        out = net(data)
        penalty = out.abs().mean()
        loss = loss_fn(out, label).mean() + 0.01 * penalty
    loss.backward()
    trainer.step(data.shape[0])
