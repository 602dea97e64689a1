"""hf_check.py: hpctrain's Hugging Face export against Hugging Face's own code.

  hf_check.py names EXPORT_DIR
      HF's safetensors (safe_open) reads EXPORT_DIR/model.safetensors; its
      tensor names, shapes and dtypes must be the ones HF's model class has
      for EXPORT_DIR/config.json (GPT2LMHeadModel, LlamaForCausalLM,
      BertForMaskedLM), written here from HF's module layout (GPT-2's Conv1D
      weights are [in, out]; BERT's decoder is tied to the word embedding and
      saved once).
  hf_check.py resave EXPORT_DIR OUT_DIR DTYPE
      HF's save_file writes the export's tensors again, in float32, bfloat16
      or float16, with config.json and tokenizer.model copied: a model
      directory written by HF's implementation, for hpctrain to import.
  hf_check.py transformers EXPORT_DIR LOGITS_DIR
      transformers' AutoModelForCausalLM (AutoModelForMaskedLM for BERT)
      .from_pretrained loads the export and
      computes the logits of the tokens build/bench/model_logits wrote to
      LOGITS_DIR; they must match hpctrain's within 1e-5 (relative, float32).

Exits 77 (skipped) when the package a mode needs is not installed, 1 on a
mismatch, 0 when everything matches.
"""
import json
import os
import shutil
import sys

SKIP = 77


def need(module, why):
    try:
        return __import__(module)
    except ImportError:
        print(f"hf_check.py: {module} is not installed ({why}): skipped")
        sys.exit(SKIP)


def expected_tensors(config):
    """{name: shape} of HF's model class for this config.json, all float32."""
    kind = config["model_type"]
    V = config["vocab_size"]
    out = {}
    if kind == "llama":
        d, L, H = config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]
        kv = config.get("num_key_value_heads") or H
        hd, ff = d // H, config["intermediate_size"]
        out["model.embed_tokens.weight"] = [V, d]
        for i in range(L):
            p = f"model.layers.{i}."
            out[p + "input_layernorm.weight"] = [d]
            out[p + "self_attn.q_proj.weight"] = [H * hd, d]
            out[p + "self_attn.k_proj.weight"] = [kv * hd, d]
            out[p + "self_attn.v_proj.weight"] = [kv * hd, d]
            out[p + "self_attn.o_proj.weight"] = [d, H * hd]
            out[p + "post_attention_layernorm.weight"] = [d]
            out[p + "mlp.gate_proj.weight"] = [ff, d]
            out[p + "mlp.up_proj.weight"] = [ff, d]
            out[p + "mlp.down_proj.weight"] = [d, ff]
        out["model.norm.weight"] = [d]
        if not config.get("tie_word_embeddings", False):
            out["lm_head.weight"] = [V, d]
    elif kind == "gpt2":
        d, L, P = config["n_embd"], config["n_layer"], config["n_positions"]
        inner = config.get("n_inner") or 4 * d
        out["transformer.wte.weight"] = [V, d]
        out["transformer.wpe.weight"] = [P, d]
        for i in range(L):
            p = f"transformer.h.{i}."
            for ln in ("ln_1", "ln_2"):
                out[p + ln + ".weight"] = [d]
                out[p + ln + ".bias"] = [d]
            # Conv1D: weight [nx (in), nf (out)], bias [nf]
            for name, n_in, n_out in (("attn.c_attn", d, 3 * d), ("attn.c_proj", d, d), ("mlp.c_fc", d, inner),
                                      ("mlp.c_proj", inner, d)):
                out[p + name + ".weight"] = [n_in, n_out]
                out[p + name + ".bias"] = [n_out]
        out["transformer.ln_f.weight"] = [d]
        out["transformer.ln_f.bias"] = [d]
    elif kind == "bert":
        d, L = config["hidden_size"], config["num_hidden_layers"]
        P, ff, types = config["max_position_embeddings"], config["intermediate_size"], config["type_vocab_size"]
        e = "bert.embeddings."
        out[e + "word_embeddings.weight"] = [V, d]
        out[e + "position_embeddings.weight"] = [P, d]
        out[e + "token_type_embeddings.weight"] = [types, d]
        out[e + "LayerNorm.weight"] = [d]
        out[e + "LayerNorm.bias"] = [d]
        for i in range(L):
            p = f"bert.encoder.layer.{i}."
            for name, n_in, n_out in (("attention.self.query", d, d), ("attention.self.key", d, d),
                                      ("attention.self.value", d, d), ("attention.output.dense", d, d),
                                      ("intermediate.dense", d, ff), ("output.dense", ff, d)):
                out[p + name + ".weight"] = [n_out, n_in]  # nn.Linear: [out, in]
                out[p + name + ".bias"] = [n_out]
            for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
                out[p + ln + ".weight"] = [d]
                out[p + ln + ".bias"] = [d]
        out["cls.predictions.transform.dense.weight"] = [d, d]
        out["cls.predictions.transform.dense.bias"] = [d]
        out["cls.predictions.transform.LayerNorm.weight"] = [d]
        out["cls.predictions.transform.LayerNorm.bias"] = [d]
        out["cls.predictions.bias"] = [V]
    else:
        raise SystemExit(f"hf_check.py: model_type {kind!r}: expected llama, gpt2 or bert")
    return out


def names(export):
    safetensors = need("safetensors", "Debian 13: python3-safetensors")
    need("torch", "the safe_open 'pt' framework")
    config = json.load(open(os.path.join(export, "config.json")))
    expected = expected_tensors(config)
    path = os.path.join(export, "model.safetensors")
    found, problems = {}, []
    with safetensors.safe_open(path, framework="pt") as f:
        metadata = f.metadata() or {}
        for name in f.keys():
            piece = f.get_slice(name)
            found[name] = piece.get_shape()
            if piece.get_dtype() != "F32":
                problems.append(f"{name}: dtype {piece.get_dtype()}, expected F32")
    for name in sorted(set(expected) | set(found)):
        if name not in found:
            problems.append(f"missing {name}")
        elif name not in expected:
            problems.append(f"unexpected {name}")
        elif list(found[name]) != expected[name]:
            problems.append(f"{name}: shape {list(found[name])}, expected {expected[name]}")
    if metadata.get("format") != "pt":
        problems.append(f"metadata format {metadata.get('format')!r}, expected 'pt'")
    version = getattr(safetensors, "__version__", "?")
    if problems:
        print(f"hf_check.py names: {path}: {len(problems)} problems (safetensors {version}): " + "; ".join(problems))
        return 1
    print(f"hf_check.py names: {path}: {len(found)} tensors, the names, shapes and dtype (F32) of HF's "
          f"{config['architectures'][0]}, read by HF's safetensors {version}")
    return 0


def resave(export, out, dtype):
    need("safetensors", "Debian 13: python3-safetensors")
    torch = need("torch", "safetensors.torch")
    from safetensors.torch import load_file, save_file
    tensors = load_file(os.path.join(export, "model.safetensors"))
    cast = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    os.makedirs(out, exist_ok=True)
    save_file({k: v.to(cast).contiguous() for k, v in tensors.items()}, os.path.join(out, "model.safetensors"),
              metadata={"format": "pt"})
    for f in ("config.json", "tokenizer.model"):
        shutil.copy(os.path.join(export, f), out)
    print(f"hf_check.py resave: {len(tensors)} tensors as {dtype} by HF's save_file into {out}")
    return 0


def transformers_logits(export, logits_dir):
    torch = need("torch", "transformers' models")
    transformers = need("transformers", "the lent GPU machine's image has it; pip install transformers")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tensorio
    tensors, meta = tensorio.read_dir(logits_dir)
    config = json.load(open(os.path.join(export, "config.json")))
    auto = transformers.AutoModelForMaskedLM if config["model_type"] == "bert" else transformers.AutoModelForCausalLM
    model = auto.from_pretrained(export, torch_dtype=torch.float32, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        theirs = model(tensors["tokens"]).logits.float()
    ours = tensors["logits"]
    err = ((theirs.double() - ours.double()).norm() / ours.double().norm()).item()
    ok = err <= 1e-5
    print(f"hf_check.py transformers: {type(model).__name__} from {export} (transformers {transformers.__version__}, "
          f"torch {torch.__version__}): logits {list(ours.shape)} {err:.3g} from hpctrain's (limit 1e-05): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main(argv):
    if len(argv) >= 3 and argv[1] == "names":
        return names(argv[2])
    if len(argv) == 5 and argv[1] == "resave":
        return resave(argv[2], argv[3], argv[4])
    if len(argv) == 4 and argv[1] == "transformers":
        return transformers_logits(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
