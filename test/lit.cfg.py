# lit configuration for bmb: `.mlir` tests drive bmb-opt, `.bmb` tests drive
# bmbc. Inputs/ folders hold files that other tests read and are not tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "bmb"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".bmb", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   # ctest suites with files lit would take for tests
                   "e2e", "runtime", "install", "unit", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.bmb_obj_root, "test")

config.substitutions.append(("%bmb_src", config.bmb_src_root))
config.substitutions.append(("%stdlib", os.path.join(config.bmb_src_root, "stdlib")))
config.substitutions.append(("%models", os.path.join(config.bmb_src_root, "models")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [os.path.join(config.bmb_obj_root, "bin"), config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["bmb-opt", "bmbc"], tool_dirs)

if config.bmb_have_cuda:
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.bmb_nvcc))
    # cuda-gpu: a GPU that CUDA programs can use (bmb-cuda-probe opens it the
    # way every --target=cuda executable does). Tests that run CUDA code
    # REQUIRE it; the no-GPU error tests are UNSUPPORTED with it.
    import subprocess
    probe = os.path.join(config.bmb_obj_root, "bin", "bmb-cuda-probe")
    if os.path.exists(probe) and subprocess.run(
            [probe], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        config.available_features.add("cuda-gpu")
