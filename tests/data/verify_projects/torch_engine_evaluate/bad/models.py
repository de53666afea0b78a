# Modelled on pytorch/examples mnist/main.py (its `Net` with Dropout), split into the
# models.py / engine.py / train.py layout of pytorch/vision's classification references.
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.dropout = nn.Dropout(0.5)
        self.fc2 = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc2(self.dropout(F.relu(self.fc1(x))))
