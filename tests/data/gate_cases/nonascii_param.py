import torch


def predict_ü(m, x):
    return m(x)


def run(x):
    m = torch.nn.Linear(2, 2)
    return predict_ü(m, x)
# gate case, finds: SL103
