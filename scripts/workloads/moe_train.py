"""End-to-end workload for scripts/inductor_eval.py (`--workload-file`): a training step of two
mixture-of-experts feed-forward layers with expert-choice routing, in bf16.

Expert-choice routing (Zhou et al., 2022, "Mixture-of-Experts with Expert Choice Routing") has
each expert take its top-C tokens by router score. That keeps every shape static, so the experts
run as batched GEMMs. The sizes follow a small modern MoE: hidden 2048, 8 experts, SwiGLU expert
FFN 1408, capacity factor 2, and 8192 tokens (4 sequences of 2048).

The GEMMs are the router (8192 x 2048 x 8, a narrow output), the experts' gate and up projections
(bmm 8 x 4096 x 2048 x 1408) and their down projection (bmm 8 x 4096 x 1408 x 2048), with both
gradients of each.
"""

TOKENS, HIDDEN, EXPERTS, FFN, CAPACITY_FACTOR, LAYERS = 8192, 2048, 8, 1408, 2, 2


def build(torch):
    nn, F = torch.nn, torch.nn.functional
    capacity = TOKENS * CAPACITY_FACTOR // EXPERTS

    class ExpertChoiceMoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.RMSNorm(HIDDEN)
            self.router = nn.Linear(HIDDEN, EXPERTS, bias=False)
            scale = HIDDEN ** -0.5
            self.w_gate = nn.Parameter(torch.randn(EXPERTS, HIDDEN, FFN) * scale)
            self.w_up = nn.Parameter(torch.randn(EXPERTS, HIDDEN, FFN) * scale)
            self.w_down = nn.Parameter(torch.randn(EXPERTS, FFN, HIDDEN) * FFN ** -0.5)

        def forward(self, x):
            h = self.norm(x)
            scores = torch.softmax(self.router(h).float(), dim=-1).t()  # (experts, tokens)
            gates, idx = scores.topk(capacity, dim=-1)  # each expert's tokens
            picked = h[idx]  # (experts, capacity, hidden)
            y = (F.silu(picked @ self.w_gate) * (picked @ self.w_up)) @ self.w_down
            y = y * gates.unsqueeze(-1).to(y.dtype)
            return x.index_add(0, idx.reshape(-1), y.reshape(-1, HIDDEN))

    model = nn.Sequential(*(ExpertChoiceMoE() for _ in range(LAYERS)))
    return model.to(device="cuda", dtype=torch.bfloat16)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    x = torch.randn(TOKENS, HIDDEN, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(x).float().square().mean().backward()

    return step, step
