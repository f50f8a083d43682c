"""The ATen importer: core-ATen FX graphs (from torch.export or a dynamo /
AOTAutograd graph) as fusion programs.

Tables keyed by ATen op say what fusion computes:

- `ELEMENTWISE` (fusion/formulas.py): each elementwise op's scalar formula
  (PyTorch's), built with arith/math ops. A chain of them over one GEMM
  output, however the ops
  combine (`x * tanh(softplus(x))`, `x + x`, per-column vectors, numbers),
  becomes one `fusion.elementwise` region; the compiler fuses it into the
  GEMM's epilogue. Operands of other chains are row operands of that
  region: a [B, N] value of another layer (a residual: `y + linear2(h)`),
  or a narrower one broadcast over contiguous columns of the row (a
  reduction's [B, 1] result, a group norm's [B, G, 1] statistics).
- `REDUCTIONS` along the features (the trailing dimensions, within each
  row: sum, mean, amax/amin, max/min values, var/std/var_mean with any
  correction, logsumexp, vector norms) become `fusion.reduce` ops whose map
  is the expression they reduce; `NORMALIZATIONS` (softmax, log_softmax,
  layer norm, group norm over contiguous groups) are built from them, as
  PyTorch computes them (maxima subtracted before exponentials, variances
  in two passes around the mean).
- `POOLS`: max and average pooling (plain and adaptive) whose windows are
  contiguous groups of each row's features without overlap, padding or
  dilation (`F.max_pool1d(y.unsqueeze(1), k)`: a `max` reduce of N / k
  groups; average pools a `sum` reduce divided by k or divisor_override).
- `STRUCTURAL`: ops that only pass their input on (clone, alias, ...);
  `VIEWS` that keep the rows (regrouping them, or the features, or adding
  or dropping dimensions of size 1) and `EXPANDS` of values that
  elementwise ops broadcast.
- The GEMM (`addmm`, `mm` with a transposed weight, `linear`) and the batch
  norms (`_native_batch_norm_legit*`).
- `CONCATS`: a concatenation of parameters that a GEMM reads as its weight
  (or bias), along the output features, becomes a `fusion.concat` that the
  GEMM reads in place (torch.compile's partitioner writes sibling
  projections of one input so: one GEMM of their weights, and
  `graph_rewrites.join_concatenated_gemms` the linear layers whose outputs
  a `cat` joins); no other.

Importing is pure Python and produces a `Program` (fusion/program.py), a
JSON-able description that is the cache key and the saved module's check;
only compiling it needs the native extension. The torch.compile backend
(fusion/dynamo.py) asks the importer which ops a partition can hold.

The package, by job: `nodes` (the op tables, helpers over fx nodes),
`expressions` (the values the importer computes with), `core` (its state,
types, chains, the GEMM and the walk over the nodes), `operands` (how an op
reads vectors, single values and other chains), and the ops by kind:
`elementwise`, `reductions`, `normalizations`, `pools`, `views`.
"""
from .core import ImporterCore
from .elementwise import ElementwiseImports
from .normalizations import NormalizationImports
from .nodes import (BATCH_NORMS, CONCATS, CONSTANTS, DROPOUT, EXPANDS,
                    FLOAT_CONVERSIONS, GEMMS, NORMALIZATIONS, POOLS,
                    REDUCTIONS, ROW_VIEWS, STRUCTURAL, TRANSPOSES,
                    UNDECOMPOSED, VIEWS, check_formula, computes,
                    constant_readers, folds_as_number, gemm_concats,
                    gemm_scales, int_size, is_graph_input, linear_operands,
                    location, op_name, parameter_linear, tensor_meta,
                    where)
from .operands import OperandImports
from .pools import PoolImports
from .reductions import ReductionImports
from .views import ViewImports


class Importer(ElementwiseImports, ReductionImports, NormalizationImports,
               PoolImports, ViewImports, OperandImports, ImporterCore):
    """Imports a set of ATen nodes (in graph order) whose tensor inputs are
    `inputs` (placeholders or values computed outside), as a Program whose
    arguments are those inputs, in order, and whose results are `outputs`
    (nodes, or (node, index) for the outputs of multi-result ops).

    Values are per-column vectors (program values), numbers, `Vectors`
    (elementwise ops of vectors alone, evaluated where a chain reads them)
    and `Chain`s: expressions over a [rows, width] matrix. Elementwise ops
    combine chains into one expression however they mix: a value of
    another chain of the same width (a residual, another linear layer's
    output) or a narrower one broadcast over the row (a reduction's result)
    becomes a row operand of the expression. Reductions become `reduce` ops whose map is the
    expression they reduce; only what is needed as a whole (GEMM inputs,
    batch norms, results, row operands that read columns of another width)
    is materialized."""
