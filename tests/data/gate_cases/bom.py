import torch
for x in data:
    out = model(x)
    out.backward()
    opt.step()
# gate case, finds: SL202
