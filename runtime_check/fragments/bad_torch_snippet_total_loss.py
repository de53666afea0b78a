# verdict: confirmed:graph-retained
# Forum-post style, modelled on PyTorch-forum threads "GPU memory grows every epoch"
# (answer: `total_loss += loss` keeps every step's graph): model, optimizer,
# criterion and loader are never defined in the post.
import torch

for epoch in range(2):
    total_loss = 0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss  # expect: SL201
    print(epoch, total_loss)
