# The correct twin of bad_torch_post_inference_mode_features.py: the features are made under no_grad(), which makes normal tensors.
for x, y in train_loader:
    with torch.no_grad():
        x = (x - x.mean()) / (x.std() + 1e-6)
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
