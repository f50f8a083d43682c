// An op whose custom form does not re-parse (see verify-output-roundtrip.mlir).
func.func @f() -> index {
  %0 = "nvgpu.device_async_create_group"() : () -> !nvgpu.device.async.token
  %1 = arith.constant 1 : index
  return %1 : index
}
