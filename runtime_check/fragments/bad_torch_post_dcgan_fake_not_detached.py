# verdict: confirmed:grads-differ
# As pasted, modelled on PyTorch-forum DCGAN threads ("why detach fake in the discriminator
# step"): the generator's output goes to the discriminator's loss without detach().
criterion = nn.BCEWithLogitsLoss()
netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
for real, _ in dataloader:
    real = real.view(-1, 16)
    noise = torch.randn(real.size(0), 16)
    fake = netG(noise)
    optimizerD.zero_grad()
    out_real = netD(real)
    out_fake = netD(fake)  # expect: SL205
    errD = criterion(out_real, torch.ones_like(out_real)) + criterion(out_fake, torch.zeros_like(out_fake))
    errD.backward()
    optimizerD.step()
