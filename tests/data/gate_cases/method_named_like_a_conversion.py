import torch
class K:
    def int(self):
        return 1
    def run(self, x):
        v = int(model(x).sum())
        v.backward()
# gate case, finds: nothing
