"""llama_block.py: a LLaMA-style decoder block as a torch.nn.Module (issue 15's test model).

RMSNorm, rotary position embeddings from precomputed cos/sin buffers, causal
multi-head attention written as matmul/softmax (torch 1.13 has no
scaled_dot_product_attention) with a boolean mask buffer, and the SwiGLU
MLP, at small sizes so the end-to-end test stays quick (hidden 256, 4 heads,
sequence 32). Written to trace with both torch.fx (export_torch.py) and
torch.onnx.export: shapes come from x.shape, the buffers are sliced to the
sequence length, and there is no data-dependent control flow.

    /usr/bin/python3 scripts/export_torch.py tests/e2e/llama_block.py:LlamaBlock -o llama.json
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """x * rsqrt(mean(x^2) + eps) * weight, decomposed as LLaMA's reference code writes it."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaBlock(nn.Module):
    """One pre-norm decoder layer: x + attn(norm(x)), then + swiglu(norm(.))."""

    def __init__(self, dim=256, n_heads=4, ffn_dim=688, max_seq=32, base=10000.0):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.attention_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, ffn_dim, bias=False)
        self.w3 = nn.Linear(dim, ffn_dim, bias=False)
        self.w2 = nn.Linear(ffn_dim, dim, bias=False)
        inv = 1.0 / (base ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        ang = torch.outer(torch.arange(max_seq).float(), inv)
        ang = torch.cat((ang, ang), dim=-1)                     # [max_seq, head_dim]
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())
        self.register_buffer("causal", torch.ones(max_seq, max_seq).triu(1).bool())
        self.max_seq = max_seq
        self.dim = dim

    def example_inputs(self):
        return (torch.randn(1, self.max_seq, self.dim),)

    def forward(self, x):
        b, s, d = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.causal[:s, :s], float("-inf"))
        p = F.softmax(scores, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))
