#!/usr/bin/env python3
"""Writes the seed corpus in fuzz/corpus/<target>/: small valid inputs of each kind (and a few
hostile ones), so every target starts from inputs that reach deep into its parser.
Run from the repository root: python3 fuzz/make_seeds.py (needs build/brisk-genmodel)."""
import glob, json, os, struct, subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
SEP = b"\n-----\n"


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors(tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shape in tensors:
        n = 1
        for s in shape:
            n *= s
        blob = struct.pack(f"<{n}f", *[((i * 37) % 11 - 5) / 50 for i in range(n)])
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(blob)]}
        blobs.append(blob)
        off += len(blob)
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def hf_llama(model_type="llama", extra=None):
    E, H, KV, FF, V = 8, 2, 1, 16, 5
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": model_type, "hidden_size": E,
           "intermediate_size": FF, "num_hidden_layers": 1, "num_attention_heads": H,
           "num_key_value_heads": KV, "vocab_size": V, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
           "max_position_embeddings": 64, "tie_word_embeddings": True, **(extra or {})}
    hd = E // H
    p = "model.layers.0."
    t = [("model.embed_tokens.weight", [V, E]), ("model.norm.weight", [E]),
         (p + "input_layernorm.weight", [E]), (p + "post_attention_layernorm.weight", [E]),
         (p + "self_attn.q_proj.weight", [H * hd, E]), (p + "self_attn.k_proj.weight", [KV * hd, E]),
         (p + "self_attn.v_proj.weight", [KV * hd, E]), (p + "self_attn.o_proj.weight", [E, H * hd]),
         (p + "mlp.gate_proj.weight", [FF, E]), (p + "mlp.up_proj.weight", [FF, E]),
         (p + "mlp.down_proj.weight", [E, FF])]
    if model_type == "qwen2":
        t += [(p + "self_attn.q_proj.bias", [H * hd]), (p + "self_attn.k_proj.bias", [KV * hd]),
              (p + "self_attn.v_proj.bias", [KV * hd])]
    return json.dumps(cfg).encode() + SEP + safetensors(t)


def llama2c(shared_vocab=True):
    dim, hidden, layers, heads, kv, vocab, seq = 8, 16, 1, 2, 2, 32, 16
    hs = dim // heads
    n = (vocab * dim + layers * dim + layers * dim * dim * 2 + layers * dim * (kv * hs) * 2 +
         layers * dim + layers * hidden * dim * 3 + dim + seq * hs)
    if not shared_vocab:
        n += vocab * dim
    hdr = struct.pack("<7i", dim, hidden, layers, heads, kv, vocab if shared_vocab else -vocab, seq)
    w = struct.pack(f"<{n}f", *[((i * 13) % 7 - 3) / 20 for i in range(n)])
    toks = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [bytes([c]) for c in range(97, 97 + 26)] + [b" a", b"ab", b" the"]
    tok = struct.pack("<i", 8) + b"".join(struct.pack("<fi", -i, len(t)) + t for i, t in enumerate(toks[:vocab]))
    return hdr + w + SEP + tok


BPE = {"version": "1.0", "added_tokens": [{"id": 6, "content": "<|end|>", "special": True}],
       "normalizer": None, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
       "decoder": {"type": "ByteLevel"},
       "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġa": 4, "Ġab": 5, "<|end|>": 6},
                 "merges": ["a b", "Ġ a", "Ġa b"]}}
WPM = {"normalizer": {"type": "BertNormalizer", "lowercase": True, "strip_accents": None,
                      "clean_text": True, "handle_chinese_chars": True},
       "pre_tokenizer": {"type": "BertPreTokenizer"},
       "added_tokens": [{"id": 0, "content": "[PAD]", "special": True}, {"id": 1, "content": "[UNK]", "special": True},
                        {"id": 2, "content": "[CLS]", "special": True}, {"id": 3, "content": "[SEP]", "special": True}],
       "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                 "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 4, "world": 5, "##s": 6, "!": 7}}}
SPM = {"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
       "pre_tokenizer": None, "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
       "added_tokens": [{"id": 0, "content": "<unk>", "special": True}, {"id": 1, "content": "<s>", "special": True}],
       "model": {"type": "BPE", "byte_fallback": True, "unk_token": "<unk>",
                 "vocab": {"<unk>": 0, "<s>": 1, "<0x41>": 2, "▁": 3, "h": 4, "i": 5, "▁h": 6, "▁hi": 7},
                 "merges": ["▁ h", "▁h i"]}}
CFG = {"bos_token": "<s>", "eos_token": "<|end|>", "add_bos_token": True,
       "chat_template": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"}


def main():
    gm = "build/brisk-genmodel"
    out = "/tmp/brisk-seed.gguf"
    subprocess.run([gm, "--preset", "stories260k", "--layers", "1", "--vocab", "300", "--type", "f32",
                    "-o", out], check=True, stderr=subprocess.DEVNULL)
    put("gguf", "stories_shape_1layer.gguf", open(out, "rb").read())
    subprocess.run([gm, "--preset", "llama-3.2-1b", "--layers", "1", "--vocab", "300", "--type", "q4_0",
                    "-o", out], check=True, stderr=subprocess.DEVNULL)
    data = open(out, "rb").read()
    put("gguf", "llama32_header.gguf", data[:4096])  # metadata and tensor table; data cut short
    put("gguf", "empty.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    os.remove(out)

    # Importance matrices: llama.cpp's GGUF layout (as brisk imatrix writes it) and the legacy .dat.
    subprocess.run(["build/brisk", "imatrix", "-m", "../shared/models/stories260K/stories260K.gguf", "-f",
                    "../shared/models/kjv-pair/valid.txt", "-c", "64", "--chunks", "1", "-o", out],
                   check=True, stderr=subprocess.DEVNULL)
    put("imatrix", "stories_1chunk.gguf", open(out, "rb").read())
    os.remove(out)
    name = b"blk.0.attn_q.weight"
    dat = struct.pack("<ii", 1, len(name)) + name + struct.pack("<ii", 4, 3) + struct.pack("<3f", 2, 4, 8)
    put("imatrix", "legacy.dat", dat + struct.pack("<ii", 10, 4) + b"a.txt"[:4])

    put("safetensors", "llama.txt", hf_llama())
    put("safetensors", "qwen2.txt", hf_llama("qwen2"))
    put("safetensors", "llama3_rope.txt", hf_llama(extra={"rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 32}}))

    put("llama2c", "tiny_shared.txt", llama2c(True))
    put("llama2c", "tiny_unshared.txt", llama2c(False))

    for name, tj in [("bpe", BPE), ("wordpiece", WPM), ("spm_bpe", SPM)]:
        put("hf_tokenizer", name + ".txt", json.dumps(tj).encode() + SEP + json.dumps(CFG).encode())

    samples = [b"Hello world", b"  leading spaces and\ttabs\n\nnewlines", "é日本語🎉 mixed ÀÉ".encode(),
               b"<s>special</s><|endoftext|>[CLS]", b"\xff\xfe invalid \xc3 utf8 \xed\xa0\x80",
               b"1234567890 3.14159 x^2 + y_i", b"def f(x):\n    return x  # code"]
    for i, s in enumerate(samples):
        for algo in range(6):
            put("tokenize", f"s{i}_{algo}", bytes([algo | (0x80 if i % 2 else 0) | (0x40 if i % 3 == 0 else 0)]) + s)

    for f in sorted(glob.glob("tests/chat/jinja/templates/*.jinja")):
        put("jinja", os.path.basename(f) + ".txt", open(f, "rb").read())
    conv = json.load(open("tests/chat/jinja/conversations.json"))
    ctx = {"messages": conv[4]["messages"], "tools": conv[4]["tools"], "add_generation_prompt": True,
           "bos_token": "<s>", "eos_token": "</s>"}
    put("jinja", "chatml_tools_ctx.txt", open("tests/chat/jinja/templates/chatml.jinja", "rb").read() +
        SEP + json.dumps(ctx).encode())
    for i, t in enumerate(["{% set ns = namespace() %}{% set ns.me = ns %}{{ ns | tojson }}",
                           "{{ range(10) | join(',') }}{{ 'a' ~ [1, [2]] ~ {'k': none} }}{{ 7 // 2 }}",
                           "{% macro m(a, b=2) %}{{ caller(a) }}{% endmacro %}{% call(x) m(1) %}{{ x * 2 }}{% endcall %}",
                           "{{ 'ΣΑΣ'|lower }}{{ 'ß'|upper }}{{ 'abc'[::-1] }}{{ '日本'[1:] }}{{ 1e3 }}"]):
        put("jinja", f"constructs{i}.txt", t)

    chat = {"model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "max_tokens": 16, "temperature": 0.7, "top_p": 0.9, "stop": ["\n"], "stream": True,
            "stream_options": {"include_usage": True}, "logprobs": True, "top_logprobs": 2, "seed": 1,
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
    comp = {"prompt": ["Once upon", [1, 2, 3]], "max_tokens": 8, "n": 2, "echo": True, "logprobs": 1,
            "presence_penalty": 0.5, "frequency_penalty": 0.1, "logit_bias": {"5": -100}, "min_p": 0.05}
    for name, path, body in [("chat", "/v1/chat/completions", chat), ("completion", "/v1/completions", comp)]:
        b = json.dumps(body).encode()
        put("openai", name + ".http", b"POST " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: "
            b"application/json\r\nContent-Length: " + str(len(b)).encode() + b"\r\n\r\n" + b)
    b = b'{"prompt": "x", "max_tokens": 2}'
    put("openai", "chunked.http", b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
        format(len(b), "x").encode() + b"\r\n" + b + b"\r\n0\r\n\r\n")

    # GBNF grammars: each construct, escapes, nesting, and a left-recursive one (refused).
    put("gbnf", "basic.txt", 'root ::= "a" [b-d]* ("x" | "yz")+ "!"?\n')
    put("gbnf", "repeat.txt", 'root ::= "a"{2,3} "b"{,2} ("c"){2,}\n')
    put("gbnf", "string.txt", 'root ::= "\\"" ( [^"\\\\\\x00-\\x1f] | "\\\\" ["\\\\/bfnrt] )* "\\""\n')
    put("gbnf", "nested.txt", 'root ::= value\nvalue ::= "[" ws (value ws ("," ws value ws)*)? "]" | [0-9]+\n'
        'ws ::= [ \\t\\n]*\n')
    put("gbnf", "leftrec.txt", 'root ::= x "a"\nx ::= "" | root\n')
    regexes = {
        "identifier": r"^[a-z][a-z0-9_-]{2,31}$", "phone": r"(\d{3})-(\d{4})|\+?[0-9 ]{7,15}",
        "url": r"^(https?|ftp)://[^\s/$.?#].[^\s]*$",
        "base64": r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?",
        "names": r"^\p{Lu}\p{Ll}+( \p{Lu}\p{Ll}+)*$", "nfa": r"(a|b)*abb(a|b){0,3}",
        "escapes": r'[^"\\]*(\\.[^"\\]*)*', "unicode": r"^\u00e9t\u00e9|\u{1F600}+$"}
    for name, re_text in regexes.items():
        put("regex", name + ".txt", re_text)


if __name__ == "__main__":
    main()
