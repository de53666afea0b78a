# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum "Inference tensors cannot be saved for backward"
# threads: the batch is normalised under inference_mode() "to save memory", then the
# model is trained on it (the Linear layer saves its input for the weight's gradient).
for x, y in train_loader:
    with torch.inference_mode():
        x = (x - x.mean()) / (x.std() + 1e-6)
    optimizer.zero_grad()
    loss = criterion(model(x), y)  # expect: SL108
    loss.backward()
    optimizer.step()
