# The correct twin of bad_torch_post_set_grad_enabled_eval_first.py: the evaluation is scoped with no_grad().
with torch.no_grad():
    print(criterion(model(val_x), val_y).item())
for x, y in train_loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
