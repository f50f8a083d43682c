"""Hugging Face transformer models from configs (random weights, nothing
downloaded): what the real-model tests, the census (scripts/census.py) and
the transformer benchmark suite run.

`make(name, size)` returns (model, inputs): a `transformers` model class
built from a config of `SIZES[size]`, and the keyword inputs of one forward
call (token ids, or images for ViT). Dropout probabilities are 0, so that a
training-mode forward is deterministic and comparable with float64 (but
`make(..., dropout=p)`: the hidden states' dropouts, after embeddings and
projections, at p; attention's stays 0, SDPA's own kernel), and the
decoders keep no key/value cache (one forward over the whole sequence, as
in training or a prompt's prefill)."""
import torch

SIZES = {
    # On the CPU in CI.
    "tiny": dict(layers=2, hidden=64, heads=4, batch=2, tokens=8),
    # The GPU check's (tests/gpu/test_transformers.py).
    "small": dict(layers=2, hidden=256, heads=4, batch=2, tokens=50),
    # The GPU benchmark's (issue 65: 4 layers, hidden 2048, 8 x 1024 tokens).
    "bench": dict(layers=4, hidden=2048, heads=16, batch=8, tokens=1024),
    # One prompt's prefill at the bench's width (latency: each GEMM a
    # fraction of a wave).
    "prefill": dict(layers=4, hidden=2048, heads=16, batch=1, tokens=512),
}

VOCABULARY = 512


def _token_ids(size):
    return {"input_ids": torch.randint(0, VOCABULARY,
                                       (size["batch"], size["tokens"]))}


def _bert(size, dropout=0.0):
    from transformers import BertConfig, BertModel
    config = BertConfig(
        hidden_size=size["hidden"], num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        intermediate_size=4 * size["hidden"], vocab_size=VOCABULARY,
        max_position_embeddings=size["tokens"], hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=0.0)
    return BertModel(config), _token_ids(size)


def _gpt2(size, dropout=0.0):
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(
        n_embd=size["hidden"], n_layer=size["layers"], n_head=size["heads"],
        vocab_size=VOCABULARY, n_positions=size["tokens"],
        bos_token_id=0, eos_token_id=0, resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=0.0, use_cache=False)
    return GPT2Model(config), _token_ids(size)


def _llama(size, dropout=0.0):  # Llama has no hidden dropout.
    from transformers import LlamaConfig, LlamaModel
    config = LlamaConfig(
        hidden_size=size["hidden"], num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        num_key_value_heads=size["heads"] // 2,
        intermediate_size=3 * size["hidden"], vocab_size=VOCABULARY,
        max_position_embeddings=size["tokens"], bos_token_id=0,
        eos_token_id=0, pad_token_id=0, use_cache=False)
    return LlamaModel(config), _token_ids(size)


def _vit(size, dropout=0.0):
    from transformers import ViTConfig, ViTModel
    # Patches of 16 pixels: as many as the tokens, less the class token.
    side = 16 * max(1, int((size["tokens"] - 1) ** 0.5))
    config = ViTConfig(
        hidden_size=size["hidden"], num_hidden_layers=size["layers"],
        num_attention_heads=size["heads"],
        intermediate_size=4 * size["hidden"], image_size=side,
        patch_size=16, hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=0.0)
    return ViTModel(config), {
        "pixel_values": torch.randn(size["batch"], 3, side, side)}


MODELS = {"bert": _bert, "gpt2": _gpt2, "llama": _llama, "vit": _vit}
# The models with a hidden-state dropout (make's `dropout`).
DROPPING = ("bert", "gpt2", "vit")


def make(name, size="tiny", seed=0, dropout=0.0):
    """(model, keyword inputs) of zoo model `name` at size `size`, its
    hidden states' dropouts at `dropout`."""
    torch.manual_seed(seed)
    model, inputs = MODELS[name](SIZES[size], dropout)
    return model, inputs


def compiled_training_step(name, size, dtype, device, options):
    """A training step (forward, the mean of the last hidden state,
    backward) of zoo model `name` in `dtype` on `device`, through
    torch.compile(backend="fusion", options=options)."""
    import fusion.dynamo  # noqa: F401 (registers the backend)
    model, inputs = make(name, size)
    model = model.train().to(device, dtype)
    inputs = {k: v.to(device, dtype) if v.is_floating_point()
              else v.to(device) for k, v in inputs.items()}
    torch._dynamo.reset()
    out = torch.compile(model, backend="fusion", options=options)(**inputs)
    out.last_hidden_state.float().mean().backward()


def training_step_keys(lookups, name, dtype, device):
    """The cache keys of the libraries a training step of the tiny `name`
    in `dtype` looks up, compiled for sm_90 (compile_only) from tensors on
    `device` (`lookups`: the library_lookups fixture). Where this machine
    compiles nothing (a GPU machine), a missing library runs as PyTorch:
    its warning is not shown."""
    import warnings

    import fusion.cache
    start = len(lookups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fusion.FusionBackendWarning)
        compiled_training_step(name, "tiny", dtype, device,
                               {"target": "sm_90", "compile_only": True})
    return {fusion.cache.library_key(*lookup) for lookup in lookups[start:]}


def last_hidden_state(outputs):
    return outputs.last_hidden_state


def census(name, size="tiny", training=False, target=None):
    """fusion.explain's census of zoo model `name` (eval mode, no
    gradients; or a training step's forward) for `target` (the CPU's by
    default; a GPU's compiles its libraries without running them), with
    the transformers package's path cut from the lines it names."""
    import transformers

    import fusion
    model, inputs = make(name, size)
    model.train(training)
    options = {"target": target, "compile_only": True} if target else None
    with torch.set_grad_enabled(training):
        text = str(fusion.explain(model, **inputs, options=options))
    return text.replace(str(transformers.__path__[0]) + "/", "transformers/")
