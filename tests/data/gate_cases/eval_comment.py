import torch

def run(model, x):
    (model.  # switch
     eval())
    return model(x)
# gate case, finds: SL103
