//===- IRBuilders.cpp - fusion IR built op by op from Python --------------===//
//
// The front end builds a module through these builders instead of printing
// MLIR text: `Module.add_function` returns a FunctionBuilder whose methods
// create fusion ops through their ODS builders and return Values, and
// `FunctionBuilder.elementwise` lets a Python callback fill a
// fusion.elementwise body through a ScalarBuilder. Every op is verified as it
// is created, so a mistake is reported at the call that made it, as an
// MLIRError carrying the op's location (the model's source line).
//
// Handles (Value, Scalar) hold the state of the function, or body, that made
// them, which holds the Module: Python may drop the Module while builders
// live, and a handle of another function or of a closed body is refused
// instead of being used to build invalid IR.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "fusion/Dialect/Fusion/IR/FusionOps.h"
#include "fusion/Dialect/Fusion/IR/FusionRandomOps.h"
#include "fusion/Dialect/Fusion/IR/GemmConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"

#include <pybind11/stl.h>

#include <limits>
#include <optional>
#include <vector>

namespace py = pybind11;
using namespace mlir;
using namespace mlir::fusion;
using namespace mlir::fusion::python;

namespace {

/// A function under construction, shared by its builder and its values.
struct FunctionState {
  std::shared_ptr<Module> module;
  func::FuncOp func;
  std::string name;
  /// The module's generation when the function was created: a pass pipeline
  /// run since may have rewritten or erased what the handles point to.
  uint64_t generation;
  bool finished = false;
  bool fillingBody = false;

  MLIRContext *getContext() { return module->context->context.get(); }
  Block &getBody() { return func.getBody().front(); }

  void checkOpen() const {
    if (module->generation != generation)
      throw MLIRError("function @" + name +
                      ": its module was transformed by a pass pipeline "
                      "since; build functions before running pipelines");
    if (finished)
      throw MLIRError("function @" + name + " is finished");
  }

  /// Open, and not in the middle of an elementwise body, whose region is
  /// incomplete until its callback returns.
  void checkBuildable() const {
    checkOpen();
    if (fillingBody)
      throw MLIRError("function @" + name +
                      " is filling an elementwise body; inside its callback "
                      "only the ScalarBuilder builds");
  }
};

/// A tensor value of a function being built. Its type is kept apart: types
/// live as long as the context, while a pass pipeline may erase the value.
struct ValueHandle {
  ValueHandle(std::shared_ptr<FunctionState> function, Value value)
      : function(std::move(function)), value(value), type(value.getType()) {}
  std::shared_ptr<FunctionState> function;
  Value value;
  Type type;
};

/// An elementwise body being filled; closed once its callback returns.
struct BodyState {
  std::shared_ptr<FunctionState> function;
  OpBuilder builder;
  Location loc;
  bool open = true;

  void checkOpen() const {
    if (!open)
      throw MLIRError("the elementwise body this ScalarBuilder filled is "
                      "complete; scalars are built inside its callback");
    function->checkOpen();
  }
};

/// An f32 (or i1) value of an elementwise body; as a ValueHandle, its type
/// outlives it (an invalid body is erased).
struct ScalarHandle {
  ScalarHandle(std::shared_ptr<BodyState> body, Value value)
      : body(std::move(body)), value(value), type(value.getType()) {}
  std::shared_ptr<BodyState> body;
  Value value;
  Type type;
};

std::string describe(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// `("model.py", 12)` -> model.py:12:0; None -> unknown.
Location toLocation(MLIRContext *context, const py::object &loc) {
  if (loc.is_none())
    return UnknownLoc::get(context);
  if (py::isinstance<py::tuple>(loc) && py::len(loc) == 2) {
    auto pair = loc.cast<py::tuple>();
    if (py::isinstance<py::str>(pair[0]) && py::isinstance<py::int_>(pair[1])) {
      // A line beyond int64 fails the cast; beyond `unsigned`, the check.
      int64_t line = -1;
      try {
        line = pair[1].cast<int64_t>();
      } catch (const py::cast_error &) {
      }
      if (line >= 0 && line <= std::numeric_limits<unsigned>::max())
        return FileLineColLoc::get(context, pair[0].cast<std::string>(),
                                   static_cast<unsigned>(line), 0);
    }
  }
  throw MLIRError("loc must be None or a (file: str, line: int >= 0) tuple, "
                  "got " +
                  py::repr(loc).cast<std::string>());
}

/// Verifies an op just created; an invalid one is erased and reported with
/// the verifier's diagnostics. `diagnostics` must have lived since before the
/// op was created.
void verifyOrErase(Operation *op, DiagnosticCollector &diagnostics) {
  if (succeeded(mlir::verify(op)))
    return;
  std::string name = op->getName().getStringRef().str();
  op->erase();
  diagnostics.raise("invalid " + name);
}

std::vector<ValueHandle> wrap(const std::shared_ptr<FunctionState> &function,
                              ResultRange results) {
  std::vector<ValueHandle> handles;
  for (Value result : results)
    handles.emplace_back(function, result);
  return handles;
}

static Type elementTypeNamed(const std::string &dtype, MLIRContext *context);

class ScalarBuilder {
public:
  explicit ScalarBuilder(std::shared_ptr<BodyState> body)
      : body(std::move(body)) {}

  ScalarHandle constant(double value) {
    body->checkOpen();
    OpBuilder &b = body->builder;
    return {body,
            arith::ConstantOp::create(b, body->loc, b.getF32FloatAttr(value))};
  }

  /// Any op of the allow-list by name but fusion.special (special()). The
  /// result type is i1 for arith.cmpf and the last operand's otherwise,
  /// which covers the rest of the allow-list (select's last operand is a
  /// value, not its condition).
  ScalarHandle op(const std::string &name,
                  const std::vector<ScalarHandle> &operands,
                  const std::optional<std::string> &predicate,
                  const std::optional<std::string> &fastmath) {
    body->checkOpen();
    MLIRContext *context = body->function->getContext();
    std::optional<RegisteredOperationName> info =
        RegisteredOperationName::lookup(name, context);
    if (!info)
      throw MLIRError("unknown operation '" + name + "'");
    if (operands.empty())
      throw MLIRError("'" + name +
                      "' needs operands (constant() builds "
                      "constants)");
    SmallVector<Value> values;
    for (const ScalarHandle &operand : operands) {
      if (operand.body != body)
        throw MLIRError("an operand of '" + name +
                        "' is a scalar of another elementwise body");
      values.push_back(operand.value);
    }
    if (name == SpecialOp::getOperationName())
      throw MLIRError("fusion.special needs a formula: build it with "
                      "special(), not op()");
    bool isCmpF = name == arith::CmpFOp::getOperationName();
    OperationState state(body->loc, *info);
    state.addOperands(values);
    state.addTypes(isCmpF ? Type(IntegerType::get(context, 1))
                          : values.back().getType());
    if (isCmpF != predicate.has_value())
      throw MLIRError(isCmpF ? "arith.cmpf needs a predicate"
                             : "a predicate is only for arith.cmpf, not '" +
                                   name + "'");
    if (predicate) {
      std::optional<arith::CmpFPredicate> kind =
          arith::symbolizeCmpFPredicate(*predicate);
      if (!kind)
        throw MLIRError("unknown arith.cmpf predicate '" + *predicate + "'");
      state.addAttribute("predicate",
                         arith::CmpFPredicateAttr::get(context, *kind));
    }
    if (fastmath) {
      if (!info->hasInterface<arith::ArithFastMathInterface>())
        throw MLIRError("'" + name + "' takes no fastmath flags");
      std::optional<arith::FastMathFlags> flags =
          arith::symbolizeFastMathFlags(*fastmath);
      if (!flags)
        throw MLIRError("unknown fastmath flags '" + *fastmath + "'");
      state.addAttribute("fastmath",
                         arith::FastMathFlagsAttr::get(context, *flags));
    }
    DiagnosticCollector diagnostics(context);
    Operation *op = body->builder.create(state);
    // Checked before anything reads the op: an op outside the allow-list may
    // lack what its accessors assume (regions, attributes).
    if (!isAllowedScalarOp(*op)) {
      op->erase();
      throw MLIRError("'" + name +
                      "' is not allowed in an elementwise body (allowed: " +
                      getAllowedScalarOpsDescription().str() + ")");
    }
    verifyOrErase(op, diagnostics);
    return {body, op->getResult(0)};
  }

  /// `x` rounded to the 16-bit element type `dtype` (bf16 or f16) and
  /// extended back to f32: arith.extf (arith.truncf x), as storing and
  /// loading it would.
  ScalarHandle roundTo(const ScalarHandle &x, const std::string &dtype) {
    body->checkOpen();
    if (x.body != body)
      throw MLIRError("round_to's operand is a scalar of another body");
    MLIRContext *context = body->function->getContext();
    Type narrow = elementTypeNamed(dtype, context);
    if (!narrow.isBF16() && !narrow.isF16())
      throw MLIRError("round_to rounds to bf16 or f16, not " + dtype);
    OpBuilder &b = body->builder;
    auto trunc = arith::TruncFOp::create(b, body->loc, narrow, x.value);
    return {body, arith::ExtFOp::create(b, body->loc, b.getF32Type(),
                                          trunc.getResult())
                      .getResult()};
  }

  /// fusion.special `function` of `operands`, its body (the formula) filled
  /// by `fill(s, *arguments)` through a ScalarBuilder of its own, or none
  /// where `fill` is None (libdevice's and the C library's function).
  ScalarHandle special(const std::string &function,
                       const std::optional<std::string> &libdevice,
                       const std::vector<ScalarHandle> &operands,
                       const py::object &fill,
                       const std::optional<std::string> &libm) {
    body->checkOpen();
    MLIRContext *context = body->function->getContext();
    SmallVector<Value> values;
    for (const ScalarHandle &operand : operands) {
      if (operand.body != body)
        throw MLIRError("an operand of special function '" + function +
                        "' is a scalar of another body");
      values.push_back(operand.value);
    }
    DiagnosticCollector diagnostics(context);
    OpBuilder &b = body->builder;
    auto op = SpecialOp::create(
        b, body->loc, b.getF32Type(), b.getStringAttr(function), values,
        libdevice ? b.getStringAttr(*libdevice) : StringAttr(),
        libm ? b.getStringAttr(*libm) : StringAttr());
    // As buildScalarRegionOp's: undone on any error unless a pipeline ran.
    uint64_t generation = body->function->module->generation;
    llvm::scope_exit undo([&] {
      if (body->function->module->generation == generation)
        op->erase();
    });
    if (!fill.is_none())
      buildFormula(op, function, fill);
    if (failed(mlir::verify(op)))
      diagnostics.raise("invalid fusion.special");
    undo.release();
    return {body, op.getResult()};
  }

private:
  /// Fills `op`'s body by `fill(s, *arguments)`.
  void buildFormula(SpecialOp op, const std::string &function,
                    const py::object &fill) {
    OpBuilder &b = body->builder;
    size_t inputs = op.getInputs().size();
    Block *block = b.createBlock(&op.getBody(), {},
                                 SmallVector<Type>(inputs, b.getF32Type()),
                                 SmallVector<Location>(inputs, body->loc));
    b.setInsertionPointAfter(op);
    auto inner = std::make_shared<BodyState>(
        BodyState{body->function, OpBuilder::atBlockEnd(block), body->loc});
    body->open = false;
    llvm::scope_exit close([&] {
      inner->open = false;
      body->open = true;
    });
    py::list arguments;
    arguments.append(ScalarBuilder(inner));
    for (BlockArgument arg : block->getArguments())
      arguments.append(ScalarHandle{inner, arg});
    py::object returned = fill(*arguments);
    body->function->checkOpen();
    if (!py::isinstance<ScalarHandle>(returned))
      throw MLIRError("the formula of special function '" + function +
                      "' must return a Scalar, got " +
                      py::repr(returned).cast<std::string>());
    auto result = returned.cast<ScalarHandle>();
    if (result.body != inner)
      throw MLIRError("the formula of special function '" + function +
                      "' returned a scalar of another body");
    YieldOp::create(inner->builder, body->loc, result.value);
  }

  std::shared_ptr<BodyState> body;
};

/// The element type of a dtype name (fusion/dtypes.py).
static Type elementTypeNamed(const std::string &dtype, MLIRContext *context) {
  std::optional<ElementType> kind = symbolizeElementType(dtype);
  if (!kind)
    throw MLIRError("unknown dtype '" + dtype +
                    "' (expected f32, bf16 or f16)");
  return getElementTypeOf(*kind, context);
}

class FunctionBuilder {
public:
  explicit FunctionBuilder(std::shared_ptr<FunctionState> state)
      : state(std::move(state)) {}

  ValueHandle argument(const std::vector<std::optional<int64_t>> &shape,
                       const std::string &dtype, const py::object &loc) {
    state->checkBuildable();
    MLIRContext *context = state->getContext();
    SmallVector<int64_t> dims;
    for (std::optional<int64_t> dim : shape) {
      if (dim && *dim < 0)
        throw MLIRError("dimension " + std::to_string(*dim) +
                        " is negative (None is a dynamic dimension)");
      dims.push_back(dim ? *dim : ShapedType::kDynamic);
    }
    auto type = RankedTensorType::get(dims, elementTypeNamed(dtype, context));
    BlockArgument arg =
        state->getBody().addArgument(type, toLocation(context, loc));
    state->func.setFunctionType(FunctionType::get(
        context, state->getBody().getArgumentTypes(), TypeRange()));
    return {state, arg};
  }

  ValueHandle linear(const ValueHandle &x, const ValueHandle &w,
                     const std::optional<ValueHandle> &bias,
                     const std::string &weightLayout, const py::object &loc) {
    state->checkBuildable();
    Value input = use(x, "input"), weight = use(w, "weight");
    Value b = bias ? use(*bias, "bias") : Value();
    std::optional<WeightLayout> layout = symbolizeWeightLayout(weightLayout);
    if (!layout)
      throw MLIRError("unknown weight layout '" + weightLayout +
                      "' (expected out_in or in_out)");
    int64_t outFeatures = rows(weight, "weight");
    auto weightType = cast<RankedTensorType>(weight.getType());
    if (*layout == WeightLayout::in_out && weightType.getRank() == 2)
      outFeatures = weightType.getDimSize(1);
    auto resultType = RankedTensorType::get({rows(input, "input"), outFeatures},
                                            getElementType(input));
    return build(loc, [&](OpBuilder &builder, Location location) {
      return LinearOp::create(
          builder, location, resultType, input, weight, b,
          WeightLayoutAttr::get(builder.getContext(), *layout));
    });
  }

  ValueHandle concat(const std::vector<ValueHandle> &parts, int64_t dim,
                     const py::object &loc) {
    state->checkBuildable();
    if (parts.empty())
      throw MLIRError("concat of no tensors");
    SmallVector<Value> inputs;
    for (const ValueHandle &part : parts)
      inputs.push_back(use(part, "concat input"));
    auto first = cast<RankedTensorType>(inputs.front().getType());
    if (dim < 0 || dim >= first.getRank())
      throw MLIRError("dim " + std::to_string(dim) + " is not a dimension of " +
                      describe(first));
    // The joined size; the verifier reports parts that do not fit.
    SmallVector<int64_t> shape(first.getShape());
    shape[dim] = 0;
    for (Value input : inputs) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t size = dim < type.getRank() ? type.getDimSize(dim) : 0;
      shape[dim] =
          ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[dim])
              ? ShapedType::kDynamic
              : shape[dim] + size;
    }
    auto resultType = RankedTensorType::get(shape, first.getElementType());
    return build(loc, [&](OpBuilder &builder, Location location) {
      return ConcatOp::create(builder, location, resultType, inputs,
                              builder.getI64IntegerAttr(dim));
    });
  }

  ValueHandle randomUniform(const ValueHandle &seed, const ValueHandle &rowsOf,
                            int64_t columns, int64_t stream,
                            const py::object &loc) {
    state->checkBuildable();
    Value seedValue = use(seed, "seed"), rowsValue = use(rowsOf, "rows_of");
    auto resultType = RankedTensorType::get(
        {rows(rowsValue, "rows_of"), columns}, getElementType(rowsValue));
    return build(loc, [&](OpBuilder &builder, Location location) {
      return RandomUniformOp::create(builder, location, resultType, seedValue,
                                     rowsValue,
                                     builder.getI64IntegerAttr(stream));
    });
  }

  std::vector<ValueHandle>
  batchNorm(const ValueHandle &x, bool training, double epsilon,
            double momentum, const std::optional<ValueHandle> &weight,
            const std::optional<ValueHandle> &bias,
            const std::optional<ValueHandle> &runningMean,
            const std::optional<ValueHandle> &runningVar,
            const std::optional<std::string> &batchStats,
            const py::object &loc) {
    state->checkBuildable();
    MLIRContext *context = state->getContext();
    Value input = use(x, "input");
    Value g = useOptional(weight, "weight"), b = useOptional(bias, "bias");
    Value mean = useOptional(runningMean, "running_mean");
    Value var = useOptional(runningVar, "running_var");
    Location location = toLocation(context, loc);
    DiagnosticCollector diagnostics(context);
    auto config = BatchNormConfigAttr::getChecked(
        [&] { return emitError(location); }, context,
        training ? BatchNormMode::training : BatchNormMode::inference,
        llvm::APFloat(epsilon), llvm::APFloat(momentum));
    if (!config)
      diagnostics.raise("invalid batch_norm configuration");
    // Training with running statistics also returns their update; the
    // verifier reports a mean given without a variance.
    SmallVector<Type> updated;
    if (training && mean && var)
      updated = {mean.getType(), var.getType()};
    SmallVector<Type> saved;
    if (batchStats) {
      auto inputType = cast<RankedTensorType>(input.getType());
      if (inputType.getRank() != 2)
        throw MLIRError("input " + describe(inputType) + " is not a matrix");
      saved.assign(
          2, RankedTensorType::get({inputType.getDimSize(1)},
                                   elementTypeNamed(*batchStats, context)));
    }
    OpBuilder builder = atEnd();
    auto op = BatchNormOp::create(builder, location, input.getType(), updated,
                                  saved, input, g, b, mean, var, config);
    verifyOrErase(op, diagnostics);
    return wrap(state, op->getResults());
  }

  ValueHandle elementwise(const ValueHandle &x,
                          const std::vector<ValueHandle> &columns,
                          const py::function &fill,
                          const std::vector<ValueHandle> &rowOperands,
                          const py::object &loc) {
    state->checkBuildable();
    Value input = use(x, "input");
    SmallVector<Value> columnValues = useAll(columns, "column operand");
    SmallVector<Value> rowValues = useAll(rowOperands, "row operand");
    return buildScalarRegionOp(
        "fusion.elementwise", loc, fill, columnValues.size(), rowValues.size(),
        [&](OpBuilder &builder, Location location) {
          auto op = ElementwiseOp::create(builder, location, input.getType(),
                                          input, columnValues, rowValues);
          return std::make_pair(op.getOperation(), &op.getBody());
        });
  }

  ValueHandle reduce(const ValueHandle &x, const std::string &kind,
                     int64_t groups, const std::vector<ValueHandle> &columns,
                     const std::vector<ValueHandle> &rowOperands,
                     const py::function &fill, const py::object &loc) {
    state->checkBuildable();
    Value input = use(x, "input");
    std::optional<ReductionKind> reduction = symbolizeReductionKind(kind);
    if (!reduction)
      throw MLIRError("unknown reduction '" + kind +
                      "' (expected sum, max or min)");
    if (groups <= 0)
      throw MLIRError("a reduction has a positive number of groups, got " +
                      std::to_string(groups));
    SmallVector<Value> columnValues = useAll(columns, "column operand");
    SmallVector<Value> rowValues = useAll(rowOperands, "row operand");
    auto resultType = RankedTensorType::get(
        {FunctionBuilder::rows(input, "input"), groups}, getElementType(input));
    return buildScalarRegionOp(
        "fusion.reduce", loc, fill, columnValues.size(), rowValues.size(),
        [&](OpBuilder &builder, Location location) {
          auto op = ReduceOp::create(builder, location, resultType, *reduction,
                                     input, columnValues, rowValues);
          return std::make_pair(op.getOperation(), &op.getMap());
        });
  }

  /// Returns `results` and verifies the whole function; a function that
  /// does not verify stays open.
  void finish(const std::vector<ValueHandle> &results, const py::object &loc) {
    state->checkBuildable();
    MLIRContext *context = state->getContext();
    SmallVector<Value> values;
    for (const ValueHandle &result : results)
      values.push_back(use(result, "result"));
    DiagnosticCollector diagnostics(context);
    OpBuilder builder = atEnd();
    auto ret =
        func::ReturnOp::create(builder, toLocation(context, loc), values);
    FunctionType open = state->func.getFunctionType();
    state->func.setFunctionType(
        FunctionType::get(context, state->getBody().getArgumentTypes(),
                          ValueRange(values).getTypes()));
    if (failed(mlir::verify(state->func))) {
      ret->erase();
      state->func.setFunctionType(open);
      diagnostics.raise("function @" + state->name + " is invalid");
    }
    state->finished = true;
  }

  const std::string &getName() const { return state->name; }

private:
  SmallVector<Value> useAll(const std::vector<ValueHandle> &handles,
                            const char *what) {
    SmallVector<Value> values;
    for (const ValueHandle &handle : handles)
      values.push_back(use(handle, what));
    return values;
  }

  /// Creates an op with a scalar region (`create` returns it and the
  /// region), lets the Python callback `fill(s, x, columns, rows)` fill the
  /// region through a ScalarBuilder, and verifies the op.
  template <typename Create>
  ValueHandle buildScalarRegionOp(StringRef opName, const py::object &loc,
                                  const py::function &fill, size_t columns,
                                  size_t rows, Create create) {
    MLIRContext *context = state->getContext();
    Location location = toLocation(context, loc);
    DiagnosticCollector diagnostics(context);
    OpBuilder builder = atEnd();
    auto [op, region] = create(builder, location);
    // Until it verifies, the op is undone on any error, the callback's
    // own exceptions included; unless a pass pipeline ran meanwhile and may
    // have erased it (Module.run_pipeline refuses the invalid module an
    // open function makes, so this is a second line of defense).
    uint64_t generation = state->module->generation;
    llvm::scope_exit undo([&, op = op] {
      if (state->module->generation == generation)
        op->erase();
    });
    size_t numArgs = 1 + columns + rows;
    Block *block = builder.createBlock(
        region, {}, SmallVector<Type>(numArgs, Float32Type::get(context)),
        SmallVector<Location>(numArgs, location));
    auto body = std::make_shared<BodyState>(
        BodyState{state, OpBuilder::atBlockEnd(block), location});
    state->fillingBody = true;
    llvm::scope_exit close([&] {
      body->open = false;
      state->fillingBody = false;
    });
    ScalarBuilder scalars(body);
    std::vector<ScalarHandle> columnScalars, rowScalars;
    for (BlockArgument arg : block->getArguments().slice(1, columns))
      columnScalars.push_back({body, arg});
    for (BlockArgument arg : block->getArguments().drop_front(1 + columns))
      rowScalars.push_back({body, arg});
    py::object returned = fill(scalars, ScalarHandle{body, block->getArgument(0)},
                               columnScalars, rowScalars);
    state->checkOpen();
    if (!py::isinstance<ScalarHandle>(returned))
      throw MLIRError("the " + opName.str() +
                      " region must return a Scalar, got " +
                      py::repr(returned).cast<std::string>());
    auto result = returned.cast<ScalarHandle>();
    if (result.body != body)
      throw MLIRError("the " + opName.str() +
                      " region returned a scalar of another region");
    YieldOp::create(body->builder, location, result.value);
    if (failed(mlir::verify(op)))
      diagnostics.raise(("invalid " + opName).str());
    undo.release();
    return {state, op->getResult(0)};
  }

  OpBuilder atEnd() { return OpBuilder::atBlockEnd(&state->getBody()); }

  Value use(const ValueHandle &handle, const char *what) const {
    if (handle.function != state)
      throw MLIRError(std::string(what) +
                      " is a value of another function "
                      "(@" +
                      handle.function->name + "), not of @" + state->name);
    return handle.value;
  }

  Value useOptional(const std::optional<ValueHandle> &handle,
                    const char *what) const {
    return handle ? use(*handle, what) : Value();
  }

  static int64_t rows(Value value, const char *what) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 0)
      throw MLIRError(std::string(what) + " " + describe(type) +
                      " is a scalar, not a matrix");
    return type.getDimSize(0);
  }

  static Type getElementType(Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType();
  }

  /// Creates an op of one result at the end of the function and verifies it.
  template <typename BuildFn>
  ValueHandle build(const py::object &loc, BuildFn &&buildOp) {
    MLIRContext *context = state->getContext();
    Location location = toLocation(context, loc);
    DiagnosticCollector diagnostics(context);
    OpBuilder builder = atEnd();
    Operation *op = buildOp(builder, location);
    verifyOrErase(op, diagnostics);
    return {state, op->getResult(0)};
  }

  std::shared_ptr<FunctionState> state;
};

FunctionBuilder addFunction(const std::shared_ptr<Module> &module,
                            const std::string &name, const py::object &loc) {
  MLIRContext *context = module->context->context.get();
  ModuleOp moduleOp = module->module.get();
  if (name.empty())
    throw MLIRError("a function needs a name");
  if (SymbolTable::lookupSymbolIn(moduleOp, name))
    throw MLIRError("the module already has a symbol @" + name);
  OpBuilder builder = OpBuilder::atBlockEnd(moduleOp.getBody());
  auto func = func::FuncOp::create(builder, toLocation(context, loc), name,
                                   FunctionType::get(context, {}, {}));
  func.addEntryBlock();
  auto state = std::make_shared<FunctionState>(
      FunctionState{module, func, name, module->generation});
  return FunctionBuilder(std::move(state));
}

std::shared_ptr<Module> createModule(std::shared_ptr<Context> context,
                                     const std::optional<std::string> &name) {
  MLIRContext *mlirContext = context->context.get();
  auto module = std::make_shared<Module>();
  module->context = std::move(context);
  std::optional<StringRef> symbol;
  if (name)
    symbol = *name;
  module->module = ModuleOp::create(UnknownLoc::get(mlirContext), symbol);
  return module;
}

std::optional<std::string> dtypeOf(const ValueHandle &handle) {
  Type element = cast<ShapedType>(handle.type).getElementType();
  if (std::optional<ElementType> kind = getElementTypeKind(element))
    return stringifyElementType(*kind).str();
  return std::nullopt;
}

std::vector<std::optional<int64_t>> shapeOf(const ValueHandle &handle) {
  std::vector<std::optional<int64_t>> shape;
  for (int64_t dim : cast<ShapedType>(handle.type).getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? std::nullopt
                                               : std::optional<int64_t>(dim));
  return shape;
}

} // namespace

void mlir::fusion::python::bindIRBuilders(py::module_ &m, ModuleClass &module) {
  module
      .def_static("create", &createModule, py::arg("context"),
                  py::arg("name") = py::none(),
                  "An empty module, named `name` if given.")
      .def("add_function", &addFunction, py::arg("name"),
           py::arg("loc") = py::none(),
           "Appends an empty func.func; returns its FunctionBuilder.");

  py::class_<ValueHandle>(m, "Value", "A tensor of a function being built.")
      .def_property_readonly("shape", &shapeOf,
                             "Dimensions, None where dynamic.")
      .def_property_readonly("dtype", &dtypeOf)
      .def("__repr__", [](const ValueHandle &handle) {
        return "<fusion Value " + describe(handle.type) + ">";
      });

  py::class_<ScalarHandle>(m, "Scalar",
                           "An f32 (or i1) value of an elementwise body.")
      .def("__repr__", [](const ScalarHandle &handle) {
        return "<fusion Scalar " + describe(handle.type) + ">";
      });

  py::class_<ScalarBuilder>(m, "ScalarBuilder",
                            "Builds the ops of an elementwise body.")
      .def("constant", &ScalarBuilder::constant, py::arg("value"),
           "An f32 arith.constant.")
      .def("op", &ScalarBuilder::op, py::arg("name"), py::arg("operands"),
           py::arg("predicate") = py::none(), py::arg("fastmath") = py::none(),
           "Any op of the epilogue allow-list by name, e.g. 'math.erf'; "
           "arith.cmpf takes a predicate ('olt', 'oge', ...), arith.divf, "
           "math.erf and math.exp the fastmath flag 'afn'.")
      .def("round_to", &ScalarBuilder::roundTo, py::arg("x"),
           py::arg("dtype"),
           "x rounded to bf16 or f16 (`dtype`) and back to f32, as storing "
           "and loading it would.")
      .def("special", &ScalarBuilder::special, py::arg("function"),
           py::arg("libdevice"), py::arg("operands"), py::arg("formula"),
           py::arg("libm") = py::none(),
           "fusion.special: the special function `function` of `operands`, "
           "libdevice's `libdevice` (or None) on GPUs; formula(s, *args) "
           "-> Scalar fills its body with a ScalarBuilder of its own, or "
           "None where libdevice and the C library (`libm`, the CPU's) "
           "compute it.");

  py::class_<FunctionBuilder>(m, "FunctionBuilder",
                              "Appends fusion ops to a func.func.")
      .def_property_readonly("name", &FunctionBuilder::getName)
      .def("argument", &FunctionBuilder::argument, py::arg("shape"),
           py::arg("dtype"), py::arg("loc") = py::none(),
           "A new argument; None in `shape` is a dynamic dimension, `dtype` "
           "is f32, bf16 or f16.")
      .def("linear", &FunctionBuilder::linear, py::arg("x"), py::arg("w"),
           py::arg("b") = py::none(), py::arg("weight_layout") = "out_in",
           py::arg("loc") = py::none(),
           "x w^T (+ b) of a weight stored [out_features, in_features] "
           "(out_in), or x w of one stored [in_features, out_features] "
           "(in_out).")
      .def("concat", &FunctionBuilder::concat, py::arg("parts"), py::arg("dim"),
           py::arg("loc") = py::none(),
           "The parts joined along dimension `dim` (fusion.concat: a "
           "grouped GEMM's weight or bias, which the GEMM reads in place).")
      .def("random_uniform", &FunctionBuilder::randomUniform, py::arg("seed"),
           py::arg("rows_of"), py::arg("columns"), py::arg("stream"),
           py::arg("loc") = py::none(),
           "A [rows of `rows_of`, columns] draw of uniform random numbers in "
           "[0, 1) of rows_of's element type (fusion.random_uniform: "
           "Philox4x32-10 of each element's index under the 64 bits of "
           "`seed`, a [2] f32 argument).")
      .def("batch_norm", &FunctionBuilder::batchNorm, py::arg("x"),
           py::arg("training") = true, py::arg("epsilon") = 1e-5,
           py::arg("momentum") = 0.1, py::arg("weight") = py::none(),
           py::arg("bias") = py::none(), py::arg("running_mean") = py::none(),
           py::arg("running_var") = py::none(),
           py::arg("batch_stats") = py::none(), py::arg("loc") = py::none(),
           "[y], then [new_mean, new_var] in training with running stats, "
           "then [batch_mean, batch_invstd] of dtype `batch_stats` where "
           "given (training).")
      .def("elementwise", &FunctionBuilder::elementwise, py::arg("x"),
           py::arg("columns"), py::arg("body"),
           py::arg("rows") = std::vector<ValueHandle>(),
           py::arg("loc") = py::none(),
           "fusion.elementwise; body(s, x, columns, rows) -> Scalar fills "
           "its region once.")
      .def("reduce", &FunctionBuilder::reduce, py::arg("x"), py::arg("kind"),
           py::arg("groups"), py::arg("columns"), py::arg("rows"),
           py::arg("body"), py::arg("loc") = py::none(),
           "fusion.reduce of kind 'sum', 'max' or 'min' to [M, groups]; "
           "body(s, x, columns, rows) -> Scalar fills its map once.")
      .def("finish", &FunctionBuilder::finish, py::arg("results"),
           py::arg("loc") = py::none(),
           "Returns `results` and verifies the function.");
}
