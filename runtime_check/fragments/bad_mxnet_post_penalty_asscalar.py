# verdict: confirmed:grads-differ
# As pasted, modelled on the penalty-term idiom of PyTorch-forum thread "Regularization to
# Desired Number" (2020), as an MXNet user writes it: the penalty is a number taken out
# with asscalar() and wrapped back in nd.array, so its gradient never reaches the net.
for data, label in train_data:
    with autograd.record():
        out = net(data)
        penalty = nd.array([out.abs().mean().asscalar()])  # expect: SL206
        loss = loss_fn(out, label).mean() + 0.01 * penalty
    loss.backward()
    trainer.step(data.shape[0])
