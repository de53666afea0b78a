import torch


class Runner:
    def go(self, x):
        m = torch.nn.Linear(2, 2)
        return self.\
            predict(m, x)

    def predict(self, m, x):
        return m(x)
# gate case, finds: SL103
