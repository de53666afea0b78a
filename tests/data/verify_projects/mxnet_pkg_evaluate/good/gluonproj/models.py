# Modelled on the Gluon MLP of d2l.ai (chapter "Dropout") packaged the way gluon-cv
# lays out its model zoo: a `Net(gluon.Block)` built with its sizes.
from mxnet import gluon


class Net(gluon.Block):
    def __init__(self, num_hidden, num_outputs, **kwargs):
        super().__init__(**kwargs)
        self.hidden = gluon.nn.Dense(num_hidden, activation="relu")
        self.drop = gluon.nn.Dropout(0.5)
        self.out = gluon.nn.Dense(num_outputs)

    def forward(self, x):
        return self.out(self.drop(self.hidden(x)))
