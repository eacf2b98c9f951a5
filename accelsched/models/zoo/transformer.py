"""Transformer encoder and decoder stacks: BERT-base / BERT-large encoders and GPT-2 small.

A sequence of ``S`` tokens with ``H`` hidden features is a ``H x 1 x S`` map:
the tokens sit in ``OX`` and ``OY = 1``, so every projection is a fully connected
layer applied per token. One block is::

    q, k, v = fc(x), fc(x), fc(x)                  # H -> H each
    scores  = matmul(q, k)   heads=h, rows=S, inner=H/h, cols=S
    context = matmul(scores, v)  heads=h, rows=S, inner=S, cols=H/h
    x1      = add(x, fc(context))                  # output projection, residual
    x2      = add(x1, fc(fc(x1)))                  # FFN H -> F -> H, residual

Softmax, LayerNorm, GELU, the attention scaling and masking cost no MACs and are
not layers. The attention products are counted in full (``S x S`` scores per head),
also for GPT-2's causal mask, as hardware that does not skip masked blocks computes
them. The first layer is the embedding sum (token + position embeddings, one add
per element, BERT's segment embedding folded in), an element-wise layer reading the
network input, so that the first block's residual has a producer.

No published MAC counts exist for these exact configurations; the zoo entries
carry none, and the tests check the MACs against the closed-form count
``blocks * (S * (4 H^2 + 2 H F) + 2 S^2 H)`` and against TinyBERT's published
22.5 GFLOPs for BERT-base at 128 tokens.
"""

from __future__ import annotations

from accelsched.models.builder import NetBuilder, Tensor
from accelsched.models.layer import OpKind
from accelsched.models.workload import Workload
from accelsched.models.zoo.catalog import register

__all__ = ["TokenNetBuilder", "encoder_block", "gpt2", "transformer_base", "transformer_large", "transformer_stack"]


class TokenNetBuilder(NetBuilder):
    """A :class:`NetBuilder` for token sequences, with an embedding-sum input layer.

    Parameters
    ----------
    name
        Network name.
    hidden
        Hidden size ``H`` (features per token).
    seq_len
        Sequence length ``S`` (tokens, laid out in ``OX``).
    batch
        Batch size.
    """

    def __init__(self, name: str, hidden: int, seq_len: int, *, batch: int = 1) -> None:
        super().__init__(name, hidden, 1, seq_len, batch=batch)

    def embedding_sum(self, *, name: str = "embed") -> Tensor:
        """Element-wise layer adding the position embeddings to the looked-up token embeddings.

        The layer reads the network input (the gathered token embeddings) and makes
        one add per element; the position table is a constant operand.

        Parameters
        ----------
        name
            Layer name.

        Returns
        -------
        Tensor
            The embedded sequence, ``H x 1 x S``.
        """
        x = self.input
        dims = {"K": 1, "C": 1, "G": x.channels, "OY": x.height, "OX": x.width}
        return self._make(name, "embed", OpKind.ELTWISE, (), x.channels, **dims)


def encoder_block(b: NetBuilder, x: Tensor, *, heads: int, ffn: int, name: str) -> Tensor:
    """One transformer block: multi-head self-attention and a feed-forward network, each with a residual.

    The block is the same for a post-LN encoder (BERT) and a pre-LN decoder (GPT-2):
    normalization layers are free.

    Parameters
    ----------
    b
        The builder.
    x
        Input token map ``H x 1 x S``, a single layer's output.
    heads
        Attention heads ``h`` (``H`` must be divisible by ``h``).
    ffn
        Inner size ``F`` of the feed-forward network.
    name
        Prefix of the layer names.

    Returns
    -------
    Tensor
        Output token map ``H x 1 x S``.
    """
    hidden, seq = x.channels, x.width
    if hidden % heads:
        raise ValueError(f"hidden size {hidden} is not divisible by {heads} heads")
    d_head = hidden // heads
    q = b.fc(x, hidden, name=f"{name}_q")
    k = b.fc(x, hidden, name=f"{name}_k")
    v = b.fc(x, hidden, name=f"{name}_v")
    scores = b.matmul(q, k, heads=heads, rows=seq, inner=d_head, cols=seq, name=f"{name}_qk")
    context = b.matmul(scores, v, heads=heads, rows=seq, inner=seq, cols=d_head, name=f"{name}_av")
    attn = b.fc(context, hidden, name=f"{name}_proj")
    x = b.add(x, attn, name=f"{name}_add1")
    y = b.fc(x, ffn, name=f"{name}_ffn1")
    y = b.fc(y, hidden, name=f"{name}_ffn2")
    return b.add(x, y, name=f"{name}_add2")


def transformer_stack(
    name: str, *, hidden: int, heads: int, ffn: int, blocks: int, seq_len: int, batch: int = 1
) -> Workload:
    """An embedding sum followed by ``blocks`` transformer blocks (no task head).

    Parameters
    ----------
    name
        Network name.
    hidden
        Hidden size ``H``.
    heads
        Attention heads.
    ffn
        Feed-forward inner size ``F``.
    blocks
        Number of blocks.
    seq_len
        Tokens ``S``.
    batch
        Batch size.

    Returns
    -------
    Workload
        The stack; block ``i`` has layers ``block{i}_q`` ... ``block{i}_add2``.
    """
    b = TokenNetBuilder(name, hidden, seq_len, batch=batch)
    x = b.embedding_sum()
    for i in range(blocks):
        x = encoder_block(b, x, heads=heads, ffn=ffn, name=f"block{i}")
    return b.build()


@register(
    "transformer_base",
    "BERT-base encoder: 12 blocks, hidden 768, 12 heads, FFN 3072, 512 tokens (no pooler / task head)",
    None,
    "Devlin et al. 2019 (BERT-base configuration); MACs checked against the closed-form count",
)
def transformer_base(batch: int = 1) -> Workload:
    """The full BERT-base encoder stack at sequence length 512.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return transformer_stack("transformer_base", hidden=768, heads=12, ffn=3072, blocks=12, seq_len=512, batch=batch)


@register(
    "transformer_large",
    "BERT-large encoder: 24 blocks, hidden 1024, 16 heads, FFN 4096, 512 tokens (no pooler / task head)",
    None,
    "Devlin et al. 2019 (BERT-large configuration); MACs checked against the closed-form count",
)
def transformer_large(batch: int = 1) -> Workload:
    """The full BERT-large encoder stack at sequence length 512.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return transformer_stack("transformer_large", hidden=1024, heads=16, ffn=4096, blocks=24, seq_len=512, batch=batch)


@register(
    "gpt2",
    "GPT-2 small decoder: 12 blocks, hidden 768, 12 heads, prefill of 1024 tokens (no LM head)",
    None,
    "Radford et al. 2019 (GPT-2 small configuration); MACs checked against the closed-form count",
)
def gpt2(batch: int = 1) -> Workload:
    """GPT-2 small processing a 1024-token prompt (prefill), without the LM head.

    The LM head (768 -> 50257 per token, tied to the token embedding) is left out:
    generation needs it on the last token only, which a per-token fc over the whole
    sequence cannot express, and over all tokens it would add 40 GMAC to the
    stack's 106.

    Parameters
    ----------
    batch
        Batch size.

    Returns
    -------
    Workload
        The network.
    """
    return transformer_stack("gpt2", hidden=768, heads=12, ffn=3072, blocks=12, seq_len=1024, batch=batch)
