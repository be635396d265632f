"""End-to-end workload for scripts/inductor_eval.py (`--workload-file`): a training step of DLRM
(Naumov et al., 2019, "Deep Learning Recommendation Model for Personalization and Recommendation
Systems"; facebookresearch/dlrm) in the shape of MLPerf's Criteo Terabyte benchmark, in fp32.

MLPerf's DLRM (v1) configuration: 13 dense features through a bottom MLP 13-512-256-128, 26 sparse
features embedded in 128 dimensions, the pairwise dot interaction of the 27 vectors (351 products
below the diagonal, with the bottom MLP's output: 479 wide), a top MLP 479-1024-1024-512-256-1,
ReLU between layers, and a binary cross-entropy loss on the click label. Ours: 4096 samples a
step, 10000 rows per table (Terabyte's largest have 40 million: ours keeps the dense gradient of
the tables, which a real DLRM keeps sparse, from outweighing the GEMMs), the 26 tables stored
as one, and fp32 with TF32 off (as the evaluation runs every workload).

Its GEMMs are small and odd, where the handler's decisions are hardest: the bottom MLP's first
layer contracts over 13 (4096 x 13 x 512), the top MLP's over 479, the last layer is a linear to
one output (4096 x 256 x 1), the interaction is bmm 4096 x 27 x 128 x 27, and each weight
gradient contracts over the 4096 samples.
"""

SAMPLES, DENSE, SPARSE, DIM, ROWS = 4096, 13, 26, 128, 10_000
BOTTOM, TOP = (512, 256, 128), (1024, 1024, 512, 256, 1)


def build(torch):
    nn = torch.nn

    def mlp(widths):
        layers = []
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(widths) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    vectors = SPARSE + 1
    pairs = vectors * (vectors - 1) // 2

    class DLRM(nn.Module):
        def __init__(self):
            super().__init__()
            self.bottom = mlp((DENSE, *BOTTOM))
            self.tables = nn.Embedding(SPARSE * ROWS, DIM)
            self.top = mlp((DIM + pairs, *TOP))
            li, lj = torch.tril_indices(vectors, vectors, offset=-1)
            self.register_buffer("li", li, persistent=False)
            self.register_buffer("lj", lj, persistent=False)
            self.register_buffer("offsets", torch.arange(SPARSE) * ROWS, persistent=False)

        def forward(self, dense, sparse):
            x = torch.relu(self.bottom(dense))
            t = torch.cat([x.unsqueeze(1), self.tables(sparse + self.offsets)], dim=1)
            z = torch.bmm(t, t.transpose(1, 2))[:, self.li, self.lj]
            return self.top(torch.cat([x, z], dim=1)).squeeze(1)

    return DLRM().to(device="cuda", dtype=torch.float32)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    dense = torch.randn(SAMPLES, DENSE, device="cuda").abs().log1p()
    sparse = torch.randint(0, ROWS, (SAMPLES, SPARSE), device="cuda")
    clicks = torch.randint(0, 2, (SAMPLES,), device="cuda").float()

    def step():
        for p in model.parameters():
            p.grad = None
        logits = compiled(dense, sparse)
        torch.nn.functional.binary_cross_entropy_with_logits(logits, clicks).backward()

    return step, step
