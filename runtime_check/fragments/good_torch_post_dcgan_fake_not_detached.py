# The correct twin of bad_torch_post_dcgan_fake_not_detached.py: the discriminator sees fake.detach().
criterion = nn.BCEWithLogitsLoss()
netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
for real, _ in dataloader:
    real = real.view(-1, 16)
    noise = torch.randn(real.size(0), 16)
    fake = netG(noise)
    optimizerD.zero_grad()
    out_real = netD(real)
    out_fake = netD(fake.detach())
    errD = criterion(out_real, torch.ones_like(out_real)) + criterion(out_fake, torch.zeros_like(out_fake))
    errD.backward()
    optimizerD.step()
