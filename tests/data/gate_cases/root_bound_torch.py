from torch import nn


def predict(model, x):
    return model(x)


torch = None
# gate case, finds: SL103
