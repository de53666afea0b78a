# The correct twin of bad_torch_post_gan_step_between_backwards.py: the discriminator's loss
# sees fake.detach(), and the generator's loss makes its own forward after D's step.
netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
netD = nn.Sequential(nn.Linear(16, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
for real, _ in dataloader:
    real = real.view(-1, 16)
    fake = netG(torch.randn(real.size(0), 16))
    d_loss = criterion(netD(real), torch.ones(real.size(0), 1)) + criterion(netD(fake.detach()), torch.zeros(real.size(0), 1))
    optimizerD.zero_grad()
    d_loss.backward()
    optimizerD.step()
    g_loss = criterion(netD(fake), torch.ones(real.size(0), 1))
    optimizerG.zero_grad()
    g_loss.backward()
    optimizerG.step()
