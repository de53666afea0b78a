import torch

def train(model, opt, data):
    total = 0
    for x in data:
        out = model(x)
        l = losṡ_fn(out)
        total += l
# gate case, finds: SL201
