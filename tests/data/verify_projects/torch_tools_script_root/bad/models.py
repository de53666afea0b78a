# Modelled on detectron2's and mmdetection's layout: the project's modules at its root,
# its scripts in tools/ (`python tools/eval_net.py` from the root, the root on the path).
from torch import nn


class Net(nn.Module):
    def __init__(self, in_features=6, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_features, 12), nn.Tanh(), nn.Linear(12, num_classes))

    def forward(self, x):
        return self.body(x)
