// Multi-process comm tests driven from one GoogleTest process: it starts
// comm_worker ranks itself, torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) for the TCP backend, and runs `timeout 60 mpirun ...` for
// MPI's failure paths, then checks exit statuses, messages and how long the
// job took (a job that should stop must not wait for a sleeping rank).
// The MPI collectives themselves are the ctest entries bmrt_comm.mpi_*.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef BMRT_COMM_WORKER
#error "BMRT_COMM_WORKER: the comm_worker executable"
#endif
#ifndef BMRT_MPIEXEC
#error "BMRT_MPIEXEC: mpirun"
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Spec {
  std::vector<std::string> argv;
  std::vector<std::string> env; // "NAME=value", added to ours
  double startDelay = 0;        // seconds after the first process
};

struct Outcome {
  std::vector<int> codes; // exit status; 128 + signal; -1: killed by us
  std::vector<std::string> logs;
  double seconds = 0;
  bool timedOut = false;
  std::string all() const {
    std::string s;
    for (size_t i = 0; i < logs.size(); ++i)
      s += "--- process " + std::to_string(i) + " (status " + std::to_string(codes[i]) +
           "):\n" + logs[i];
    return s;
  }
};

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t spawn(const Spec &spec, const std::string &logPath) {
  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("fork");
    std::abort();
  }
  if (pid > 0) {
    ::setpgid(pid, pid); // also here: the child may not have run yet when we kill
    return pid;
  }
  // Child: its own process group (so a whole mpirun job can be killed),
  // output to the log, the extra environment, then the program.
  ::setpgid(0, 0);
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "RANK", "WORLD_SIZE",
                           "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"})
    ::unsetenv(name);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  for (const std::string &kv : spec.env) {
    size_t eq = kv.find('=');
    ::setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
  int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0)
    ::_exit(126);
  std::vector<char *> argv;
  for (const std::string &a : spec.argv)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

/// Runs the processes together. Once process `stopAfter` exits (-1: none),
/// the others are killed (as a launcher stops a job whose rank failed).
Outcome runAll(const std::vector<Spec> &specs, double limitSeconds, int stopAfter = -1) {
  static int counter = 0;
  const int notStarted = -2, running = -3;
  size_t n = specs.size();
  Outcome out;
  out.codes.assign(n, notStarted);
  std::vector<pid_t> pids(n, -1);
  std::vector<std::string> logs(n);
  auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  for (;;) {
    bool stop = false, busy = false;
    for (size_t i = 0; i < n; ++i) {
      if (out.codes[i] == notStarted && elapsed() >= specs[i].startDelay) {
        logs[i] = ::testing::TempDir() + "comm_launch_" + std::to_string(::getpid()) + "_" +
                  std::to_string(counter++) + ".log";
        pids[i] = spawn(specs[i], logs[i]);
        out.codes[i] = running;
      }
      if (out.codes[i] == running) {
        int status = 0;
        if (::waitpid(pids[i], &status, WNOHANG) == pids[i]) {
          out.codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          if ((int)i == stopAfter)
            stop = true;
        }
      }
      busy = busy || out.codes[i] == running || out.codes[i] == notStarted;
    }
    if (elapsed() > limitSeconds) {
      out.timedOut = true;
      stop = true;
    }
    if (stop || !busy) {
      for (size_t i = 0; i < n; ++i) {
        if (out.codes[i] == running) {
          ::kill(-pids[i], SIGKILL); // its whole process group
          ::waitpid(pids[i], nullptr, 0);
        }
        if (out.codes[i] == running || out.codes[i] == notStarted)
          out.codes[i] = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  out.seconds = elapsed();
  for (size_t i = 0; i < n; ++i) {
    out.logs.push_back(logs[i].empty() ? "" : readFile(logs[i]));
    if (!logs[i].empty())
      std::remove(logs[i].c_str());
  }
  return out;
}

/// A TCP port nobody listens on now (the kernel's pick for port 0).
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, (sockaddr *)&a, sizeof a) < 0 ||
      ::getsockname(fd, (sockaddr *)&a, &len) < 0) {
    std::perror("freePort");
    std::abort();
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

/// `size` TCP ranks of comm_worker with `args`; extraEnv(rank) adds to a
/// rank's environment (later entries win).
std::vector<Spec> tcpRanks(int size, const std::vector<std::string> &args,
                           std::vector<std::vector<std::string>> extraEnv = {}) {
  int port = freePort();
  std::vector<Spec> specs;
  for (int r = 0; r < size; ++r) {
    Spec s;
    s.argv = {BMRT_COMM_WORKER};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(size),
             "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
             "LOCAL_RANK=" + std::to_string(r)};
    if ((size_t)r < extraEnv.size())
      s.env.insert(s.env.end(), extraEnv[(size_t)r].begin(), extraEnv[(size_t)r].end());
    specs.push_back(s);
  }
  return specs;
}

bool has(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// --- TCP ---------------------------------------------------------------------

TEST(Tcp, TwoRanksRankZeroStartingLast) {
  auto specs = tcpRanks(2, {"--expect-size=2", "--expect-backend=tcp", "--timeout=30"});
  specs[0].startDelay = 0.5; // rank 1 must keep trying to connect
  Outcome o = runAll(specs, 40);
  EXPECT_EQ(o.codes, (std::vector<int>{0, 0})) << o.all();
  EXPECT_TRUE(has(o.logs[0], "[  PASSED  ]")) << o.all();
}

TEST(Tcp, ThreeRanks) {
  Outcome o = runAll(tcpRanks(3, {"--expect-size=3", "--expect-backend=tcp", "--timeout=30"}),
                     40);
  EXPECT_EQ(o.codes, (std::vector<int>{0, 0, 0})) << o.all();
}

TEST(Tcp, ARankThatHangsMakesTheOthersFailAtTheTimeout) {
  // Rank 1 sleeps 30 s instead of joining; ranks 0 and 2 must fail after
  // the 2 s timeout (rank 2 with its own timeout or rank 0's message).
  Outcome o = runAll(tcpRanks(3, {"--scenario=timeout", "--timeout=2"}), 25, /*stopAfter=*/0);
  EXPECT_FALSE(o.timedOut) << o.all();
  EXPECT_EQ(o.codes[0], 1) << o.all();
  EXPECT_TRUE(has(o.logs[0], "error: rank 0: all-reduce of 1000 floats did not finish in 2 s"))
      << o.all();
  EXPECT_TRUE(has(o.logs[0], "waiting for rank 1 (another rank died or hangs); stopping"))
      << o.all();
  EXPECT_EQ(o.codes[2], 1) << o.all();
  EXPECT_TRUE(has(o.logs[2], "all-reduce of 1000 floats did not finish in 2 s")) << o.all();
  EXPECT_LT(o.seconds, 15) << o.all();
}

TEST(Tcp, ARankThatDiesIsNamed) {
  // The default timeout (300 s) must not matter: rank 1's socket closes.
  Outcome o = runAll(tcpRanks(2, {"--scenario=die", "--timeout=300"}), 25);
  EXPECT_EQ(o.codes, (std::vector<int>{1, 3})) << o.all();
  EXPECT_TRUE(has(o.logs[0], "error: rank 0: rank 1 closed its connection during all-reduce "
                             "of 1000 floats: it died?"))
      << o.all();
  EXPECT_LT(o.seconds, 15) << o.all();
}

TEST(Tcp, RanksIssuingDifferentCollectivesFailClearly) {
  Outcome o = runAll(tcpRanks(3, {"--scenario=mismatch", "--timeout=20"}), 25);
  EXPECT_EQ(o.codes, (std::vector<int>{1, 1, 1})) << o.all();
  std::string why = "rank 0: rank 1 issued all-gather of 3 x 333 floats (collective #0) where "
                    "rank 0 issued all-reduce of 1000 floats (collective #0): every rank must "
                    "issue the same collectives in the same order";
  EXPECT_TRUE(has(o.logs[0], "error: " + why)) << o.all();
  EXPECT_TRUE(has(o.logs[1], "error: rank 1: all-gather of 3 x 333 floats failed on rank 0: " + why))
      << o.all();
  EXPECT_TRUE(has(o.logs[2], "error: rank 2: all-reduce of 1000 floats failed on rank 0: " + why))
      << o.all();
}

TEST(Tcp, DifferentWorldSizesAreRefused) {
  Outcome o =
      runAll(tcpRanks(2, {"--scenario=timeout", "--timeout=20"}, {{}, {"WORLD_SIZE=3"}}), 25);
  EXPECT_EQ(o.codes, (std::vector<int>{1, 1})) << o.all();
  std::string why = "rank 0: rank 1 was started with WORLD_SIZE=3, rank 0 with WORLD_SIZE=2: "
                    "every rank needs the same WORLD_SIZE";
  EXPECT_TRUE(has(o.logs[0], "error: " + why)) << o.all();
  EXPECT_TRUE(has(o.logs[1], "error: rank 1: rank 0 refused this rank: " + why)) << o.all();
}

// --- MPI failure paths ---------------------------------------------------------

Spec mpiJob(int np, const std::vector<std::string> &args) {
  Spec s;
  s.argv = {"timeout", "60", BMRT_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np",
            std::to_string(np), BMRT_COMM_WORKER};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  return s;
}

TEST(Mpi, ARankThatHangsMakesTheOthersFailAtTheTimeoutAndStopsTheJob) {
  // Rank 1 sleeps 30 s; rank 0 fails after 2 s and exits 1, and mpirun
  // must then kill rank 1: the job ends well before rank 1 would wake.
  Outcome o = runAll({mpiJob(2, {"--scenario=timeout", "--timeout=2"})}, 70);
  EXPECT_NE(o.codes[0], 0) << o.all();
  EXPECT_NE(o.codes[0], 124) << "timeout 60 had to stop mpirun\n" << o.all();
  EXPECT_TRUE(has(o.logs[0], "error: rank 0: all-reduce of 1000 floats did not finish in 2 s "
                             "(another rank died or hangs); stopping"))
      << o.all();
  EXPECT_LT(o.seconds, 20) << o.all();
}

TEST(Mpi, ARankThatExitsStopsTheJob) {
  // Rank 0 waits with a 300 s timeout: only mpirun can end it quickly.
  Outcome o = runAll({mpiJob(2, {"--scenario=die", "--timeout=300"})}, 70);
  EXPECT_NE(o.codes[0], 0) << o.all();
  EXPECT_NE(o.codes[0], 124) << "timeout 60 had to stop mpirun\n" << o.all();
  EXPECT_TRUE(has(o.logs[0], "rank 1: exiting with status 3 on purpose")) << o.all();
  EXPECT_LT(o.seconds, 20) << o.all();
}

TEST(Mpi, FinalizeWaitsAtMostTheTimeout) {
  // Open MPI's MPI_Finalize waits for every rank; rank 1 comes 5 s late.
  Outcome o = runAll({mpiJob(2, {"--scenario=late", "--timeout=2"})}, 70);
  EXPECT_EQ(o.codes[0], 1) << o.all();
  EXPECT_TRUE(has(o.logs[0], "error: rank 0: MPI_Finalize did not finish in 2 s (another rank "
                             "died or hangs); exiting"))
      << o.all();
  EXPECT_LT(o.seconds, 15) << o.all();
}

TEST(Mpi, ARankThatFailsStopsTheJob) {
  // Rank 1's error unwinds through its communicator: no MPI_Finalize (it
  // would wait for rank 0 forever), exit 1, and mpirun stops rank 0.
  Outcome o = runAll({mpiJob(2, {"--scenario=throw", "--timeout=300"})}, 70);
  EXPECT_EQ(o.codes[0], 1) << o.all();
  EXPECT_TRUE(has(o.logs[0], "error: rank 1: failing on purpose before the all-reduce"))
      << o.all();
  EXPECT_LT(o.seconds, 20) << o.all();
}

} // namespace
