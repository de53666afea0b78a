_ = 0; from mxnet import autograd
def f(net, X):
    with autograd.record():
        out = net(X)
# gate case, finds: SL103
