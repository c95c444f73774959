//===- Driver.cpp - bmbc's command line and its stages --------------------===//
//
// The stages: load + parse (--emit=ast stops here), Sema, MLIRGen, the
// job's pass pipeline (--print-pipeline shows it, --dump-ir prints IR after
// passes), then what was asked for (--stats, --emit=mlir). Options live in
// this tool only; libraries take them through FrontendOptions and pipeline
// functions.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver.h"
#include "compiler/ZeroAuto.h"

#include "compiler/BuildExecutable.h"
#include "compiler/EmitProgram.h"
#include "dialects/Bmb/BmbDialect.h"
#include "dialects/Bmb/BmbOps.h"
#include "dialects/BmbExec/BmbExecOps.h"
#include "lang/AST.h"
#include "lang/MLIRGen.h"
#include "lang/Sema.h"
#include "passes/ParamStats.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <sstream>

#ifndef BMB_VERSION
#define BMB_VERSION "0.0.0"
#endif

using namespace bmb;

namespace {

enum class Emit { None, AST, BMB, MLIR, CUDA };
enum class InputLang { Auto, Bmb, MLIR };

/// The command line. bmbc parses it itself: libLLVM's global options (it
/// registers its own -stats, for one) must neither clash with ours nor show
/// up in --help.
struct Options {
  std::string input;
  Emit emit = Emit::None;
  InputLang lang = InputLang::Auto;
  std::string job, model, target, dumpIR;
  bool printPipeline = false, stats = false, help = false, version = false;
  bool locations = false;
  std::string output = "-";
  std::vector<std::string> includeDirs;
};

/// What the target changes in the train/tune passes: the cuda target's
/// device attention has no reduced-input variant yet, so under precision =
/// bf16 / fp16 its matmuls stay fp32 there (docs/training.md).
mlir::bmb::TrainingPipelineOptions trainingOptions(const Options &o) {
  mlir::bmb::TrainingPipelineOptions t;
  t.autocastAttention = o.target != "cuda";
  return t;
}

const char *kOptionHelp = R"(Options:
  --job NAME            the job to compile (default: the file's only job)
  --model NAME          with no job: the model to compile (B = 1, T = ctx)
  --emit=KIND           print instead of building an executable: ast (the
                        syntax tree), bmb (the model graph after the front
                        end), mlir (the IR after the job's whole
                        pipeline: the execution plan) or cuda (the one
                        CUDA C++ source that the executable is built from)
  --stats               print the parameter and memory table
  --print-pipeline      list the passes that run for the job
  --dump-ir=after-all   print the IR after every pass (the first dump is
                        MLIRGen's output); --dump-ir=PASS after one pass
  --target=host|cuda    the target (default host); cuda builds with nvcc
                        against the CUDA backend of libbmrt, whose executables
                        so far stop after opening the GPU (docs/building.md)
  -x bmb|mlir           the input language (default: from the extension)
  --locations           print source locations (loc(...)) in IR output, so IR
                        read back with -x mlir still points at the .bmb lines
  -I DIR                also search DIR for imports
  -o FILE               an infer or train job without --emit: build the
                        executable FILE ($CXX or the build's compiler, against
                        libbmrt);
                        with --emit: write the output to FILE (default:
                        standard output)
  --help, --version
)";

/// Parses argv into `o`; returns an error message, or "" on success.
std::string parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string name = a, value;
    bool hasValue = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        hasValue = true;
      }
    } else if ((a.rfind("-I", 0) == 0 || a.rfind("-o", 0) == 0 || a.rfind("-x", 0) == 0) &&
               a.size() > 2) {
      name = a.substr(0, 2);
      value = a.substr(2);
      hasValue = true;
    }
    auto takeValue = [&]() -> bool {
      if (hasValue)
        return true;
      if (i + 1 >= args.size())
        return false;
      value = args[++i];
      return true;
    };
    auto flagOnly = [&]() { return !hasValue; };
    if (name == "--help" || name == "-h" || name == "-help") {
      o.help = true;
    } else if (name == "--version") {
      o.version = true;
    } else if (name == "--stats") {
      if (!flagOnly())
        return "--stats takes no value";
      o.stats = true;
    } else if (name == "--locations") {
      if (!flagOnly())
        return "--locations takes no value";
      o.locations = true;
    } else if (name == "--print-pipeline") {
      if (!flagOnly())
        return "--print-pipeline takes no value";
      o.printPipeline = true;
    } else if (name == "--emit") {
      if (!takeValue())
        return "--emit needs a value (ast, bmb, mlir or cuda)";
      if (value == "ast")
        o.emit = Emit::AST;
      else if (value == "mlir")
        o.emit = Emit::MLIR;
      else if (value == "bmb")
        o.emit = Emit::BMB;
      else if (value == "cuda")
        o.emit = Emit::CUDA;
      else
        return "unknown --emit value '" + value + "' (expected ast, bmb, mlir or cuda)";
    } else if (name == "--job" || name == "--model" || name == "--target" ||
               name == "--dump-ir") {
      if (!takeValue() || value.empty())
        return name + " needs a value";
      (name == "--job" ? o.job : name == "--model" ? o.model
                               : name == "--target" ? o.target : o.dumpIR) = value;
    } else if (name == "-o") {
      if (!takeValue() || value.empty())
        return "-o needs a file name";
      o.output = value;
    } else if (name == "-I") {
      if (!takeValue() || value.empty())
        return "-I needs a directory";
      o.includeDirs.push_back(value);
    } else if (name == "-x") {
      if (!takeValue())
        return "-x needs a language (bmb or mlir)";
      if (value == "bmb")
        o.lang = InputLang::Bmb;
      else if (value == "mlir")
        o.lang = InputLang::MLIR;
      else
        return "unknown input language '" + value + "' (expected bmb or mlir)";
    } else if (a.size() > 1 && a[0] == '-') {
      return "unknown option '" + a + "' (see bmbc --help)";
    } else {
      if (!o.input.empty())
        return "more than one input file ('" + o.input + "' and '" + a + "')";
      o.input = a;
    }
  }
  return "";
}

const char *kOverview = R"(bmbc: the bmb compiler

  bmbc FILE.bmb [--job NAME] [options]

Compiles a bmb file: checks it, builds the job's model as bmb IR and runs the
job's pass pipeline. For an infer job, -o EXE builds a standalone executable
(prefill + decode entry points, checkpoint loading, tokenizer, sampling);
--emit=cuda prints its source, --emit=mlir the execution plan, --emit=bmb the
model graph; --stats prints the parameter and memory table; --dump-ir=after-all
prints the IR after every pass. For a train job, -o EXE builds a training
executable (forward_backward, optimizer_step and evaluate entries, data,
checkpoints, the step loop); --dump-ir=bmb-insert-optimizer shows its model
graph with the loss, backward pass and optimizer. For a tune job, -o EXE builds
a tuning executable (labelled data, prompt assembly, the deltas and prompt
params trained, accuracy, delta-only checkpoints). Compress jobs stop after
the front end.

Imports are searched next to the importing file, then in -I directories,
then in the standard library's root (stdlib/nn.bmb is found from anywhere).

Exit status: 0 success; 1 the input has errors (printed as
file:line:col: error: ...); 2 wrong command line; 3 the requested feature
is not implemented yet.
)";

/// The directory that holds `stdlib/`: the install tree's share/bmb next to
/// the executable, else the source tree bmbc was built from.
std::string stdlibRoot(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&stdlibRoot);
  if (!exe.empty()) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(dir, "..", "share", "bmb");
    llvm::SmallString<256> probe(dir);
    llvm::sys::path::append(probe, "stdlib", "nn.bmb");
    if (llvm::sys::fs::exists(probe))
      return std::string(dir);
  }
#ifdef BMB_SOURCE_ROOT
  return BMB_SOURCE_ROOT;
#else
  return ".";
#endif
}

/// The memory plan of a program: one allocation per role (a train program's
/// grads and optimizer state instead of the KV cache), the activations of
/// each entry (forward_backward holds the saved activations), and the peak
/// (what the process needs besides code and the data being read).
void printMemoryPlan(mlir::bmb::exec::ProgramOp program, bool cudaTarget,
                     llvm::raw_ostream &os) {
  auto bytes = [&](mlir::Operation *op, llvm::StringRef name) {
    auto a = op->getAttrOfType<mlir::IntegerAttr>(name);
    return a ? a.getInt() : 0;
  };
  int64_t params = bytes(program, "param_bytes"), state = bytes(program, "state_bytes"),
          act = bytes(program, "activation_bytes"), grads = bytes(program, "grad_bytes"),
          optState = bytes(program, "opt_state_bytes");
  bool train = program->hasAttr("train");
  // Mixed precision: the GEMMs' bf16/fp16 copy of the trainable group, 2
  // bytes per element, allocated by the runtime (Buffers::lowParams); under
  // zero = 3 of the (fp32) param staging instead (bmrt::low_param_bytes).
  auto precision = program->getAttrOfType<mlir::StringAttr>("precision");
  int64_t paramStaging = bytes(program, "param_staging_bytes");
  int64_t lowCopy = !precision ? 0
                    : paramStaging ? paramStaging / 2
                                   : 2 * bytes(program, "group_elems");
  auto row = [&](const std::string &what, int64_t n) {
    os << "  " << llvm::left_justify(what, 28) << " "
       << llvm::right_justify(mlir::bmb::formatBytes(n), 12) << "  (" << n << " bytes)\n";
  };
  os << "\nmemory plan of '" << program.getSymName() << "' (one allocation per role):\n";
  // zero = 3: the params as well (the trainable group's part: 1/N), plus
  // the staging each unit is gathered into.
  row(paramStaging ? "params (1 rank; N: 1/N)" : "params", params);
  if (paramStaging)
    row("params staging (zero = 3)", paramStaging);
  // zero = 2 and 3: the backward's staging of one unit at a time (the grads
  // row is the whole group here; the runtime keeps only a rank's partition).
  int64_t staging = bytes(program, "grad_staging_bytes");
  if (train) {
    row(staging ? "grads (1 rank; N: 1/N)" : "grads", grads);
    if (staging)
      row(paramStaging ? "grads staging (zero = 3)" : "grads staging (zero = 2)", staging);
    // offload = optimizer (bmb-offload-optimizer): m, v, an fp32 master
    // copy of the params and the gradient staging, in host memory (pinned
    // on a GPU), so out of the device's peak on --target=cuda only.
    if (int64_t host = bytes(program, "offload_state_bytes")) {
      optState = host; // bmb-plan-memory's host role: 4 slots instead of AdamW's 2
      row("optimizer state (offloaded)", optState);
      os << "  (offload = optimizer: AdamW's m and v, the fp32 master params and the gradient "
            "staging are in host memory"
         << (cudaTarget ? "; the GPU's peak below leaves them out)\n"
                        : "; on --target=host that is the same RAM, so the peak counts them "
                          "and nothing is saved)\n");
    } else {
      row("optimizer state", optState);
    }
    if (lowCopy)
      row((precision.getValue() + (paramStaging ? " weight staging (zero = 3)" : " weight copy"))
              .str(),
          lowCopy);
  } else {
    row("state (KV cache)", state);
  }
  for (auto f : program.getOps<mlir::func::FuncOp>())
    row(("activations of " + f.getName()).str(), bytes(f, "activation_bytes"));
  row("activations (shared)", act);
  bool offHost = cudaTarget && bytes(program, "offload_state_bytes") > 0;
  row(offHost ? "peak (GPU)" : "peak",
      params + paramStaging + state + grads + staging + (offHost ? 0 : optState) + lowCopy + act);
}

int usage(const std::string &message) {
  llvm::errs() << "bmbc: error: " << message << "\n";
  return kExitUsageError;
}

void printPipelineList(mlir::OpPassManager &pm, llvm::raw_ostream &os, int indent) {
  for (mlir::Pass &p : pm.getPasses()) {
    os.indent(indent) << "- " << (p.getArgument().empty() ? p.getName() : p.getArgument());
    if (!p.getDescription().empty())
      os << ": " << p.getDescription();
    os << "\n";
  }
}

} // namespace

int bmb::driverMain(int argc, char **argv) {
  Options opts;
  if (std::string err = parseArgs(argc, argv, opts); !err.empty())
    return usage(err);
  if (opts.help) {
    llvm::outs() << kOverview << "\n" << kOptionHelp;
    return kExitSuccess;
  }
  if (opts.version) {
    llvm::outs() << "bmbc " << BMB_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
    return kExitSuccess;
  }
  if (opts.input.empty())
    return usage("no input file (try: bmbc models/gpt2.bmb --job pretrain --stats)");
  if (!opts.job.empty() && !opts.model.empty())
    return usage("--job and --model exclude each other: a job names its model");
  if (!opts.target.empty() && opts.target != "host" && opts.target != "cuda")
    return usage("unknown target '" + opts.target + "' (expected host or cuda)");
#ifndef BMB_HAVE_CUDA
  if (opts.target == "cuda") {
    llvm::errs() << "bmbc: error: the cuda target is unavailable: no CUDA toolkit "
                    "(nvcc, cuBLAS, NCCL) was found when bmbc was built\n";
    return kExitUsageError;
  }
#endif
  bool wantsExecutable = opts.emit == Emit::None && opts.output != "-" &&
                         !opts.stats && !opts.printPipeline && opts.dumpIR.empty();

  InputLang lang = opts.lang;
  if (lang == InputLang::Auto)
    lang = llvm::StringRef(opts.input).ends_with(".mlir") ? InputLang::MLIR : InputLang::Bmb;
  if (lang == InputLang::MLIR && opts.emit == Emit::AST)
    return usage("--emit=ast needs a .bmb input");

  mlir::DialectRegistry registry;
  registry.insert<mlir::bmb::BmbDialect, mlir::bmb::exec::BmbExecDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // IR printing of the whole module after each pass needs one thread.
  context.disableMultithreading();
  // Errors point at the user's line; the failing op's generic form helps
  // nobody who wrote a .bmb file.
  context.printOpOnDiagnostic(false);

  // MLIR diagnostics (verifier, passes) print with the source line, so the
  // llvm::SourceMgr gets every file the front end read.
  llvm::SourceMgr llvmSources;
  mlir::SourceMgrDiagnosticHandler diagHandler(llvmSources, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (lang == InputLang::Bmb) {
    SourceManager sources;
    DiagnosticEngine diags(sources, std::cerr);
    FrontendOptions fopts;
    fopts.importDirs.assign(opts.includeDirs.begin(), opts.includeDirs.end());
    fopts.importDirs.push_back(stdlibRoot(argv[0]));
    fopts.job = opts.job;
    fopts.model = opts.model;
    std::optional<LoadedFiles> files = loadFiles(opts.input, fopts, sources, diags);
    if (!files) {
      diags.flush();
      return kExitInputError;
    }
    if (opts.emit == Emit::AST) {
      std::string err;
      auto out = mlir::openOutputFile(opts.output, &err);
      if (!out)
        return usage(err);
      std::ostringstream os;
      ast::dump(*files->files.front(), sources, os);
      out->os() << os.str();
      out->keep();
      return kExitSuccess;
    }
    std::optional<program::Program> prog = analyze(*files, fopts, sources, diags);
    diags.flush();
    if (!prog)
      return kExitInputError;
    for (size_t i = 0; i < sources.numFiles(); ++i)
      llvmSources.AddNewSourceBuffer(
          llvm::MemoryBuffer::getMemBufferCopy(sources.text(i), sources.path(i)),
          llvm::SMLoc());
    // An infer job has two entry points (DESIGN decision 1): prefill at
    // T = ctx (the capacity; the prompt length is a run-time value) and
    // decode at T = 1, elaborated from the same forward.
    bool infer = prog->job && prog->job->kind == program::JobKind::Infer;
    module = mlirGen(context, *prog, sources, infer ? "prefill" : "forward");
    if (module && infer) {
      FrontendOptions decodeOpts = fopts;
      decodeOpts.seqOverride = 1;
      DiagnosticEngine decodeDiags(sources, std::cerr);
      std::optional<program::Program> decode = analyze(*files, decodeOpts, sources, decodeDiags);
      decodeDiags.flush();
      if (!decode)
        return kExitInputError;
      if (mlir::failed(addEntry(*module, *decode, sources, "decode")))
        module = nullptr;
    }
    // Where the program came from, for the emitted source's header: kept
    // in the IR so that a dump read back with -x mlir emits the same text.
    if (module)
      (*module)->setAttr("bmb.source", mlir::StringAttr::get(&context, opts.input));
    if (!module) {
      llvm::errs() << "bmbc: internal error: the generated IR does not verify "
                      "(please report this with the input file)\n";
      return kExitInputError;
    }
  } else {
    std::string err;
    auto buffer = mlir::openInputFile(opts.input, &err);
    if (!buffer)
      return usage(err);
    llvmSources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(llvmSources, &context);
    if (!module)
      return kExitInputError;
  }

  mlir::OpPrintingFlags printFlags;
  if (opts.locations)
    printFlags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);

  // The job decides the pipeline: an infer job runs the infer pipeline, a
  // train job the train pipeline (--emit=bmb stops after the front end for
  // every job; --dump-ir=bmb-insert-optimizer shows a train job's graph with
  // its loss, backward and updates); a tune job runs the tune pipeline (the
  // train pipeline after bmb-lower-prompts); IR already on its way
  // to an execution plan runs the plan's passes (the infer pipeline's, which
  // leave a lowered program to fusion and planning); compress jobs stop
  // after the front end.
  bool inferJob = false, trainJob = false, tuneJob = false, lowered = false;
  for (auto job : module->getOps<mlir::bmb::JobOp>()) {
    inferJob |= job.getKind() == mlir::bmb::JobKind::Infer;
    trainJob |= job.getKind() == mlir::bmb::JobKind::Train;
    tuneJob |= job.getKind() == mlir::bmb::JobKind::Tune;
  }
  for (auto program : module->getOps<mlir::bmb::exec::ProgramOp>()) {
    (void)program;
    lowered = true;
  }
  if ((opts.emit == Emit::CUDA || wantsExecutable) && !inferJob && !trainJob && !tuneJob &&
      !lowered) {
    llvm::errs() << "bmbc: error: only infer, train and tune jobs build executables so far; "
                    "compression executables are not implemented yet\n";
    return kExitNotImplemented;
  }
  // zero = auto compiles its candidate plans first and writes the choice
  // into the job (compiler/ZeroAuto.h).
  if (trainJob && opts.emit != Emit::BMB &&
      mlir::failed(mlir::bmb::resolveZeroAuto(*module, opts.target == "cuda", llvm::errs())))
    return kExitInputError;
  mlir::PassManager pm(&context);
  if (opts.emit == Emit::BMB) {
    mlir::bmb::populateFrontendPipeline(pm);
  } else if (inferJob || lowered) {
    mlir::bmb::populateInferPipeline(pm);
  } else if (trainJob) {
    mlir::bmb::populateTrainPipeline(pm, trainingOptions(opts));
  } else if (tuneJob) {
    mlir::bmb::populateTunePipeline(pm, trainingOptions(opts));
  } else {
    mlir::bmb::populateFrontendPipeline(pm);
  }

  if (opts.printPipeline) {
    llvm::outs() << "pipeline: ";
    pm.printAsTextualPipeline(llvm::outs());
    llvm::outs() << "\npasses, in order:\n";
    printPipelineList(pm, llvm::outs(), 2);
  }

  if (!opts.dumpIR.empty()) {
    std::string which = opts.dumpIR;
    bool all = which == "after-all";
    if (!all) {
      bool known = false;
      std::string names;
      for (mlir::Pass &p : pm.getPasses()) {
        known |= p.getArgument() == which;
        names += (names.empty() ? "" : ", ") + p.getArgument().str();
      }
      if (!known)
        return usage("--dump-ir: no pass named '" + which + "' in this pipeline (" + names +
                     "; or after-all)");
    }
    if (all) {
      llvm::outs() << "// -----// IR Dump After MLIRGen (bmbc) //----- //\n";
      module->print(llvm::outs(), printFlags);
      llvm::outs() << "\n";
    }
    pm.enableIRPrinting(
        [](mlir::Pass *, mlir::Operation *) { return false; },
        [all, which](mlir::Pass *p, mlir::Operation *) {
          return all || p->getArgument() == which;
        },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, llvm::outs(), printFlags);
  }

  // The parameter table is computed on the model graph, before lowering
  // replaces it with the execution plan; on a copy with the job's deltas
  // inserted (bmb-insert-deltas), so that it counts the delta params and
  // trains only what the job trains.
  std::optional<mlir::bmb::ParamStats> paramStats;
  if (opts.stats) {
    mlir::OwningOpRef<mlir::ModuleOp> withDeltas = module->clone();
    mlir::PassManager deltas(&context);
    if (tuneJob) // the prompt's params (@prompt.soft) are trained too
      deltas.addPass(mlir::bmb::createLowerPromptsPass());
    deltas.addPass(mlir::bmb::createInsertDeltasPass());
    if (mlir::failed(deltas.run(*withDeltas)))
      return kExitInputError;
    mlir::FailureOr<mlir::bmb::ParamStats> stats = mlir::bmb::computeParamStats(*withDeltas);
    if (mlir::failed(stats))
      return kExitInputError;
    paramStats = *stats;
  }

  if (mlir::failed(pm.run(*module)))
    return kExitInputError;

  if (opts.stats) {
    mlir::bmb::printParamStats(*paramStats, llvm::outs());
    for (auto program : module->getOps<mlir::bmb::exec::ProgramOp>())
      printMemoryPlan(program, opts.target == "cuda", llvm::outs());
  }

  if (opts.emit == Emit::MLIR || opts.emit == Emit::BMB) {
    std::string err;
    auto out = mlir::openOutputFile(opts.output, &err);
    if (!out)
      return usage(err);
    module->print(out->os(), printFlags);
    out->os() << "\n";
    out->keep();
  }
  // The CUDA backend's kernels are fp32 (bf16/fp16 inputs included): an fp64
  // program's double kernels would only fail in nvcc's link.
  if (wantsExecutable && opts.target == "cuda") {
    bool f64 = false;
    module->walk([&](mlir::bmb::exec::ParamOp p) {
      f64 |= llvm::cast<mlir::MemRefType>(p.getType()).getElementType().isF64();
    });
    if (f64) {
      llvm::errs() << "bmbc: error: the cuda target has no fp64 kernels yet: this job computes "
                      "in fp64 (precision = fp64); build it with --target=host\n";
      return kExitNotImplemented;
    }
  }
  if (opts.emit == Emit::CUDA || wantsExecutable) {
    std::string source;
    llvm::raw_string_ostream os(source);
    if (mlir::failed(mlir::bmb::emitProgram(*module, os)))
      return kExitInputError;
    if (wantsExecutable)
      return (opts.target == "cuda" ? buildCudaExecutable(source, opts.output, argv[0])
                                    : buildExecutable(source, opts.output, argv[0]))
                 ? kExitSuccess
                 : kExitInputError;
    std::string err;
    auto out = mlir::openOutputFile(opts.output, &err);
    if (!out)
      return usage(err);
    out->os() << source;
    out->keep();
  }
  return kExitSuccess;
}
