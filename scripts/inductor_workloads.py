#!/usr/bin/env python3
"""The end-to-end workloads of scripts/inductor_eval.py: the built-in models (a LLaMA-style
decoder, trained or served; a BERT-style encoder), the GEMMs their code makes (what `--dry-run
--handler` decides), and a user's own workload file, registered by name. The models are built
from the `torch` a caller passes; loading this module imports no torch.
"""

import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from inductor_gemms import g  # noqa: E402 - one owner of a planned GEMM
from inductor_settings import WORKLOADS  # noqa: E402


def llama_gemms(workload, hidden=2048, inter=5632, heads=16, head_dim=128):
    """The GEMMs of the end-to-end workloads' bias-free linears (what --dry-run --handler decides;
    the attention runs in SDPA, not as bmm). Training: 8 x 1024 tokens, forward, input gradient
    and weight gradient; inference: prefill 4 x 512 tokens and decode m = 4."""
    bf, qkv = "bfloat16", heads * head_dim
    linears = [("q/k/v", hidden, qkv), ("o", qkv, hidden), ("gate/up", hidden, inter), ("down", inter, hidden)]
    out = []
    for what, i, o in linears:
        if workload == "llama_train":
            t = 8 * 1024
            out += [g("llama", f"{what} fwd", "mm", t, i, o, bf, tb=True),
                    g("llama", f"{what} grad_input", "mm", t, o, i, bf),
                    g("llama", f"{what} grad_weight", "mm", o, t, i, bf, ta=True)]
        else:
            out += [g("llama", f"{what} prefill 4x512", "mm", 4 * 512, i, o, bf, tb=True),
                    g("llama", f"{what} decode m=4", "mm", 4, i, o, bf, tb=True)]
    return out


def encoder_gemms(tokens=8 * 512, seq=512, hidden=768, heads=12, inter=3072, vocab=30522):
    """The GEMMs of `encoder_train` as its code lays them out (Inductor may see a transposed view
    materialised): each linear's forward addmm, input-gradient and weight-gradient mm; each
    attention matmul's forward and backward bmm."""
    fp, hd, bh = "float16", hidden // heads, tokens // seq * heads
    out = []
    for what, i, o in [("q/k/v", hidden, hidden), ("o", hidden, hidden), ("ffn up", hidden, inter),
                       ("ffn down", inter, hidden), ("mlm transform", hidden, hidden), ("mlm decoder", hidden, vocab)]:
        out += [g("encoder", f"{what} fwd", "addmm", tokens, i, o, fp, tb=True),
                g("encoder", f"{what} grad_input", "mm", tokens, o, i, fp),
                g("encoder", f"{what} grad_weight", "mm", o, tokens, i, fp, ta=True)]
    att = lambda what, m, k, n, **t: g("encoder", what, "bmm", m, k, n, fp, batch=bh, **t)  # noqa: E731
    out += [att("scores q@k.t", seq, hd, seq, tb=True), att("context p@v", seq, seq, hd),
            att("grad p = dctx@v.t", seq, hd, seq, tb=True), att("grad v = p.t@dctx", seq, seq, hd, ta=True),
            att("grad q = ds@k", seq, seq, hd), att("grad k = ds.t@q", seq, seq, hd, ta=True)]
    return out


def workload_gemms(workload):
    """The GEMMs an end-to-end workload's code makes (what --dry-run --handler decides)."""
    return encoder_gemms() if workload == "encoder_train" else llama_gemms(workload)


def llama(torch, layers=2, hidden=2048, inter=5632, heads=16, head_dim=128):
    """A LLaMA-style decoder stack (no embeddings, no RoPE), bf16 on CUDA."""
    nn, F = torch.nn, torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.weight

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            lin = lambda i, o: nn.Linear(i, o, bias=False)  # noqa: E731
            self.n1, self.n2 = RMSNorm(), RMSNorm()
            self.q, self.k, self.v = (lin(hidden, heads * head_dim) for _ in range(3))
            self.o = lin(heads * head_dim, hidden)
            self.gate, self.up, self.down = lin(hidden, inter), lin(hidden, inter), lin(inter, hidden)

        def qkv(self, x):
            b, t, _ = x.shape
            h = self.n1(x)
            return [p(h).view(b, t, heads, head_dim).transpose(1, 2) for p in (self.q, self.k, self.v)]

        def finish(self, x, attn):
            b, _, t, _ = attn.shape
            x = x + self.o(attn.transpose(1, 2).reshape(b, t, heads * head_dim))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

        def forward(self, x):
            q, k, v = self.qkv(x)
            return self.finish(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

        def prefill(self, x, kc, vc):
            q, k, v = self.qkv(x)
            kc[:, :, : x.shape[1]] = k
            vc[:, :, : x.shape[1]] = v
            return self.finish(x, F.scaled_dot_product_attention(q, k, v, is_causal=True))

        def decode(self, x, pos, kc, vc):
            q, k, v = self.qkv(x)
            kc.index_copy_(2, pos, k)
            vc.index_copy_(2, pos, v)
            mask = (torch.arange(kc.shape[2], device=x.device) <= pos).view(1, 1, 1, -1)
            return self.finish(x, F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

        def prefill(self, x, caches):
            for layer, (kc, vc) in zip(self.layers, caches):
                x = layer.prefill(x, kc, vc)
            return x

        def decode(self, x, pos, caches):
            for layer, (kc, vc) in zip(self.layers, caches):
                x = layer.decode(x, pos, kc, vc)
            return x

    return Decoder().to(device="cuda", dtype=torch.bfloat16)


def train_workload(torch, model, options, shape=(8, 1024, 2048)):
    """(first-call function, step function) of a forward+backward on an input of `shape`
    (batch, tokens, hidden; default the decoder's 8 x 1024 tokens) in the model's dtype."""
    compiled = torch.compile(model, dynamic=False, options=options)
    dtype = next(model.parameters()).dtype
    x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)

    def step():
        for p in model.parameters():
            p.grad = None
        compiled(x).float().square().mean().backward()

    return step, step


def infer_workload(torch, model, options, batch=4, prompt=512, steps=32):
    """(first-call function, workload function): prefill then `steps` decode steps, static cache."""
    prefill = torch.compile(model.prefill, dynamic=False, options=options)
    decode = torch.compile(model.decode, dynamic=False, options=options)
    shape = (batch, 16, prompt + steps, 128)
    caches = [(torch.zeros(shape, device="cuda", dtype=torch.bfloat16),
               torch.zeros(shape, device="cuda", dtype=torch.bfloat16)) for _ in model.layers]
    x = torch.randn(batch, prompt, 2048, device="cuda", dtype=torch.bfloat16)
    tok = torch.randn(batch, 1, 2048, device="cuda", dtype=torch.bfloat16)
    positions = [torch.tensor([prompt + i], device="cuda") for i in range(steps)]

    def first():
        prefill(x, caches)
        decode(tok, positions[0], caches)

    def run():
        with torch.no_grad():
            prefill(x, caches)
            for p in positions:
                decode(tok, p, caches)

    def first_no_grad():
        with torch.no_grad():
            first()

    return first_no_grad, run


def encoder(torch, layers=2, hidden=768, heads=12, inter=3072, vocab=30522):
    """A BERT-base-style encoder stack with its MLM head (no embeddings), fp16 on CUDA: linears
    with bias (addmm), attention as explicit matmuls (bmm) and softmax."""
    nn, F = torch.nn, torch.nn.functional
    hd = hidden // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
            self.up, self.down = nn.Linear(hidden, inter), nn.Linear(inter, hidden)
            self.n1, self.n2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (p(x).view(b, t, heads, hd).transpose(1, 2) for p in (self.q, self.k, self.v))
            p = torch.softmax(q @ k.transpose(-1, -2) * hd ** -0.5, dim=-1)
            x = self.n1(x + self.o((p @ v).transpose(1, 2).reshape(b, t, hidden)))
            return self.n2(x + self.down(F.gelu(self.up(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.transform, self.norm = nn.Linear(hidden, hidden), nn.LayerNorm(hidden)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.decoder(self.norm(F.gelu(self.transform(x))))

    return Encoder().to(device="cuda", dtype=torch.float16)


def encoder_workload(torch, model, options):
    """(first-call function, step function) of a forward+backward on 8 x 512 tokens."""
    return train_workload(torch, model, options, shape=(8, 512, 768))


E2E = {  # workload: (model, workload)
    "llama_train": (llama, train_workload),
    "llama_infer": (llama, infer_workload),
    "encoder_train": (encoder, encoder_workload),
}


class WorkloadFileError(ValueError):
    """A --workload-file that cannot be used (named in the message)."""


def load_workload_file(path):
    """Registers the end-to-end workload of a Python file under its stem and returns that name.
    The file defines `build(torch)`, which returns the model on CUDA, and `workload(torch, model,
    options)`, which compiles it with `torch.compile(..., options=options)` and returns `(first,
    step)`: `first()` makes the first call(s) until every graph is compiled (timed as compile
    time), `step()` one step (captured in a CUDA graph and replayed for the step time), as the
    built-in workloads do (docs/inductor.md). Loading runs no torch."""
    name = os.path.splitext(os.path.basename(path))[0]
    if name in E2E or name in WORKLOADS or not name.isidentifier():
        raise WorkloadFileError(f"{path}: the workload would be named {name!r}, which is taken or not an "
                                f"identifier; rename the file")
    spec = importlib.util.spec_from_file_location(f"ah_workload_{name}", path)
    if spec is None:
        raise WorkloadFileError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Importable by name, as Dynamo imports the module of a class it traces (the file's model).
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - the user's file: any error at import is theirs to see
        del sys.modules[spec.name]
        raise WorkloadFileError(f"{path}: cannot load it ({type(e).__name__}: {e})") from e
    missing = [f for f in ("build", "workload") if not callable(getattr(module, f, None))]
    if missing:
        del sys.modules[spec.name]
        raise WorkloadFileError(f"{path}: defines no {' and no '.join(missing)}(...); see load_workload_file")
    E2E[name] = (module.build, module.workload)
    return name
