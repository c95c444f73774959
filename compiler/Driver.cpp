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

#include "dialects/Bmb/BmbDialect.h"
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
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
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
namespace cl = llvm::cl;

namespace {

cl::OptionCategory bmbcCategory("bmbc options");

enum class Emit { None, AST, MLIR, CUDA };
enum class InputLang { Auto, Bmb, MLIR };

struct Options {
  cl::opt<std::string> input{cl::Positional, cl::desc("<input .bmb or .mlir file>"),
                             cl::cat(bmbcCategory)};
  cl::opt<Emit> emit{
      "emit", cl::desc("What to print"), cl::init(Emit::None),
      cl::values(clEnumValN(Emit::AST, "ast", "the syntax tree of the input file"),
                 clEnumValN(Emit::MLIR, "mlir", "the IR after the pass pipeline"),
                 clEnumValN(Emit::CUDA, "cuda", "the CUDA C++ source (not implemented yet)")),
      cl::cat(bmbcCategory)};
  cl::opt<InputLang> lang{
      "x", cl::desc("Input language (default: from the file extension)"),
      cl::init(InputLang::Auto),
      cl::values(clEnumValN(InputLang::Bmb, "bmb", "a .bmb source file"),
                 clEnumValN(InputLang::MLIR, "mlir", "bmb IR, e.g. from --dump-ir")),
      cl::cat(bmbcCategory)};
  cl::opt<std::string> job{"job", cl::desc("The job to compile (default: the file's only job)"),
                           cl::value_desc("name"), cl::cat(bmbcCategory)};
  cl::opt<std::string> model{"model",
                             cl::desc("With no job: the model to compile (B = 1, T = ctx)"),
                             cl::value_desc("name"), cl::cat(bmbcCategory)};
  cl::opt<std::string> target{"target", cl::desc("host (default) or cuda"),
                              cl::value_desc("target"), cl::init(""), cl::cat(bmbcCategory)};
  cl::opt<std::string> dumpIR{
      "dump-ir",
      cl::desc("Print the IR after every pass (after-all), or after the named pass "
               "(e.g. canonicalize); the first dump is MLIRGen's output"),
      cl::value_desc("after-all|pass"), cl::cat(bmbcCategory)};
  cl::opt<bool> printPipeline{"print-pipeline",
                              cl::desc("List the passes that run for the job"),
                              cl::cat(bmbcCategory)};
  cl::opt<bool> stats{"stats",
                      cl::desc("Print the parameter and memory table of the model"),
                      cl::cat(bmbcCategory)};
  cl::opt<std::string> output{"o", cl::desc("Output file (default: standard output)"),
                              cl::value_desc("file"), cl::init("-"), cl::cat(bmbcCategory)};
  cl::list<std::string> includeDirs{"I", cl::desc("Add a directory to search for imports"),
                                    cl::value_desc("dir"), cl::Prefix,
                                    cl::cat(bmbcCategory)};
};

const char *kOverview = R"(bmbc: the bmb compiler

  bmbc FILE.bmb [--job NAME] [options]

Compiles a bmb file: checks it, builds the job's model as bmb IR and runs the
job's pass pipeline. --emit=mlir prints the IR; --stats prints the parameter
and memory table; --dump-ir=after-all prints the IR after every pass.
Building executables (-o without --emit) comes with the host backend.

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
  cl::HideUnrelatedOptions(bmbcCategory);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "bmbc " << BMB_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  std::string parseErrors;
  llvm::raw_string_ostream errStream(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &errStream)) {
    errStream.flush();
    llvm::errs() << parseErrors;
    return kExitUsageError;
  }
  if (opts.input.empty())
    return usage("no input file (try: bmbc models/gpt2.bmb --job pretrain --stats)");
  if (!opts.target.empty() && opts.target != "host" && opts.target != "cuda")
    return usage("unknown target '" + opts.target + "' (expected host or cuda)");
#ifndef BMB_HAVE_CUDA
  if (opts.target == "cuda") {
    llvm::errs() << "bmbc: error: the cuda target is unavailable: no CUDA toolkit "
                    "(nvcc, cuBLAS, NCCL) was found when bmbc was built\n";
    return kExitUsageError;
  }
#endif
  if (opts.emit == Emit::CUDA) {
    llvm::errs() << "bmbc: error: --emit=cuda is not implemented yet (emission comes "
                    "with the host backend)\n";
    return kExitNotImplemented;
  }
  bool wantsExecutable = opts.emit == Emit::None && opts.output != "-" &&
                         !opts.stats && !opts.printPipeline && opts.dumpIR.empty();
  if (wantsExecutable) {
    llvm::errs() << "bmbc: error: building executables is not implemented yet; use "
                    "--emit=mlir -o FILE for the IR\n";
    return kExitNotImplemented;
  }

  InputLang lang = opts.lang;
  if (lang == InputLang::Auto)
    lang = llvm::StringRef(opts.input).ends_with(".mlir") ? InputLang::MLIR : InputLang::Bmb;
  if (lang == InputLang::MLIR && opts.emit == Emit::AST)
    return usage("--emit=ast needs a .bmb input");

  mlir::DialectRegistry registry;
  registry.insert<mlir::bmb::BmbDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // IR printing of the whole module after each pass needs one thread.
  context.disableMultithreading();

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
    module = mlirGen(context, *prog, sources);
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

  mlir::PassManager pm(&context);
  populateFrontendPipeline(pm);

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
      module->print(llvm::outs());
      llvm::outs() << "\n";
    }
    pm.enableIRPrinting(
        [](mlir::Pass *, mlir::Operation *) { return false; },
        [all, which](mlir::Pass *p, mlir::Operation *) {
          return all || p->getArgument() == which;
        },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, llvm::outs());
  }

  if (mlir::failed(pm.run(*module)))
    return kExitInputError;

  if (opts.stats) {
    if (mlir::failed(printParamStats(*module, llvm::outs())))
      return kExitInputError;
  }

  if (opts.emit == Emit::MLIR) {
    std::string err;
    auto out = mlir::openOutputFile(opts.output, &err);
    if (!out)
      return usage(err);
    module->print(out->os());
    out->os() << "\n";
    out->keep();
  }
  return kExitSuccess;
}
