# verdict: confirmed:grads-differ
# Project-helper style, modelled on apache/mxnet#9811 ("reinitialize the begin state of
# batch N + 1 to be the final state of batch N") and the Gluon word-language-model example
# it points to: the state is carried over without `detach()`, and the backward keeps the
# graph, so each batch's gradients reach back into every earlier batch.
from mxnet import autograd


def train_epoch(model, train_data, trainer, loss_fn):
    hidden = model.begin_state(batch_size=4)
    for data, target in train_data:
        with autograd.record():
            output, hidden = model(data, hidden)  # expect: SL204
            loss = loss_fn(output, target)
        loss.backward(retain_graph=True)
        trainer.step(4)
