# entry: python train.py
import mxnet as mx
from mxnet import gluon, nd

from gluonproj.engine import evaluate, train_epoch
from gluonproj.models import Net


def main():
    mx.random.seed(0)
    net = Net(32, 4)
    net.initialize(mx.init.Xavier())
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    data = gluon.data.ArrayDataset(nd.random.normal(shape=(32, 10)), nd.random.randint(0, 4, shape=(32,)).astype("float32"))
    train_iter = gluon.data.DataLoader(data, batch_size=8, shuffle=True)
    val_iter = gluon.data.DataLoader(data, batch_size=8)
    for epoch in range(2):
        train_epoch(net, train_iter, loss_fn, trainer, 8)
        print(f"epoch {epoch}: val accuracy {evaluate(net, val_iter):.3f}")


if __name__ == "__main__":
    main()
