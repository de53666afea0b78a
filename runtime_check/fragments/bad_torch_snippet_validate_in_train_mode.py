# verdict: confirmed:outputs-differ
# Forum-post style, modelled on PyTorch-forum "validation loss is different every time /
# worse than training" threads: the validation pass after training never calls eval().
import torch

for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = 0.0
        for x, y in val_loader:
            val_loss += criterion(model(x), y).item()  # expect: SL207
    print(epoch, val_loss)
