"""jax_models.py: the JAX models jax_truth.py compiles, in plain jax.numpy / lax.

    MODELS: name -> (what it is, make(seed) -> (f, weights, inputs))

f(weights, *inputs) is a pure function of a dict of float32 weights and the
inputs. Written with jnp / lax primitives only (no jax.nn: its functions
are custom_jvp calls; relu is max(x, 0), GELU the tanh form spelled out),
so that each jaxpr equation is one primitive jaxpr_fuseeng.py maps.
"""
import math

import numpy as np


def _rand(rng, *shape, scale=0.02):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def mlp(seed=0, n=128, d=512, h=2048):
    """Two dense layers with a bias and ReLU, a residual and a LayerNorm."""
    import jax.numpy as jnp
    rng = np.random.default_rng(seed)
    w = {"w1": _rand(rng, d, h), "b1": _rand(rng, h), "w2": _rand(rng, h, d), "b2": _rand(rng, d),
         "g": np.ones(d, np.float32), "beta": np.zeros(d, np.float32)}

    def f(w, x):
        y = jnp.maximum(x @ w["w1"] + w["b1"], 0.0) @ w["w2"] + w["b2"] + x
        mu = jnp.mean(y, axis=-1, keepdims=True)
        var = jnp.mean((y - mu) ** 2, axis=-1, keepdims=True)
        return (y - mu) * (1.0 / jnp.sqrt(var + 1e-5)) * w["g"] + w["beta"]
    return f, w, [_rand(rng, n, d, scale=1.0)]


def _ln(x, g, b):
    import jax.numpy as jnp
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def gpt2_block(seed=0, s=128, d=768, heads=12):
    """GPT-2's block: pre-LN, causal softmax attention, tanh-GELU MLP."""
    import jax.numpy as jnp
    rng = np.random.default_rng(seed)
    w = {"ln1_g": np.ones(d, np.float32), "ln1_b": np.zeros(d, np.float32),
         "qkv": _rand(rng, d, 3 * d), "qkv_b": _rand(rng, 3 * d), "proj": _rand(rng, d, d),
         "proj_b": _rand(rng, d), "ln2_g": np.ones(d, np.float32), "ln2_b": np.zeros(d, np.float32),
         "fc": _rand(rng, d, 4 * d), "fc_b": _rand(rng, 4 * d), "fc2": _rand(rng, 4 * d, d),
         "fc2_b": _rand(rng, d)}
    mask = np.tril(np.ones((s, s), bool))
    dh = d // heads

    def f(w, x):
        qkv = _ln(x, w["ln1_g"], w["ln1_b"]) @ w["qkv"] + w["qkv_b"]
        q, k, v = (qkv[:, i * d:(i + 1) * d].reshape(s, heads, dh).transpose(1, 0, 2) for i in range(3))
        att = (q @ k.transpose(0, 2, 1)) * (1.0 / math.sqrt(dh))
        att = jnp.where(mask, att, np.float32(-1e9))
        att = jnp.exp(att - jnp.max(att, axis=-1, keepdims=True))
        att = att / jnp.sum(att, axis=-1, keepdims=True)
        y = (att @ v).transpose(1, 0, 2).reshape(s, d)
        x = x + y @ w["proj"] + w["proj_b"]
        hdn = _ln(x, w["ln2_g"], w["ln2_b"]) @ w["fc"] + w["fc_b"]
        hdn = 0.5 * hdn * (1.0 + jnp.tanh(0.7978845608 * (hdn + 0.044715 * hdn ** 3)))
        return x + hdn @ w["fc2"] + w["fc2_b"]
    return f, w, [_rand(rng, s, d, scale=1.0)]


def resnet_block(seed=0, n=1, c=64, hw=56):
    """ResNet's basic block (NCHW): conv3x3, batch norm (inference), ReLU, twice, and the residual."""
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(seed)
    w = {"w1": _rand(rng, c, c, 3, 3, scale=0.05), "s1": np.ones(c, np.float32), "t1": np.zeros(c, np.float32),
         "w2": _rand(rng, c, c, 3, 3, scale=0.05), "s2": np.ones(c, np.float32), "t2": np.zeros(c, np.float32)}

    def conv(x, k):
        return lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (1, 1)),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def bn(x, s, t):   # folded inference batch norm: a per-channel scale and shift
        return x * s.reshape(1, c, 1, 1) + t.reshape(1, c, 1, 1)

    def f(w, x):
        y = jnp.maximum(bn(conv(x, w["w1"]), w["s1"], w["t1"]), 0.0)
        y = bn(conv(y, w["w2"]), w["s2"], w["t2"])
        return jnp.maximum(y + x, 0.0)
    return f, w, [_rand(rng, n, c, hw, hw, scale=1.0)]


MODELS = {
    "jax_mlp": ("MLP: 128x512 -> 2048 -> 512, ReLU, residual, LayerNorm", mlp),
    "jax_gpt2_block": ("GPT-2 block, S 128, d 768, 12 heads", gpt2_block),
    "jax_resnet_block": ("ResNet basic block, 1x64x56x56 NCHW", resnet_block),
}
