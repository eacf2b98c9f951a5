"""Export the ONNX test fixtures with PyTorch and strip them to their shapes.

Run with PyTorch, torchvision, onnxscript and transformers installed (the test
suite needs none of them)::

    python tests/data/onnx/make_fixtures.py [--only NAME ...] [--full DIR]

For every model below and both exporters of ``torch.onnx.export`` (the
TorchScript-based one, ``dynamo=False``, and the dynamo-based one), the model is
exported with its randomly initialised weights, every initializer of more than
:data:`~accelsched.models.onnx_strip.KEEP_ELEMENTS` values is reduced to its shape
(:func:`~accelsched.models.onnx_strip.strip_file`), and the stripped file is written
here as ``NAME.EXPORTER.onnx`` (``EXPORTER`` is ``ts`` or ``dynamo``). ``--full DIR``
also keeps the full exports in ``DIR``. ``manifest.json`` records the versions that
made the files and each input shape.

The transformers are ``transformers``' BERT-base and GPT-2 small with their
default configurations, randomly initialised, on 128 tokens, with the eager
attention implementation (explicit ``MatMul`` / ``Softmax``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torchvision

from accelsched.models.onnx_strip import strip_file

HERE = Path(__file__).parent
SEQ = 128
"""Tokens of the language-model exports."""

VISION: dict[str, int] = {
    "alexnet": 224, "resnet18": 224, "resnet50": 224, "mobilenet_v2": 224, "mobilenet_v3_large": 224,
    "mobilenet_v3_small": 224, "efficientnet_b0": 224, "googlenet": 224, "inception_v3": 299,
    "squeezenet1_0": 224, "squeezenet1_1": 224, "vgg16": 224, "densenet121": 224, "shufflenet_v2_x1_0": 224,
    "regnet_y_400mf": 224, "regnet_x_400mf": 224, "convnext_tiny": 224, "vit_b_16": 224, "swin_t": 224,
}  # fmt: skip
"""torchvision classification models and their input resolutions."""


def _vision(name: str) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    kwargs: dict[str, Any] = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=False)
    model = torchvision.models.get_model(name, **kwargs)
    size = VISION[name]
    return model, (torch.randn(1, 3, size, size),)


class _LastHidden(torch.nn.Module):
    """A ``transformers`` model returning only its last hidden state."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.inner(input_ids=ids).last_hidden_state  # type: ignore[no-any-return]


def _language(name: str) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    import transformers

    if name == "bert_base":
        model = transformers.BertModel(transformers.BertConfig(attn_implementation="eager"), add_pooling_layer=False)
    else:
        model = transformers.GPT2Model(transformers.GPT2Config(attn_implementation="eager"))
    return _LastHidden(model), (torch.zeros(1, SEQ, dtype=torch.long),)


MODELS: dict[str, Callable[[str], tuple[torch.nn.Module, tuple[Any, ...]]]] = {
    **dict.fromkeys(VISION, _vision),
    "bert_base": _language,
    "gpt2": _language,
}


def export(name: str, exporter: str, full: Path | None) -> dict[str, Any]:
    """Export one model with one exporter and write its stripped file; the manifest entry."""
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # the fused attention kernel has no ONNX export
    model, args = MODELS[name](name)
    model.eval()
    dst = HERE / f"{name}.{exporter}.onnx"
    with tempfile.TemporaryDirectory() as tmp:
        src = (full or Path(tmp)) / f"{name}.{exporter}.onnx"
        with torch.no_grad():
            torch.onnx.export(
                model, args, str(src), dynamo=exporter == "dynamo", input_names=["input"], output_names=["output"]
            )
        strip_file(src, dst)
    return {"input": list(args[0].shape), "bytes": dst.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(MODELS), help="models to export (default: all)")
    parser.add_argument("--exporters", nargs="*", default=["ts", "dynamo"], choices=["ts", "dynamo"])
    parser.add_argument("--full", type=Path, help="also keep the full exports in this directory")
    args = parser.parse_args(argv)
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"models": {}}
    import transformers

    manifest["versions"] = {
        "torch": torch.__version__, "torchvision": torchvision.__version__, "transformers": transformers.__version__,
    }  # fmt: skip
    failed = 0
    for name in args.only:
        for exporter in args.exporters:
            try:
                manifest["models"][f"{name}.{exporter}"] = export(name, exporter, args.full)
                print(f"{name}.{exporter}: ok", flush=True)
            except Exception:  # an exporter failure is reported and the others still run
                failed += 1
                print(f"{name}.{exporter}: export failed\n{traceback.format_exc(limit=3)}", file=sys.stderr)
    manifest["models"] = dict(sorted(manifest["models"].items()))
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
