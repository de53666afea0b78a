import torch

def train(model, opt, data):
    for x in data:
        out = model(x)
        l = losṡ_fn(out)
        total = 0
        total += l
# gate case, finds: SL201
