from mxnet import autograd, nd

x = nd.array([1.0, 2.0])
x.attach_grad()


class _Steps:
    def run(self, x):
        with autograd.pause():  # want: SL104 (found when the class is named `Steps`)
            z = x * 2
        return z


obj = _Steps()
with autograd.record():
    with autograd.pause():
        z = obj.run(x)
