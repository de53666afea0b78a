# verdict: confirmed:graph-retained
# Forum-post style, modelled on the loop the PyTorch FAQ ("My model reports cuda runtime
# error(2): out of memory") and google/brax#152 quote: `input` rebinds the builtin,
# `criterion` takes the output alone, and the running total keeps every step's graph.
import torch

total_loss = 0
for i in range(20):
    optimizer.zero_grad()
    output = model(input)
    loss = criterion(output)
    loss.backward()
    optimizer.step()
    total_loss += loss  # expect: SL201
print(total_loss)
