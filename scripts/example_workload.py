"""An end-to-end workload of your own for scripts/inductor_eval.py (`--workload-file`): copy this
file, change the model, and run

    python3 scripts/inductor_eval.py --handler generated/python/inductor_mmh100_choices.py \
        --out out/eval.json --workload-file my_model.py [--settings none,ours,max_autotune]

The workload is named after the file (here `example_workload`). `build(torch)` returns the model
on CUDA; `workload(torch, model, options)` compiles it with the options the evaluation passes
for each setting and returns `(first, step)`: `first()` runs until every graph is compiled (its
time is the compile time), `step()` is one step (captured in a CUDA graph and replayed, alternated
with the other settings, for the step time). It must use only tensors it keeps alive itself.

This one: a training step of two ViT-B/16 encoder layers (hidden 768, 12 heads of 64, MLP 3072,
linears with bias, attention as explicit matmuls so that its bmm reach Inductor) on 32 images of
197 tokens (196 patches and the class token), bf16.
"""

TOKENS, HIDDEN, HEADS, MLP, LAYERS, IMAGES = 197, 768, 12, 3072, 2, 32


def build(torch):
    nn, F = torch.nn, torch.nn.functional
    hd = HIDDEN // HEADS

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.n1, self.n2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.qkv, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.fc1, self.fc2 = nn.Linear(HIDDEN, MLP), nn.Linear(MLP, HIDDEN)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.n1(x)).view(b, t, 3, HEADS, hd).permute(2, 0, 3, 1, 4)
            p = torch.softmax(q @ k.transpose(-1, -2) * hd ** -0.5, dim=-1)
            x = x + self.proj((p @ v).transpose(1, 2).reshape(b, t, HIDDEN))
            return x + self.fc2(F.gelu(self.fc1(self.n2(x))))

    model = nn.Sequential(*(Layer() for _ in range(LAYERS)))
    return model.to(device="cuda", dtype=torch.bfloat16)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    x = torch.randn(IMAGES, TOKENS, HIDDEN, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(x).float().square().mean().backward()

    return step, step
