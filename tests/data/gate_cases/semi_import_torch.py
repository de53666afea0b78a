_ = 0; import torch

def f(model, x):
    with torch.no_grad():
        loss = model(x).sum()
    loss.backward()


def unrelated():
    return 1
# gate case, finds: SL101
