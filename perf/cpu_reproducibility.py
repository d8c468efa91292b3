"""Do two CPUs give the same bits? A probe for the committed toy outputs.

The toy DAG's float work runs on torch's CPU kernels: the quick NLI model is fine-tuned
(a 6-layer, 384-wide encoder; AdamW, gradient clipping) and SmolLM2-135M generates with
seeded sampling (a 30-layer, 576-wide grouped-query decoder); numpy then turns scores into
metrics. This probe runs the same workloads in the same shapes, from fixed seeds, with random
weights (no model files: pure torch and numpy, so it runs on any machine and any torch build),
and prints a SHA-256 of every result.

Each setting runs in its own process, since torch and MKL read their environment once:

* ``default``: what every stage runs with (torch picks the widest vector kernels the CPU
  has), at the stages' fixed 2 torch threads and at 1;
* ``avx2``: every kernel pinned to AVX2 (``ATEN_CPU_CAPABILITY=avx2`` for torch's own
  kernels, ``MKL_CBWR=AVX2`` for MKL's BLAS, ``ONEDNN_MAX_CPU_ISA=AVX2`` for oneDNN), what a
  CPU without AVX-512 computes, and the price of making every CPU compute that;
* ``avx2 strict``: the same with MKL's strict mode.

Run it on two machines and compare the digests: equal digests mean that setting reproduces
bit for bit across those CPUs. ``--record`` adds this machine to the results file;
``--reference`` marks it as the machine the committed toy outputs were made on, whose
stage-setting digests ``tests/test_make_run.py`` compares against before it expects a fresh
``make run`` to leave every committed output unchanged::

    python perf/cpu_reproducibility.py --record perf/cpu_reproducibility.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
SETTINGS: dict[str, tuple[dict[str, str], int]] = {
    "default, 2 threads": ({}, 2),
    "default, 1 thread": ({}, 1),
    "avx2, 2 threads": (PINNED, 2),
    "avx2, 1 thread": (PINNED, 1),
    "avx2 strict, 2 threads": (PINNED | {"MKL_CBWR": "AVX2,STRICT"}, 2),
    "avx2 strict, 1 thread": (PINNED | {"MKL_CBWR": "AVX2,STRICT"}, 1),
}
#: The setting the stages run in (hallulab.pipeline.runner fixes 2 torch threads).
STAGE_SETTING = "default, 2 threads"
DIGESTS = ("encoder_training", "decoder_sampling", "numpy_ufuncs")
VECTOR_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile", "amx_bf16")
STRIPPED = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "ATEN_CPU_CAPABILITY",
    "MKL_CBWR",
    "ONEDNN_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
)


def _digest(*tensors: Any) -> str:
    sha = hashlib.sha256()
    for tensor in tensors:
        sha.update(tensor.detach().contiguous().cpu().numpy().tobytes())
    return sha.hexdigest()[:16]


def _encoder_training(torch: Any) -> str:
    """MiniLM-shaped cross-encoder, 6 AdamW steps on padded batches of varying length. No
    dropout: with it, torch's own attention layer gave other weights in about 1 process in 8
    at 2 threads (a race, not the CPU); the NLI model's own training is checked for that in
    ``tests/test_nli_train.py``."""
    torch.manual_seed(0)
    vocab, width = 30522, 384
    embed = torch.nn.Embedding(vocab, width)
    layer = torch.nn.TransformerEncoderLayer(width, 12, 1536, dropout=0.0, activation="gelu", batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
    head = torch.nn.Linear(width, 3)
    params = [*embed.parameters(), *encoder.parameters(), *head.parameters()]
    optimizer = torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01)
    for step in range(6):
        length = 40 + 7 * step
        ids = torch.randint(0, vocab, (16, length))
        lengths = torch.randint(length // 2, length + 1, (16,))
        pad = torch.arange(length)[None, :] >= lengths[:, None]
        hidden = encoder(embed(ids), src_key_padding_mask=pad)
        loss = torch.nn.functional.cross_entropy(head(hidden[:, 0]), torch.randint(0, 3, (16,)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad()
    return _digest(*params)


def _rms(x: Any, weight: Any) -> Any:
    return x * (x.pow(2).mean(-1, keepdim=True) + 1e-5).rsqrt() * weight


def _decoder_sampling(torch: Any) -> str:
    """SmolLM2-shaped decoder (30 layers, 9 query / 3 key-value heads, SwiGLU, rotary),
    12 tokens sampled at temperature 1 with a seeded generator, recomputing the prefix."""
    torch.manual_seed(1)
    vocab, width, layers, heads, kv_heads, inner = 49152, 576, 30, 9, 3, 1536
    head_dim = width // heads

    def weight(*shape: int) -> Any:
        return torch.randn(*shape) * 0.02

    embed = weight(vocab, width)
    blocks = [
        {
            "q": weight(width, width),
            "k": weight(kv_heads * head_dim, width),
            "v": weight(kv_heads * head_dim, width),
            "o": weight(width, width),
            "gate": weight(inner, width),
            "up": weight(inner, width),
            "down": weight(width, inner),
            "n1": torch.ones(width),
            "n2": torch.ones(width),
        }
        for _ in range(layers)
    ]
    norm = torch.ones(width)
    inv_freq = 1.0 / (100000 ** (torch.arange(0, head_dim, 2).float() / head_dim))

    def rotate(x: Any, cos: Any, sin: Any) -> Any:
        half = x.shape[-1] // 2
        turned = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + turned * sin

    def forward(ids: Any) -> Any:
        batch, length = ids.shape
        angles = torch.outer(torch.arange(length).float(), inv_freq)
        cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
        x = embed[ids]
        for block in blocks:
            h = _rms(x, block["n1"])
            q = (h @ block["q"].T).view(batch, length, heads, head_dim).transpose(1, 2)
            k = (h @ block["k"].T).view(batch, length, kv_heads, head_dim).transpose(1, 2)
            v = (h @ block["v"].T).view(batch, length, kv_heads, head_dim).transpose(1, 2)
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
            k, v = k.repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)
            attended = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + attended.transpose(1, 2).reshape(batch, length, width) @ block["o"].T
            h = _rms(x, block["n2"])
            x = x + (torch.nn.functional.silu(h @ block["gate"].T) * (h @ block["up"].T)) @ block["down"].T
        return _rms(x, norm) @ embed.T

    generator = torch.Generator().manual_seed(2)
    ids = torch.randint(0, vocab, (4, 20), generator=generator)
    with torch.no_grad():
        for _ in range(12):
            logits = forward(ids)[:, -1].float()
            probs = torch.softmax(logits, -1)
            ids = torch.cat((ids, torch.multinomial(probs, 1, generator=generator)), 1)
        final = torch.log_softmax(forward(ids)[:, -1], -1)
    return _digest(ids, final)


def _numpy_ufuncs() -> str:
    """The numpy a stage runs after the models: log, exp, softmax-like sums, means, tanh
    (numpy picks AVX-512 or AVX2 loops for some of these, as torch does)."""
    import numpy as np

    values = np.random.default_rng(3).random(100_003) + 1e-6
    logged = np.log(values)
    soft = np.exp(logged - logged.max())
    out = np.concatenate([logged, soft / soft.sum(), np.tanh(values), np.cumsum(values)[-1:], [values.mean()]])
    return hashlib.sha256(out.tobytes()).hexdigest()[:16]


def _one_setting(threads: int) -> dict[str, Any]:
    import torch

    torch.set_num_threads(threads)
    result: dict[str, Any] = {"capability": torch.backends.cpu.get_cpu_capability(), "seconds": {}}
    for name, workload in (
        ("encoder_training", lambda: _encoder_training(torch)),
        ("decoder_sampling", lambda: _decoder_sampling(torch)),
        ("numpy_ufuncs", _numpy_ufuncs),
    ):
        started = time.perf_counter()
        result[name] = workload()
        result["seconds"][name] = round(time.perf_counter() - started, 2)
    return result


def stage_digests(result: dict[str, Any]) -> dict[str, str]:
    """A setting's three workload digests, the shape of the results file's ``reference``."""
    return {key: result[key] for key in DIGESTS}


def fingerprint() -> dict[str, str]:
    """This machine's digests in the setting every stage runs in (default kernels, 2 torch
    threads), computed once in a fresh process."""
    return stage_digests(_run_setting(*SETTINGS[STAGE_SETTING]))


def _run_setting(env: dict[str, str], threads: int) -> dict[str, Any]:
    child_env = {k: v for k, v in os.environ.items() if k not in STRIPPED} | env
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(threads)], env=child_env, capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _cpuinfo(field: str) -> str:
    info = Path("/proc/cpuinfo")
    for line in info.read_text().splitlines() if info.exists() else []:
        if line.startswith(field):
            return line.split(":", 1)[1].strip()
    return ""


def machine() -> dict[str, Any]:
    """What identifies this CPU for the probe: its name, vendor and vector extensions."""
    flags = set(_cpuinfo("flags").split())
    return {
        "cpu": _cpuinfo("model name") or platform.processor(),
        "vendor": _cpuinfo("vendor_id"),
        "vector_flags": [flag for flag in VECTOR_FLAGS if flag in flags],
        "cores": os.cpu_count(),
    }


def _same_machine(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("cpu", "vendor", "vector_flags", "torch")
    return all(a.get(key) == b.get(key) for key in keys)


def record(path: Path, report: dict[str, Any], *, reference: bool) -> None:
    """Add (or replace) this machine's report in the results file at ``path``; with
    ``reference``, its stage-setting digests become those the committed outputs were made with."""
    recorded: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    machines = [report if _same_machine(m, report) else m for m in recorded.get("machines", [])]
    if report not in machines:
        machines.append(report)
    stage = stage_digests(report["settings"][STAGE_SETTING])
    recorded = {
        "command": "python perf/cpu_reproducibility.py --record perf/cpu_reproducibility.json",
        "stage_setting": STAGE_SETTING,
        "reference": stage if reference else recorded.get("reference"),
        "machines": machines,
    }
    path.write_text(json.dumps(recorded, indent=2) + "\n")
    path.with_suffix(".md").write_text(render_table(recorded))


def combined_digest(result: dict[str, Any]) -> str:
    """One digest of a setting's three workloads (a table cell)."""
    return hashlib.sha256("".join(result[key] for key in DIGESTS).encode()).hexdigest()[:8]


def _label(machine: dict[str, Any]) -> str:
    wide = "AVX-512" if "avx512f" in machine["vector_flags"] else "AVX2"
    amx = " + AMX" if "amx_tile" in machine["vector_flags"] else ""
    return f"{machine['vendor']} {wide}{amx}, {machine['cores']} cores, torch {machine['torch']}"


def render_table(recorded: dict[str, Any]) -> str:
    """The results file as a Markdown table: one row per setting, one column per machine, each
    cell the digest of all three workloads (equal cells: the same bits), then the seconds the
    first machine that timed them took (the price of each setting; machines recorded before
    timings were kept have none)."""
    machines = recorded["machines"]
    timed = next((m for m in machines if "seconds" in m["settings"][STAGE_SETTING]), None)
    header = ["setting", "kernels", *(_label(m) for m in machines)]
    if timed:
        header.append(f"seconds on {_label(timed)}: encoder / decoder")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in SETTINGS:
        cells = [name, machines[0]["settings"][name]["capability"]]
        for machine in machines:
            digest = combined_digest(machine["settings"][name])
            cells.append(f"**{digest}**" if name == STAGE_SETTING else digest)
        if timed:
            seconds = timed["settings"][name]["seconds"]
            cells.append(f"{seconds['encoder_training']:.1f} / {seconds['decoder_sampling']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", type=Path, help="add this machine's digests to this results file")
    parser.add_argument(
        "--reference", action="store_true", help="this machine wrote the committed outputs (with --record)"
    )
    parser.add_argument("--fingerprint", action="store_true", help="print the stage setting's digests as JSON")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(_one_setting(args.child)))
        return
    if args.fingerprint:
        print(json.dumps(fingerprint()))
        return
    import torch

    report: dict[str, Any] = {**machine(), "torch": torch.__version__, "settings": {}}
    print(f"cpu: {report['cpu']} ({report['vendor']}; {' '.join(report['vector_flags'])})\ntorch: {report['torch']}")
    for name, (env, threads) in SETTINGS.items():
        result = _run_setting(env, threads)
        report["settings"][name] = result
        print(
            f"{name:<24} kernels {result['capability']:<8} encoder {result['encoder_training']}  "
            f"decoder {result['decoder_sampling']}  numpy {result['numpy_ufuncs']}"
        )
    if args.record:
        record(args.record, report, reference=args.reference)


if __name__ == "__main__":
    main()
