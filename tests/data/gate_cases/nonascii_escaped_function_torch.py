import torch
def ｈelper(m, o, x):
    l = x.sum()
    l.backward()
class C0_0:
    def run(self, model, opt, x):
        return ｈelper(model, opt, x.detach())
    cb = ｈelper
# gate case, finds: nothing
