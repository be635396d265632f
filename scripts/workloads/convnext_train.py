"""End-to-end workload for scripts/inductor_eval.py (`--workload-file`): a training step of
ConvNeXt V2-Atto in fp16, whose weight gradients are long contractions.

ConvNeXt V2 (Woo et al., 2023; facebookresearch/ConvNeXt-V2 models/convnextv2.py) runs its
pointwise convolutions as `nn.Linear` on channels-last pixels, so their weight gradients reach
Inductor as `mm` contracted over every pixel of the batch. Atto's sizes: depths 2, 2, 6, 2;
dims 40, 80, 160, 320; a 4x4 stem of stride 4 on 224 x 224 crops; batch 32 per GPU as its
fine-tuning recipe trains (TRAINING.md, `--use_amp True`; here the whole model is fp16).

The GEMMs of note are the weight gradients of the first two stages' pointwise layers:
160 x 100352 x 40 and 40 x 100352 x 160 at 56 x 56, 320 x 25088 x 80 and 80 x 25088 x 320 at
28 x 28 (k at least 32 times the larger output side: Inductor offers `decompose_k`'s splits).
The first of them ran 0.55x the best of cuBLAS and default max-autotune's pick alone with
`install(warm_splits=True)` (docs/results.md, fortieth session), where the compiled truth
replays one GEMM with its operands warm; here they run inside the step, between the
depthwise convolutions, the norms and GELU. Measured in the forty-first session
(docs/results.md): the step with the splits re-timed warm ran within 0.2 % of the step
without, so `warm_splits` became the default. Default max-autotune compiles this step in
about 350 s on the H100: give it a device call of its own, or `--budget-s`.
"""

BATCH, IMAGE, DEPTHS, DIMS, CLASSES = 32, 224, (2, 2, 6, 2), (40, 80, 160, 320), 1000


def build(torch):
    nn, F = torch.nn, torch.nn.functional

    class GRN(nn.Module):
        """Global response normalization, on channels-last input."""

        def __init__(self, dim):
            super().__init__()
            self.gamma = nn.Parameter(torch.zeros(1, 1, 1, dim))
            self.beta = nn.Parameter(torch.zeros(1, 1, 1, dim))

        def forward(self, x):
            gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
            nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
            return self.gamma * (x * nx) + self.beta + x

    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)
            self.grn = GRN(4 * dim)
            self.pwconv2 = nn.Linear(4 * dim, dim)

        def forward(self, x):
            y = self.dwconv(x).permute(0, 2, 3, 1)
            y = self.pwconv2(self.grn(F.gelu(self.pwconv1(self.norm(y)))))
            return x + y.permute(0, 3, 1, 2)

    class ChannelsFirstNorm(nn.LayerNorm):
        def forward(self, x):
            return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    class ConvNeXtV2(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [nn.Conv2d(3, DIMS[0], kernel_size=4, stride=4), ChannelsFirstNorm(DIMS[0], eps=1e-6)]
            for i, (depth, dim) in enumerate(zip(DEPTHS, DIMS)):
                if i:
                    layers += [ChannelsFirstNorm(DIMS[i - 1], eps=1e-6),
                               nn.Conv2d(DIMS[i - 1], dim, kernel_size=2, stride=2)]
                layers += [Block(dim) for _ in range(depth)]
            self.features = nn.Sequential(*layers)
            self.norm = nn.LayerNorm(DIMS[-1], eps=1e-6)
            self.head = nn.Linear(DIMS[-1], CLASSES)

        def forward(self, x):
            return self.head(self.norm(self.features(x).mean(dim=(2, 3))))

    return ConvNeXtV2().to(device="cuda", dtype=torch.float16)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    x = torch.randn(BATCH, 3, IMAGE, IMAGE, device="cuda", dtype=torch.float16)

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(x).float().square().mean().backward()

    return step, step
