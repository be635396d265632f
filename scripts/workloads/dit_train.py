"""End-to-end workload for scripts/inductor_eval.py (`--workload-file`): a training step of two
DiT-B/2 blocks (Peebles and Xie, 2023, "Scalable Diffusion Models with Transformers";
facebookresearch/DiT models.py), in bf16.

DiT-B/2: hidden 768, 12 heads of 64, MLP ratio 4 (GELU, tanh), patch 2 over a 32 x 32 x 4 latent
(256x256 images), learned sigma (8 output channels), adaLN-Zero conditioning on the timestep and
class embeddings. Two of its 12 blocks, with the timestep and label embedders and the final layer,
on 32 images: 8192 tokens. Two departures, both ours: the patch embedding, a stride-2 2x2
convolution in DiT, is written as the linear it equals over unfolded patches, so that every
lowering of the step is a GEMM the handler decides; and attention is written as explicit matmuls
so that its bmm reach Inductor (DiT uses timm's Attention).

The GEMMs of note are the conditioning's: adaLN's linear runs on 32 rows (32 x 768 x 4608 per
block, 32 x 768 x 1536 for the final layer), its weight gradients contract over only 32; the
final projection is a linear to a narrow output (8192 x 768 x 32); and the patch embedding's
contraction is 16 wide (8192 x 16 x 768).
"""

IMAGES, LATENT, CHANNELS, PATCH, HIDDEN, HEADS, MLP, LAYERS = 32, 32, 4, 2, 768, 12, 3072, 2
CLASSES, FREQ_DIM = 1000, 256
TOKENS = (LATENT // PATCH) ** 2
OUT_CHANNELS = 2 * CHANNELS  # learned sigma


def build(torch):
    nn, F = torch.nn, torch.nn.functional
    hd = HIDDEN // HEADS

    def modulate(x, shift, scale):
        return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1 = nn.LayerNorm(HIDDEN, elementwise_affine=False, eps=1e-6)
            self.n2 = nn.LayerNorm(HIDDEN, elementwise_affine=False, eps=1e-6)
            self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.fc1, self.fc2 = nn.Linear(HIDDEN, MLP), nn.Linear(MLP, HIDDEN)
            self.ada = nn.Linear(HIDDEN, 6 * HIDDEN)

        def attn(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, HEADS, hd).permute(2, 0, 3, 1, 4)
            p = torch.softmax(q @ k.transpose(-1, -2) * hd ** -0.5, dim=-1)
            return self.proj((p @ v).transpose(1, 2).reshape(b, t, HIDDEN))

        def forward(self, x, c):
            s1, c1, g1, s2, c2, g2 = self.ada(F.silu(c)).chunk(6, dim=1)
            x = x + g1.unsqueeze(1) * self.attn(modulate(self.n1(x), s1, c1))
            h = self.fc2(F.gelu(self.fc1(modulate(self.n2(x), s2, c2)), approximate="tanh"))
            return x + g2.unsqueeze(1) * h

    class DiT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Linear(CHANNELS * PATCH * PATCH, HIDDEN)
            self.pos = nn.Parameter(torch.randn(1, TOKENS, HIDDEN) * 0.02)
            self.t1, self.t2 = nn.Linear(FREQ_DIM, HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.label = nn.Embedding(CLASSES + 1, HIDDEN)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.n_final = nn.LayerNorm(HIDDEN, elementwise_affine=False, eps=1e-6)
            self.ada_final = nn.Linear(HIDDEN, 2 * HIDDEN)
            self.out = nn.Linear(HIDDEN, PATCH * PATCH * OUT_CHANNELS)

        def forward(self, latents, t_freq, y):
            b, g = latents.shape[0], LATENT // PATCH
            patches = latents.view(b, CHANNELS, g, PATCH, g, PATCH).permute(0, 2, 4, 1, 3, 5)
            x = self.patch(patches.reshape(b, TOKENS, -1)) + self.pos
            c = self.t2(F.silu(self.t1(t_freq))) + self.label(y)
            for block in self.blocks:
                x = block(x, c)
            shift, scale = self.ada_final(F.silu(c)).chunk(2, dim=1)
            return self.out(modulate(self.n_final(x), shift, scale))

    return DiT().to(device="cuda", dtype=torch.bfloat16)


def timestep_frequencies(torch, t):
    """DiT's sinusoidal timestep embedding (TimestepEmbedder.timestep_embedding), FREQ_DIM wide."""
    half = FREQ_DIM // 2
    freqs = torch.exp(-torch.log(torch.tensor(10000.0)) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs.to(t.device)[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    latents = torch.randn(IMAGES, CHANNELS, LATENT, LATENT, device="cuda", dtype=torch.bfloat16)
    t = torch.randint(0, 1000, (IMAGES,), device="cuda")
    t_freq = timestep_frequencies(torch, t).to(torch.bfloat16)
    y = torch.randint(0, CLASSES, (IMAGES,), device="cuda")

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(latents, t_freq, y).float().square().mean().backward()

    return step, step
