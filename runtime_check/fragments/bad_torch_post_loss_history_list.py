# verdict: confirmed:graph-retained
# As pasted, modelled on discuss.pytorch.org/t/43284 ("GPU memory increase while I wanna
# to backward() with accumulative loss"): the losses are kept in a list for a plot.
loss_history = []
for epoch in range(2):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        loss_history.append(loss)  # expect: SL201
