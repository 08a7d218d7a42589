// Every GGUF brisk writes — brisk-genmodel's presets, and `brisk quantize` from a GGUF and from
// Hugging Face directories (Llama 3.x with its rope scaling, Qwen3) — read back by an independent
// reader (@huggingface/gguf) and checked against the GGUF spec's key names and value types (the
// spec's standardized keys, and what llama.cpp's converter writes for the Llama family). A key the
// spec does not know is a key other programs do not read: Llama 3's scaling, for one, must travel
// as the rope_freqs tensor, or llama.cpp refuses the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gguf, GGUFValueType as T } from '@huggingface/gguf';

const BIN = process.env.BRISK_BIN ?? 'build/brisk';
const GENMODEL = path.join(path.dirname(BIN), 'brisk-genmodel');
const SHARED = '../shared';

// Key → type (and the element type of arrays), from the spec (docs/gguf.md in ggml) and
// gguf-py's writer. {arch} is the architecture.
const SPEC = {
  'general.architecture': T.STRING,
  'general.quantization_version': T.UINT32,
  'general.alignment': T.UINT32,
  'general.name': T.STRING,
  'general.author': T.STRING,
  'general.version': T.STRING,
  'general.description': T.STRING,
  'general.license': T.STRING,
  'general.file_type': T.UINT32,
  'general.basename': T.STRING,
  'general.size_label': T.STRING,
  'general.finetune': T.STRING,
  'general.type': T.STRING,
  '{arch}.vocab_size': T.UINT32,
  '{arch}.tensor_data_layout': T.STRING,
  '{arch}.context_length': T.UINT32,
  '{arch}.embedding_length': T.UINT32,
  '{arch}.block_count': T.UINT32,
  '{arch}.feed_forward_length': T.UINT32,
  '{arch}.attention.head_count': T.UINT32,
  '{arch}.attention.head_count_kv': T.UINT32,
  '{arch}.attention.layer_norm_rms_epsilon': T.FLOAT32,
  '{arch}.attention.key_length': T.UINT32,
  '{arch}.attention.value_length': T.UINT32,
  '{arch}.rope.dimension_count': T.UINT32,
  '{arch}.rope.freq_base': T.FLOAT32,
  '{arch}.rope.scaling.type': T.STRING,
  '{arch}.rope.scaling.factor': T.FLOAT32,
  '{arch}.rope.scaling.original_context_length': T.UINT32,
  '{arch}.rope.scaling.finetuned': T.BOOL,
  '{arch}.rope.scaling.attn_factor': T.FLOAT32,
  '{arch}.attention.sliding_window': T.UINT32,
  '{arch}.attention.sliding_window_pattern': T.UINT32,
  '{arch}.rope.freq_base_swa': T.FLOAT32,
  '{arch}.attn_logit_softcapping': T.FLOAT32,
  '{arch}.final_logit_softcapping': T.FLOAT32,
  '{arch}.expert_count': T.UINT32,
  '{arch}.expert_used_count': T.UINT32,
  '{arch}.expert_feed_forward_length': T.UINT32,
  '{arch}.expert_weights_scale': T.FLOAT32,
  '{arch}.expert_weights_norm': T.BOOL,
  'tokenizer.ggml.model': T.STRING,
  'tokenizer.ggml.pre': T.STRING,
  'tokenizer.ggml.tokens': [T.ARRAY, T.STRING],
  'tokenizer.ggml.scores': [T.ARRAY, T.FLOAT32],
  'tokenizer.ggml.token_type': [T.ARRAY, T.INT32],
  'tokenizer.ggml.merges': [T.ARRAY, T.STRING],
  'tokenizer.ggml.bos_token_id': T.UINT32,
  'tokenizer.ggml.eos_token_id': T.UINT32,
  'tokenizer.ggml.unknown_token_id': T.UINT32,
  'tokenizer.ggml.separator_token_id': T.UINT32,
  'tokenizer.ggml.padding_token_id': T.UINT32,
  'tokenizer.ggml.eot_token_id': T.UINT32,
  'tokenizer.ggml.eom_token_id': T.UINT32,
  'tokenizer.ggml.add_bos_token': T.BOOL,
  'tokenizer.ggml.add_eos_token': T.BOOL,
  'tokenizer.ggml.add_space_prefix': T.BOOL,
  'tokenizer.ggml.remove_extra_whitespaces': T.BOOL,
  'tokenizer.chat_template': T.STRING,
};
// The scaling types llama.cpp knows; Llama 3's is not among them (it is the rope_freqs tensor).
const ROPE_SCALING_TYPES = ['none', 'linear', 'yarn', 'longrope'];

async function check(file) {
  const { metadata, typedMetadata, tensorInfos, tensorDataOffset } = await gguf(file, {
    allowLocalFile: true,
    typedMetadata: true,
  });
  const arch = metadata['general.architecture'];
  assert.ok(arch, `${file}: general.architecture is missing`);
  for (const [key, tv] of Object.entries(typedMetadata)) {
    if (['version', 'tensor_count', 'kv_count'].includes(key)) continue;  // the header's fields
    const want = SPEC[key.replace(`${arch}.`, '{arch}.')];
    // The spec lets a program add keys under its own name; readers skip them.
    if (want === undefined && /(^|\.)brisk\./.test(key)) continue;
    assert.ok(want !== undefined, `${file}: key ${key} is not in the GGUF spec`);
    if (Array.isArray(want)) {
      assert.equal(tv.type, want[0], `${file}: ${key} should be an array`);
      assert.equal(tv.subType, want[1], `${file}: ${key} has elements of type ${tv.subType}`);
    } else {
      assert.equal(tv.type, want, `${file}: ${key} has type ${tv.type}, the spec says ${want}`);
    }
  }
  const scaling = metadata[`${arch}.rope.scaling.type`];
  if (scaling !== undefined)
    assert.ok(ROPE_SCALING_TYPES.includes(scaling), `${file}: rope.scaling.type '${scaling}'`);
  return { metadata, tensorInfos, tensorDataOffset };
}

// Llama 3.1's per-dimension factors as llama.cpp's converter computes them.
function llama3Factors(dim, theta, factor, low = 1, high = 4, orig = 8192) {
  const out = [];
  for (let i = 0; i < dim; i += 2) {
    const wavelen = (2 * Math.PI) / theta ** (-i / dim);
    if (wavelen < orig / high) out.push(1);
    else if (wavelen > orig / low) out.push(factor);
    else {
      const smooth = (orig / wavelen - low) / (high - low);
      out.push(1 / ((1 - smooth) / factor + smooth));
    }
  }
  return out;
}

function readTensorF32(file, dataOffset, info) {
  const fd = fs.openSync(file, 'r');
  try {
    const n = Number(info.shape[0]);
    const buf = Buffer.alloc(4 * n);
    fs.readSync(fd, buf, 0, buf.length, Number(dataOffset + info.offset));
    return Array.from({ length: n }, (_, k) => buf.readFloatLE(4 * k));
  } finally {
    fs.closeSync(fd);
  }
}

// A small Hugging Face checkpoint (one layer, F32) around a real tokenizer.
function writeHfDir(dir, tokenizerDir, config) {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(tokenizerDir, f), path.join(dir, f));
  const tok = JSON.parse(fs.readFileSync(path.join(tokenizerDir, 'tokenizer.json'), 'utf8'));
  let vocab = Object.keys(tok.model.vocab).length;
  for (const t of tok.added_tokens ?? []) vocab = Math.max(vocab, t.id + 1);
  const E = 64, H = 4, KV = 2, HD = 16, FF = 128;
  const cfg = {
    hidden_size: E, intermediate_size: FF, num_hidden_layers: 1, num_attention_heads: H,
    num_key_value_heads: KV, head_dim: HD, max_position_embeddings: 4096, rms_norm_eps: 1e-5,
    vocab_size: vocab, tie_word_embeddings: true, torch_dtype: 'float32', ...config,
  };
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(cfg));
  const shapes = {
    'model.embed_tokens.weight': [vocab, E],
    'model.norm.weight': [E],
    'model.layers.0.input_layernorm.weight': [E],
    'model.layers.0.post_attention_layernorm.weight': [E],
    'model.layers.0.self_attn.q_proj.weight': [H * HD, E],
    'model.layers.0.self_attn.k_proj.weight': [KV * HD, E],
    'model.layers.0.self_attn.v_proj.weight': [KV * HD, E],
    'model.layers.0.self_attn.o_proj.weight': [E, H * HD],
    'model.layers.0.mlp.gate_proj.weight': [FF, E],
    'model.layers.0.mlp.up_proj.weight': [FF, E],
    'model.layers.0.mlp.down_proj.weight': [E, FF],
  };
  if (config.model_type === 'qwen3') {
    shapes['model.layers.0.self_attn.q_norm.weight'] = [HD];
    shapes['model.layers.0.self_attn.k_norm.weight'] = [HD];
  }
  const header = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [off, off + bytes] };
    off += bytes;
  }
  const h = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  const data = Buffer.alloc(off);
  for (let k = 0; k < off / 4; ++k) data.writeFloatLE(((k * 2654435761) % 1000) / 50000 - 0.01, 4 * k);
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, h, data]));
}

let tmp;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brisk-gguf-spec-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('brisk-genmodel presets write only spec keys, and Llama 3.2 its rope_freqs', async () => {
  const presets = execFileSync(GENMODEL, ['--help'], { encoding: 'utf8' })
    .match(/Model shape: ([^\n]*)/)[1].split(',').map((s) => s.trim()).filter(Boolean);
  assert.ok(presets.includes('llama-3.2-1b'), presets.join(' '));
  for (const p of presets) {
    const f = path.join(tmp, `${p}.gguf`);
    const type = p === 'stories260k' ? 'f32' : 'q4_0';  // its FFN width is no multiple of 32
    // Mixtures of experts with as few experts as they use, to keep the files small.
    const experts = { 'qwen3-30b-a3b': ['--experts', '8'], 'mixtral-8x7b': ['--experts', '2'],
                      'gpt-oss-20b': ['--experts', '4'] }[p] ?? [];
    execFileSync(GENMODEL, ['--preset', p, '--layers', '1', '--vocab', '512', '--type', type, ...experts,
                            '-o', f], { stdio: 'pipe' });
    const { metadata, tensorInfos } = await check(f);
    const rf = tensorInfos.find((t) => t.name === 'rope_freqs.weight');
    if (p === 'llama-3.2-1b') {
      assert.ok(rf, 'llama-3.2-1b: no rope_freqs.weight');
      assert.deepEqual(rf.shape.map(Number), [32]);
      assert.equal(metadata['llama.rope.scaling.type'], undefined);
    }
    fs.rmSync(f);
  }
});

test('brisk quantize writes spec keys from GGUF and Hugging Face inputs', async () => {
  const stories = path.join(tmp, 'stories-q8_0.gguf');
  execFileSync(BIN, ['quantize', `${SHARED}/models/stories260K/stories260K.gguf`, stories, 'q8_0'], { stdio: 'pipe' });
  await check(stories);

  const llama = path.join(tmp, 'llama3-hf');
  const rope = { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4,
                 original_max_position_embeddings: 8192 };
  writeHfDir(llama, `${SHARED}/tokenizers/llama3-hf`,
             { architectures: ['LlamaForCausalLM'], model_type: 'llama', rope_theta: 500000,
               rope_scaling: rope });
  const out = path.join(tmp, 'llama3-q8_0.gguf');
  execFileSync(BIN, ['quantize', llama, out, 'q8_0'], { stdio: 'pipe' });
  const { metadata, tensorInfos, tensorDataOffset } = await check(out);
  assert.equal(metadata['llama.rope.scaling.type'], undefined);
  const rf = tensorInfos.find((t) => t.name === 'rope_freqs.weight');
  assert.ok(rf, 'no rope_freqs.weight');
  assert.equal(rf.dtype, 0);  // F32, as the converter writes it
  const got = readTensorF32(out, tensorDataOffset, rf);
  const want = llama3Factors(16, 500000, 32);
  assert.equal(got.length, want.length);
  for (let k = 0; k < want.length; ++k)
    assert.ok(Math.abs(got[k] - want[k]) <= 1e-6 * want[k], `factor ${k}: ${got[k]} vs ${want[k]}`);

  const qwen = path.join(tmp, 'qwen3-hf');
  writeHfDir(qwen, `${SHARED}/tokenizers/qwen3-hf`,
             { architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', rope_theta: 1000000 });
  const qout = path.join(tmp, 'qwen3-q8_0.gguf');
  execFileSync(BIN, ['quantize', qwen, qout, 'q8_0'], { stdio: 'pipe' });
  await check(qout);
});
