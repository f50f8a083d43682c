#!/usr/bin/env python3
"""PyTorch's answer for an integration-test entry point.

Regenerates the inputs of `fusion-opt --fusion-generate-test-harness` bit for
bit (same hash, same f32 arithmetic), runs the entry's model in PyTorch in
float64, and prints the results as printMemrefF32 transcripts, so that
compare_outputs.py can hold the CPU reference to PyTorch's semantics.
"""
import argparse

import numpy as np
import torch
import torch.nn.functional as F

MASK = np.uint64(0xFFFFFFFF)


def hash32(x):
    x = np.asarray(x, dtype=np.uint64) & MASK
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & MASK
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & MASK
    x ^= x >> np.uint64(16)
    return x


def harness_input(shape, stream, low, high):
    """The values fusion-generate-test-harness gives an argument."""
    count = int(np.prod(shape))
    bits = hash32(np.arange(count, dtype=np.uint64) ^ hash32(stream))
    unit = (bits >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / (1 << 24))
    values = unit * np.float32(high - low) + np.float32(low)
    return torch.from_numpy(values.reshape(shape).astype(np.float32))


def linear_leaky(multiplier, slope, bias=True):
    def model(x, w, b=None):
        return [F.leaky_relu(F.linear(x, w, b if bias else None) * multiplier,
                             slope)]
    return model


def scale_batch_norm(eps, momentum, affine=True, running=True,
                     training=True, bias=True):
    def model(x, w, *rest):
        rest = list(rest)
        b = rest.pop(0) if bias else None
        s = rest.pop(0)
        g, beta = (rest.pop(0), rest.pop(0)) if affine else (None, None)
        rm, rv = (rest.pop(0).clone(), rest.pop(0).clone()) if running \
            else (None, None)
        y = F.batch_norm(F.linear(x, w, b) * s, rm, rv, g, beta,
                         training=training, momentum=momentum, eps=eps)
        return [y] + ([rm, rv] if running and training else [])
    return model


def two_chains(x, w1, b1, w2, b2):
    h = F.leaky_relu(F.linear(x, w1, b1) * 2.0, 0.1)
    return [F.leaky_relu(F.linear(h, w2, b2) * 0.5, 0.2)]


def per_column_scale(x, w, b, s):
    return [F.leaky_relu(F.linear(x, w, b) * s, 0.1) * -3.0]


def no_bias_negative_scale(x, w, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    y = F.batch_norm(F.linear(x, w) * -2.0, rm, rv, training=True,
                     momentum=0.1, eps=1e-5)
    return [y, rm, rv]


def mlp_then_batch_norm(x, w1, b1, w2, s, rm, rv):
    rm, rv = rm.clone(), rv.clone()
    h = F.relu(F.linear(x, w1, b1))
    y = F.batch_norm(F.linear(h, w2) * s, rm, rv, training=True,
                     momentum=0.1, eps=1e-5)
    return [y, rm, rv]


def epilogue(function):
    def model(x, w, b):
        return [function(F.linear(x, w, b))]
    return model


def gated_tanh(x, wg, wu, bu):
    return [torch.tanh(F.linear(x, wg)) * F.linear(x, wu, bu)]


MODELS = {
    # (model, indices of the arguments used as running variances)
    "workload_a": (linear_leaky(2.0, 0.1), []),
    "workload_a_ragged": (linear_leaky(2.0, 0.1), []),
    "workload_a_bf16": (linear_leaky(2.0, 0.1), []),
    "no_bias": (linear_leaky(2.0, 0.1, bias=False), []),
    "negative_multiplier": (linear_leaky(-2.0, 0.1), []),
    "relu": (linear_leaky(2.0, 0.0), []),
    "slope_1_5": (linear_leaky(2.0, 1.5), []),
    "two_chains": (two_chains, []),
    "per_column_scale": (per_column_scale, []),
    "workload_b": (scale_batch_norm(1e-5, 0.1), [7]),
    "workload_b_ragged": (scale_batch_norm(1e-5, 0.1), [7]),
    "no_affine": (scale_batch_norm(1e-3, 0.3, affine=False), [5]),
    "no_running_stats": (scale_batch_norm(1e-5, 0.1, running=False), []),
    "inference": (scale_batch_norm(1e-5, 0.1, training=False), [7]),
    "no_bias_negative_scale": (no_bias_negative_scale, [3]),
    "mlp_then_batch_norm": (mlp_then_batch_norm, [6]),
    "identity": (lambda x: [x.clone()], []),
    "gelu_erf": (epilogue(F.gelu), []),
    "gelu_tanh": (epilogue(lambda z: F.gelu(z, approximate="tanh")), []),
    "softplus": (epilogue(F.softplus), []),
    "elu": (epilogue(F.elu), []),
    "gated_tanh": (gated_tanh, []),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("entry", choices=sorted(MODELS))
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtype", default="f32", choices=["f32", "bf16"])
    parser.add_argument("shapes", nargs="+",
                        help="argument shapes, e.g. ?x50 29x50 29")
    args = parser.parse_args()

    model, variances = MODELS[args.entry]
    inputs = []
    for number, text in enumerate(args.shapes):
        shape = [args.rows if d == "?" else int(d) for d in text.split("x")]
        low, high = (0.5, 1.5) if number in variances else (-1.0, 1.0)
        value = harness_input(shape, args.seed * 1000 + number, low, high)
        if args.dtype == "bf16":
            value = value.to(torch.bfloat16)
        inputs.append(value.to(torch.float64))
    for result in model(*inputs):
        flat = result.detach().reshape(-1).tolist()
        print("Unranked Memref data = [" +
              ", ".join(repr(v) for v in flat) + "]")


if __name__ == "__main__":
    main()
