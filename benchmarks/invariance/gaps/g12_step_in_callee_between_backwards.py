import torch
from torch import nn

trunk = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
policy_head, value_head = nn.Linear(32, 2), nn.Linear(32, 1)
params = list(trunk.parameters()) + list(policy_head.parameters()) + list(value_head.parameters())
optimizer = torch.optim.Adam(params, lr=3e-4)
features = trunk(torch.randn(20, 4))
logits = policy_head(features)
values = value_head(features)
dist = torch.distributions.Categorical(logits=logits)
critic_loss = values.pow(2).mean()
actor_loss = -(dist.log_prob(dist.sample()) * values.detach().squeeze(1)).mean()


def update(optimizer):
    optimizer.step()


optimizer.zero_grad()
critic_loss.backward(retain_graph=True)
update(optimizer)  # want: SL210 (at the call: the helper is fine, its call is misplaced)
actor_loss.backward()
optimizer.step()
