# verdict: confirmed:error
# Forum-post style, modelled on hhsecond/HandsOnDeepLearningWithPytorch#2: the weights are
# made with `requires_grad=True` and then cast (the post: `.type(dtype)`; here `.double()`),
# so the name holds a copy (a non-leaf) and its `.grad` stays None when the hand-written
# update reads it.
import torch

x = torch.randn(batch_size, input_size, dtype=torch.float64)
w1 = torch.randn(input_size, hidden_size, requires_grad=True).double()  # expect: SL302
for step in range(3):
    loss = (x @ w1).pow(2).mean()
    loss.backward()
    w1.data -= lr * w1.grad
