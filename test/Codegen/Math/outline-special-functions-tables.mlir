// fusion-outline-special-functions makes each function in the symbol table
// of the ops it serves: the same special in two modules gets a function in
// each. A special named like another pass's out-of-line function (powf)
// takes a name of its own, which fusion-outline-powers leaves alone.
// RUN: fusion-opt %s --fusion-outline-special-functions --fusion-outline-powers | FileCheck %s

// CHECK-LABEL: module @first
// CHECK-DAG: llvm.func internal @__fusion_special_lgamma
// CHECK-DAG: llvm.func @__nv_lgammaf(f32) -> f32
// CHECK: llvm.call @__fusion_special_lgamma
// CHECK-LABEL: module @second
// CHECK-DAG: llvm.func internal @__fusion_special_lgamma
// CHECK-DAG: llvm.func @__nv_lgammaf(f32) -> f32
// CHECK-DAG: llvm.func internal @__fusion_powf
// The special function "powf": its own function, which calls the powf
// function fusion-outline-powers makes.
// CHECK-DAG: llvm.func internal @__fusion_special_powf
// CHECK-DAG: llvm.call @__fusion_powf
// CHECK: func.func @g
// CHECK-NEXT: llvm.call @__fusion_special_lgamma
// CHECK-NEXT: llvm.call @__fusion_special_powf
// CHECK-NEXT: llvm.call @__fusion_powf
module @first {
  func.func @f(%x: f32) -> f32 {
    %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    return %0 : f32
  }
}
module @second {
  func.func @g(%x: f32) -> f32 {
    %0 = fusion.special "lgamma"(%x) libdevice "__nv_lgammaf" : (f32) -> f32 {
    ^bb0(%t: f32):
      %l = math.log %t : f32
      fusion.yield %l : f32
    }
    %1 = fusion.special "powf"(%0) : (f32) -> f32 {
    ^bb0(%t: f32):
      %p = math.powf %t, %t : f32
      fusion.yield %p : f32
    }
    %2 = math.powf %1, %1 : f32
    return %2 : f32
  }
}
