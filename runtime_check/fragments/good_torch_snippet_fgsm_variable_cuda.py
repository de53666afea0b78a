# The correct twin of bad_torch_snippet_fgsm_variable_cuda.py: requires_grad set last.
import torch

for images, labels in test_loader:
    images = images.cuda().requires_grad_()
    loss = criterion(model(images), labels.cuda())
    model.zero_grad()
    loss.backward()
    adversarial = images + 0.05 * images.grad.sign()
    print(model(adversarial).argmax(1))
