//===- BmbAttrs.td - bmb enums and attributes --------------*- tablegen -*-===//
#ifndef BMB_ATTRS_TD
#define BMB_ATTRS_TD

include "BmbDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Bmb_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu evaluates the Gaussian CDF", [
      I32EnumAttrCase<"None", 0, "none">,  // exact, with erf (BERT)
      I32EnumAttrCase<"Tanh", 1, "tanh">,  // the tanh approximation (GPT-2)
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::bmb";
}
def Bmb_GeluApproximationAttr : EnumAttr<Bmb_Dialect, Bmb_GeluApproximation,
                                         "gelu_approximation">;

def Bmb_Activation : I32EnumAttr<"Activation",
    "an element-wise activation, as bmb.act_grad differentiates it", [
      I32EnumAttrCase<"GeluTanh", 0, "gelu_tanh">, // bmb.gelu approximate tanh
      I32EnumAttrCase<"GeluErf", 1, "gelu_erf">,   // bmb.gelu approximate none
      I32EnumAttrCase<"Relu", 2, "relu">,
      I32EnumAttrCase<"Silu", 3, "silu">,
      I32EnumAttrCase<"Tanh", 4, "tanh">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::bmb";
}
def Bmb_ActivationAttr : EnumAttr<Bmb_Dialect, Bmb_Activation, "activation">;

def Bmb_Distribution : I32EnumAttr<"Distribution",
    "the distribution bmb.random samples", [
      I32EnumAttrCase<"Normal", 0, "normal">,   // N(0, 1)
      I32EnumAttrCase<"Uniform", 1, "uniform">, // U[0, 1)
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::bmb";
}
def Bmb_DistributionAttr : EnumAttr<Bmb_Dialect, Bmb_Distribution,
                                    "distribution">;

def Bmb_JobKind : I32EnumAttr<"JobKind", "what a job does with its model", [
      I32EnumAttrCase<"Train", 0, "train">,
      I32EnumAttrCase<"Tune", 1, "tune">,
      I32EnumAttrCase<"Compress", 2, "compress">,
      I32EnumAttrCase<"Infer", 3, "infer">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::bmb";
}
def Bmb_JobKindAttr : EnumAttr<Bmb_Dialect, Bmb_JobKind, "job_kind">;

def Bmb_InitKind : I32EnumAttr<"InitKind", "how a parameter is initialized", [
      I32EnumAttrCase<"Zeros", 0, "zeros">,
      I32EnumAttrCase<"Ones", 1, "ones">,
      I32EnumAttrCase<"Normal", 2, "normal">,
      I32EnumAttrCase<"Uniform", 3, "uniform">,
      I32EnumAttrCase<"Constant", 4, "constant">,
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::bmb";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Bmb_InitAttr : AttrDef<Bmb_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "a parameter initializer";
  let description = [{
    `zeros`, `ones`, `normal(std)` (mean 0), `uniform(low, high)` or
    `constant(value)`. `a` holds std, low or value; `b` holds high; unused
    numbers are 0. Inside `bmb.param` it is printed bare
    (`init normal(0.02)`); on its own it reads `#bmb.init<normal(0.02)>`.
  }];
  let parameters = (ins EnumParameter<Bmb_InitKind>:$kind,
                        APFloatParameter<"std, low or value">:$a,
                        APFloatParameter<"high">:$b);
  let builders = [
    AttrBuilder<(ins "InitKind":$kind, CArg<"double", "0.0">:$a,
                     CArg<"double", "0.0">:$b), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(a), ::llvm::APFloat(b));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    double getFirst() const { return getA().convertToDouble(); }
    double getSecond() const { return getB().convertToDouble(); }
    /// Parses/prints the body without the angle brackets: `normal(0.02)`.
    static ::mlir::Attribute parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;
  }];
}

#endif // BMB_ATTRS_TD
