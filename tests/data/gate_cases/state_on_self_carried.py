import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.lstm(x, self.hidden)
        return out.sum()

    def describe(self):
        return "tagger"

    def reset_state(self):
        print("kept")


model = Tagger()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model.reset_state()
    opt.zero_grad()
    model(torch.randn(1, 5, 4)).backward()
    opt.step()
# gate case, finds: SL204
