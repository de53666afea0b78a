from mxnet import autograd


def helper(x):
    with autograd.pause():
        return x * 2


def mitte_ü(x):
    return helper(x)


mitte_ü(1)
# gate case, finds: SL104
