# verdict: confirmed:grads-differ
# Forum-post style, modelled on the Gluon word-language-model questions on
# discuss.mxnet.io: the hidden state is carried across batches without detach, and the
# backward keeps the graph (`retain_graph=True`, copied from a PyTorch answer), so every
# batch's gradients flow back into the batches before it.
from mxnet import autograd

hidden = net.begin_state(batch_size=4)
for data, target in train_data:
    with autograd.record():
        output, hidden = net(data, hidden)  # expect: SL204
        loss = loss_fn(output, target)
    loss.backward(retain_graph=True)
    trainer.step(4)
