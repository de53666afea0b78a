# The reset of the state kept on the module, in a hook nothing in the file calls (a
# trainer's), must be kept in the slice: without it SL204 would report the carry.
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.LSTM(4, 8, batch_first=True)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.encoder(x, self.hidden)
        return out.sum()

    def describe(self):
        return "tagger"

    def on_train_batch_start(self):  # (a trainer's hook: called by a framework)
        self.hidden = None


model = Tagger()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    model(torch.randn(1, 5, 4)).backward()
    opt.step()
# gate case, finds: nothing
