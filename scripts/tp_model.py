#!/usr/bin/env python3
"""Tokens/s of a model split over nodes by brisk's tensor parallelism, on paper.

Per token, each node reads its 1/N of the weights (generation is bound by memory reads) and the
ranks run 4 gathers per layer (attention heads, attn_output rows, the SwiGLU product, ffn_down rows)
and one of the classifier's rows. A gather of B bytes over N nodes costs, with Open MPI's
recursive doubling / ring: ceil(log2 N) * latency + B * (N - 1) / N / link bandwidth.
The inputs are measured (docs/parallel.md says where); change them with the flags.
"""
import argparse
import math

MODELS = {
    # name: (n_embd, n_ff, n_layer, q_dim, n_vocab, bytes of Q4_K_M weights read per token,
    #        weights multiplied per token)
    "Llama-3-8B": (4096, 14336, 32, 4096, 128256, 4.92e9, 7.5e9),
    "Llama-3-70B": (8192, 28672, 80, 8192, 128256, 42.5e9, 69.5e9),
}
LINKS = {"10 GbE": 10e9 / 8, "25 GbE": 25e9 / 8, "100 GbE": 100e9 / 8}


def gather_seconds(model, nodes, link_bw, latency, batch):
    e, f, layers, q, vocab = MODELS[model][:5]
    hops = math.ceil(math.log2(nodes))
    comm = 0.0
    for floats in (q, e, f, e):  # floats gathered per token
        comm += hops * latency + 4 * floats * batch * (nodes - 1) / nodes / link_bw
    comm *= layers
    return comm + hops * latency + 4 * vocab * (nodes - 1) / nodes / link_bw  # logits to rank 0


def token_seconds(model, nodes, node_bw, link_bw, latency):
    wbytes = MODELS[model][5]
    compute = wbytes / nodes / node_bw  # one token reads every weight once
    if nodes == 1:
        return compute
    return compute + gather_seconds(model, nodes, link_bw, latency, 1)


def prompt_seconds(model, nodes, node_ops, link_bw, latency, batch=512):
    compute = 2 * MODELS[model][6] * batch / nodes / node_ops
    if nodes == 1:
        return compute
    return compute + gather_seconds(model, nodes, link_bw, latency, batch)


def table(rate):
    """Prints rate(nodes, link bytes/s) for every link and 1-8 nodes, with the speed-up."""
    print("| link | 1 node | 2 nodes | 4 nodes | 8 nodes |")
    print("|--|--:|--:|--:|--:|")
    for link, bw in LINKS.items():
        one = rate(1, bw)
        cells = [f"{rate(n, bw):.1f}" + ("" if n == 1 else f" ({rate(n, bw)/one:.2f}x)")
                 for n in (1, 2, 4, 8)]
        print(f"| {link} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--node-bw", type=float, default=33e9,
                    help="bytes/s a node reads weights at in generation (measured: TinyLlama Q4_K_M)")
    ap.add_argument("--node-ops", type=float, default=580e9,
                    help="multiply-adds x 2 per second a node runs in prompt processing (measured: "
                         "TinyLlama Q4_K_M pp128)")
    ap.add_argument("--latency", type=float, default=25e-6,
                    help="seconds per gather step between nodes (TCP loopback measured 9-12 us; "
                         "a NIC and switch add about 15)")
    a = ap.parse_args()
    for model in MODELS:
        print(f"\n{model} (Q4_K_M), generation tokens/s, node read rate {a.node_bw/1e9:.0f} GB/s, "
              f"gather step {a.latency*1e6:.0f} us")
        table(lambda n, bw: 1 / token_seconds(model, n, a.node_bw, bw, a.latency))
        print(f"\n{model}, prompt processing tokens/s (512-token prompts, "
              f"{a.node_ops/1e9:.0f} GOP/s per node)")
        table(lambda n, bw: 512 / prompt_seconds(model, n, a.node_ops, bw, a.latency))

if __name__ == "__main__":
    main()
