# verdict: confirmed:error
# As pasted, modelled on PyTorch-forum GAN threads "one of the variables needed for gradient
# computation has been modified by an inplace operation" (after the 1.5 upgrade): both
# losses come from one discriminator forward, and D steps between the two backwards. The
# optimizers are defined off-screen: each is the one named for its network.
netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
netD = nn.Sequential(nn.Linear(16, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
for real, _ in dataloader:
    real = real.view(-1, 16)
    fake = netG(torch.randn(real.size(0), 16))
    d_fake = netD(fake)  # expect: SL205
    d_loss = criterion(netD(real), torch.ones(real.size(0), 1)) + criterion(d_fake, torch.zeros(real.size(0), 1))
    g_loss = criterion(d_fake, torch.ones(real.size(0), 1))
    optimizerD.zero_grad()
    d_loss.backward(retain_graph=True)
    optimizerD.step()  # expect: SL210
    optimizerG.zero_grad()
    g_loss.backward()
    optimizerG.step()
