# verdict: confirmed:error
# Forum-post style, modelled on dmlc/dgl#525 (an in-place `/=` inside recorded MXNet code
# broke the graph) and zackchase/mxnet-the-straight-dope#297 (in-place ops are not
# supported while recording): the logits are clipped in place inside `record()`.
from mxnet import autograd, nd

for data, label in train_data:
    with autograd.record():
        output = net(data)
        output[:] = nd.clip(output, -1, 1)  # expect: SL304
        loss = loss_fn(output, label)
    loss.backward()
    trainer.step(data.shape[0])
