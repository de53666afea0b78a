# The correct twin of bad_torch_post_no_zero_grad.py: the gradients are zeroed each step.
for epoch in range(2):
    for x, y in train_loader:
        optimizer.zero_grad()
        output = model(x)
        loss = criterion(output, y)
        loss.backward()
        optimizer.step()
