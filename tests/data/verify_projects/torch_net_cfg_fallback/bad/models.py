# Modelled on detectron2's `build_model(cfg)` habit (a model built from a config object)
# with the running-loss training loop of the PyTorch CIFAR-10 tutorial, in the
# models.py / engine.py / train.py layout.
from torch import nn


class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(cfg.in_features, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, cfg.classes))

    def forward(self, x):
        return self.body(x)
