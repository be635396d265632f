"""End-to-end workload for scripts/inductor_eval.py (`--workload-file`): a training step of
GPT-2 small's shapes in fp16.

The model has two decoder layers of GPT-2 small (openai-community/gpt2 config.json: n_embd 768,
n_head 12, n_inner 3072, vocab_size 50257), with tied input and output embeddings. Its linears
have biases (GPT-2's Conv1D). Attention is written as explicit causal matmuls so that its bmm
reach Inductor. The batch is 8 sequences of 1024 tokens, in fp16.

The tied LM head is the GEMM of note: logits are 8192 x 768 x 50257, where the vocabulary size is
odd. Its input gradient is 8192 x 50257 x 768 and its weight gradient 50257 x 8192 x 768.
"""

SEQS, TOKENS, HIDDEN, HEADS, MLP, VOCAB, LAYERS = 8, 1024, 768, 12, 3072, 50257, 2


def build(torch):
    nn, F = torch.nn, torch.nn.functional
    hd = HIDDEN // HEADS

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.attn, self.proj = nn.Linear(HIDDEN, 3 * HIDDEN), nn.Linear(HIDDEN, HIDDEN)
            self.fc, self.out = nn.Linear(HIDDEN, MLP), nn.Linear(MLP, HIDDEN)
            mask = torch.ones(TOKENS, TOKENS, dtype=torch.bool).triu(1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.attn(self.ln1(x)).view(b, t, 3, HEADS, hd).permute(2, 0, 3, 1, 4)
            s = (q @ k.transpose(-1, -2)) * hd ** -0.5
            p = torch.softmax(s.masked_fill(self.mask, float("-inf")), dim=-1)
            x = x + self.proj((p @ v).transpose(1, 2).reshape(b, t, HIDDEN))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(TOKENS, HIDDEN)
            self.blocks = nn.Sequential(*(Block() for _ in range(LAYERS)))
            self.ln_f = nn.LayerNorm(HIDDEN)

        def forward(self, ids):
            x = self.wte(ids) + self.wpe.weight
            return self.ln_f(self.blocks(x)) @ self.wte.weight.t()

    return GPT2().to(device="cuda", dtype=torch.float16)


def workload(torch, model, options):
    compiled = torch.compile(model, dynamic=False, options=options)
    ids = torch.randint(0, VOCAB, (SEQS, TOKENS), device="cuda")
    labels = torch.randint(0, VOCAB, (SEQS * TOKENS,), device="cuda")

    def step():
        for p in model.parameters():
            p.grad = None
        logits = compiled(ids).float().view(-1, VOCAB)
        torch.nn.functional.cross_entropy(logits, labels).backward()

    return step, step
