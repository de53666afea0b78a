# verdict: confirmed:error
# Forum-post style, modelled on the PyTorch-forum "Trying to backward through the graph
# a second time" threads about RNN language models (the hidden state is carried over
# batches without detach).
import torch

hidden = model.init_hidden(4)
for x, y in train_loader:
    optimizer.zero_grad()
    output, hidden = model(x, hidden)  # expect: SL204
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
