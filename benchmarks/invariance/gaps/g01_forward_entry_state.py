from mxnet import autograd, gluon, nd

x = nd.array([1.0, 2.0])
x.attach_grad()


class Step(gluon.Block):
    def forward(self, x):
        with autograd.pause():  # want: SL104
            z = x * 2
        return z


net = Step()
net(x)  # the only call: nothing records here
