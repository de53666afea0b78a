# The correct twin of bad_mxnet_helper_hidden_carried.py: the state is detached per batch.
from mxnet import autograd


def train_epoch(model, train_data, trainer, loss_fn):
    hidden = model.begin_state(batch_size=4)
    for data, target in train_data:
        hidden = [h.detach() for h in hidden]
        with autograd.record():
            output, hidden = model(data, hidden)
            loss = loss_fn(output, target)
        loss.backward(retain_graph=True)
        trainer.step(4)
