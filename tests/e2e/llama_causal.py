"""llama_causal.py: a LLaMA-style block that builds its positions and causal
mask from the sequence length at run time (issue 37's symbolic dims).

Unlike llama_block.py, whose rotary tables and mask are buffers sliced to
the length, this block computes them as LLaMA's reference code does:
positions from torch.arange(s), the rotary angles from them, and the
causal mask either as torch.full((s, s), -inf).triu(1) added to the scores
(mask="triu") or as a comparison of positions, as Hugging Face's code
builds it (mask="compare"). Exported with a free sequence length
(`--input x=1xSx64 --dim S=16`), every one of them must stay a computation
on S for the model to hold at another length.

    /usr/bin/python3 scripts/export_torch.py tests/e2e/llama_causal.py:LlamaCausal \\
        -o m.json --input x=1xSx64 --dim S=16
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class LlamaCausal(nn.Module):
    """x + attn(norm(x)), then + swiglu(norm(.)); positions and mask from s."""

    def __init__(self, dim=64, n_heads=4, ffn_dim=160, base=10000.0, mask="triu"):
        super().__init__()
        self.n_heads, self.head_dim, self.mask = n_heads, dim // n_heads, mask
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.w1 = nn.Linear(dim, ffn_dim, bias=False)
        self.w3 = nn.Linear(dim, ffn_dim, bias=False)
        self.w2 = nn.Linear(ffn_dim, dim, bias=False)
        half = torch.arange(0, self.head_dim, 2).float() / self.head_dim
        self.register_buffer("inv_freq", 1.0 / (base ** half))

    def example_inputs(self):
        return (torch.randn(1, 16, self.n_heads * self.head_dim),)

    def forward(self, x):
        b, s, d = x.shape
        pos = torch.arange(s)
        ang = pos[:, None].float() * self.inv_freq[None, :]          # [s, hd/2]
        ang = torch.cat((ang, ang), dim=-1)
        cos, sin = ang.cos(), ang.sin()
        h = self.attention_norm(x)
        q = self.wq(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, s, self.n_heads, self.head_dim).transpose(1, 2)
        half = self.head_dim // 2
        q = q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin
        k = k * cos + torch.cat((-k[..., half:], k[..., :half]), dim=-1) * sin
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if self.mask == "triu":
            scores = scores + torch.full((s, s), float("-inf")).triu(1)
        else:
            scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        p = F.softmax(scores, dim=-1)
        o = torch.matmul(p, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class LlamaCausalCompare(LlamaCausal):
    """The same block with the mask as a comparison of positions."""

    def __init__(self):
        super().__init__(mask="compare")


class DataDependentLength(nn.Module):
    """Bad input for symbolic dims: a length computed from the data, not from S."""

    def forward(self, x):
        k = int((x[0, :, 0] > 0).sum()) + 1
        return x[:, :k] * 2


class HalfLength(nn.Module):
    """A size computed from S that no dim name says (S // 2): folded, with a warning."""

    def forward(self, x):
        return x[:, : x.shape[1] // 2] * 2
