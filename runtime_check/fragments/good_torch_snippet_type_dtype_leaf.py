# The correct twin of bad_torch_snippet_type_dtype_leaf.py: the dtype goes to the factory.
import torch

x = torch.randn(batch_size, input_size, dtype=torch.float64)
w1 = torch.randn(input_size, hidden_size, dtype=torch.float64, requires_grad=True)
for step in range(3):
    loss = (x @ w1).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w1 -= lr * w1.grad
        w1.grad.zero_()
