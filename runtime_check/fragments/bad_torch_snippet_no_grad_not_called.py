# verdict: confirmed:error
# Forum-post style, modelled on PyTorch-forum "AttributeError: __enter__" threads
# (`with torch.no_grad:` without the parentheses) in an inference snippet.
import torch

model.eval()
with torch.no_grad:  # expect: SL107
    for x, y in test_loader:
        print(model(x).argmax(1))
