import torch
model = torch.nn.Linear(2, 2)
for p in (model.parameters  # all of them
          ()):
    p.sub_(0.1)
# gate case, finds: SL301
