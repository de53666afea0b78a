# The correct twin of bad_torch_snippet_validate_in_train_mode.py.
import torch

for epoch in range(2):
    model.train()
    for x, y in train_loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = 0.0
        for x, y in val_loader:
            val_loss += criterion(model(x), y).item()
    print(epoch, val_loss)
