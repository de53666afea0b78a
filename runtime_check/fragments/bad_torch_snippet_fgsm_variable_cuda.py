# verdict: confirmed:error
# Forum-post style, modelled on pytorch/pytorch#2730 and #12627 ("grad is None" after
# `.cuda()`): an FGSM-style attack wraps each batch as `Variable(..., requires_grad=True)`
# and then moves it with `.cuda()`, so the image it differentiates is a copy.
import torch
from torch.autograd import Variable

for images, labels in test_loader:
    images = Variable(images, requires_grad=True).cuda()  # expect: SL302
    loss = criterion(model(images), labels.cuda())
    model.zero_grad()
    loss.backward()
    adversarial = images + 0.05 * images.grad.sign()
    print(model(adversarial).argmax(1))
