# The correct twin of bad_torch_snippet_faq_running_total.py: a float running total.
import torch

total_loss = 0
for i in range(20):
    optimizer.zero_grad()
    output = model(input)
    loss = criterion(output)
    loss.backward()
    optimizer.step()
    total_loss += float(loss)
print(total_loss)
