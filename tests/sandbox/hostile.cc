#include "tests/sandbox/hostile.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "sandbox/capabilities.h"

namespace trench::sandbox::testing {
namespace {

const char kSource[] = R"C(
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void flood(int fd, char c, long n) {
  char buf[8192];
  memset(buf, c, sizeof buf);
  long k = n < (long)sizeof buf ? n : (long)sizeof buf;
  if (write(fd, buf, k) != k) exit(3);
}

int main(int argc, char** argv) {
  const char* m = argc > 1 ? argv[1] : "";
  if (!strcmp(m, "hello")) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return 2;
    FILE* f = fopen("hello.txt", "w");
    if (!f) return 3;
    fputs("hi\n", f);
    fclose(f);
    const char* foo = getenv("FOO");
    printf("uid=%d cwd=%s foo=%s args=%d\n", (int)getuid(), cwd,
           foo ? foo : "(unset)", argc);
    return 0;
  }
  if (!strcmp(m, "exit")) return atoi(argv[2]);
  if (!strcmp(m, "forkbomb")) for (;;) fork();
  if (!strcmp(m, "memhog")) {
    long mib = 0;
    for (;;) {
      char* p = malloc(1 << 20);
      if (!p) break;
      memset(p, 1, 1 << 20);
      ++mib;
    }
    printf("malloc failed after %ld MiB\n", mib);
    return 42;
  }
  if (!strcmp(m, "spin")) for (volatile unsigned long i = 0;; ++i) {}
  if (!strcmp(m, "sleep")) for (;;) pause();
  if (!strcmp(m, "net")) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) { printf("socket: %s\n", strerrorname_np(errno)); return 0; }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(atoi(argv[2]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr*)&a, sizeof a) < 0) {
      printf("connect: %s\n", strerrorname_np(errno));
      return 0;
    }
    printf("connected\n");
    return 1;
  }
  if (!strcmp(m, "write")) {
    for (int i = 2; i < argc; ++i) {
      int fd = open(argv[i], O_CREAT | O_WRONLY | O_TRUNC, 0666);
      printf("%s: %s\n", argv[i], fd >= 0 ? "ok" : strerrorname_np(errno));
      if (fd >= 0) close(fd);
    }
    return 0;
  }
  if (!strcmp(m, "escape")) {
    int ready[2];
    if (pipe(ready) != 0) return 2;
    if (fork() == 0) {
      setsid();
      if (fork() == 0) {
        setsid();
        if (write(ready[1], "x", 1) != 1) _exit(2);
        for (;;) pause();
      }
      _exit(0);
    }
    char c;
    if (read(ready[0], &c, 1) != 1) return 2; /* The escapee exists. */
    printf("escaped\n");
    fflush(stdout);
    if (!strcmp(argv[2], "wait")) for (;;) pause();
    return 0;
  }
  if (!strcmp(m, "flood")) {
    long n = atol(argv[2]);
    for (long done = 0; done < n; done += 8192) {
      flood(1, 'o', n - done);
      flood(2, 'e', n - done);
    }
    return 0;
  }
  if (!strcmp(m, "bigfile")) {
    int fd = open("big.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    for (;;) flood(fd, 'x', 1 << 20);
  }
  if (!strcmp(m, "procs")) {
    /* Holds N processes, then says so in ./held and pauses. */
    long n = atol(argv[2]), made = 0;
    for (; made < n; ++made) {
      pid_t pid = fork();
      if (pid < 0) break;
      if (pid == 0) for (;;) pause();
    }
    FILE* f = fopen("held.tmp", "w");
    if (!f) return 2;
    fprintf(f, "%ld\n", made);
    fclose(f);
    rename("held.tmp", "held");
    printf("held %ld\n", made);
    fflush(stdout);
    for (;;) pause();
  }
  if (!strcmp(m, "forkwork")) {
    /* A small build: N processes at once, each running /bin/true. */
    long n = atol(argv[2]);
    pid_t kids[256];
    if (n > 256) n = 256;
    for (long i = 0; i < n; ++i) {
      kids[i] = fork();
      if (kids[i] < 0) { printf("fork: %s\n", strerrorname_np(errno)); return 1; }
      if (kids[i] == 0) {
        struct timespec t = {0, 50000000};
        nanosleep(&t, 0);
        execl("/bin/true", "true", (char*)0);
        _exit(127);
      }
    }
    for (long i = 0; i < n; ++i) {
      int st;
      if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) ||
          WEXITSTATUS(st) != 0) { printf("child %ld failed\n", i); return 1; }
    }
    printf("ok %ld\n", n);
    return 0;
  }
  if (!strcmp(m, "memkids")) {
    /* N children each touch M MiB and hold it; reports how many got there
       and how many were killed, within ~10 s. */
    int n = atoi(argv[2]);
    long mib = atol(argv[3]);
    int ready[2];
    if (pipe(ready) != 0) return 2;
    pid_t kids[64];
    for (int i = 0; i < n && i < 64; ++i) {
      kids[i] = fork();
      if (kids[i] < 0) return 3;
      if (kids[i] == 0) {
        char* p = malloc(mib << 20);
        if (!p) _exit(4);
        memset(p, 1, mib << 20);
        if (write(ready[1], "x", 1) != 1) _exit(5);
        for (;;) pause();
      }
    }
    close(ready[1]);
    fcntl(ready[0], F_SETFL, O_NONBLOCK);
    int touched = 0, dead = 0, killed = 0;
    for (int round = 0; round < 1000 && touched + dead < n; ++round) {
      char c;
      while (read(ready[0], &c, 1) == 1) ++touched;
      int st;
      pid_t pid;
      while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        ++dead;
        if (WIFSIGNALED(st)) ++killed;
      }
      struct timespec t = {0, 10000000};
      nanosleep(&t, 0);
    }
    printf("touched %d killed %d\n", touched, killed);
    fflush(stdout);
    for (int i = 0; i < n; ++i) kill(kids[i], SIGKILL);
    return 0;
  }
  if (!strcmp(m, "unix")) {
    /* connect() to the unix socket at PATH, then a socketpair round trip. */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) {
      printf("socket: %s\n", strerrorname_np(errno));
    } else {
      struct sockaddr_un a;
      memset(&a, 0, sizeof a);
      a.sun_family = AF_UNIX;
      strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
      if (connect(s, (struct sockaddr*)&a, sizeof a) < 0)
        printf("connect: %s\n", strerrorname_np(errno));
      else
        printf("connected\n");
    }
    int pair[2];
    char c = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) {
      printf("socketpair: %s\n", strerrorname_np(errno));
    } else if (write(pair[0], "p", 1) == 1 && read(pair[1], &c, 1) == 1 &&
               c == 'p') {
      printf("socketpair: ok\n");
    } else {
      printf("socketpair: broken\n");
    }
    return 0;
  }
  if (!strcmp(m, "read")) {
    for (int i = 2; i < argc; ++i) {
      int fd = open(argv[i], O_RDONLY);
      printf("%s: %s\n", argv[i], fd >= 0 ? "ok" : strerrorname_np(errno));
      if (fd >= 0) close(fd);
    }
    return 0;
  }
  if (!strcmp(m, "list")) {
    DIR* d = opendir(argv[2]);
    if (!d) { printf("list: %s\n", strerrorname_np(errno)); return 0; }
    struct dirent* e;
    while ((e = readdir(d)) != 0) {
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
        printf("entry %s\n", e->d_name);
    }
    closedir(d);
    return 0;
  }
  if (!strcmp(m, "fill")) {
    /* Writes ./fill.bin 1 MiB at a time until a write fails. */
    int fd = open("fill.bin", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) { printf("open: %s\n", strerrorname_np(errno)); return 0; }
    static char buf[1 << 20];
    memset(buf, 'f', sizeof buf);
    long mib = 0;
    for (;;) {
      ssize_t n = write(fd, buf, sizeof buf);
      if (n < (ssize_t)sizeof buf) {
        printf("fill: %s after %ld MiB\n", n < 0 ? strerrorname_np(errno)
                                                 : "short write", mib);
        return 0;
      }
      ++mib;
    }
  }
  if (!strcmp(m, "files")) {
    /* Creates empty files until one fails. */
    for (long i = 0;; ++i) {
      char name[32];
      snprintf(name, sizeof name, "f%ld", i);
      int fd = open(name, O_CREAT | O_WRONLY, 0644);
      if (fd < 0) {
        printf("files: %s after %ld\n", strerrorname_np(errno), i);
        return 0;
      }
      close(fd);
    }
  }
  if (!strcmp(m, "ptrace")) {
    long r = ptrace(PTRACE_TRACEME, 0, 0, 0);
    printf("ptrace: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
    return 0;
  }
  return 99;
}
)C";

std::string Build() {
  std::string dir = MakeTempDir("bin");
  chmod(dir.c_str(), 0755);
  std::string src = dir + "/hostile.c", bin = dir + "/hostile";
  std::ofstream(src) << kSource;
  std::string cmd = "cc -O1 -o " + bin + " " + src + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    fprintf(stderr, "cannot build the hostile program: %s\n", cmd.c_str());
    abort();
  }
  chmod(bin.c_str(), 0755);
  static std::string to_remove = dir;
  std::atexit([] { RemoveTree(to_remove); });
  return bin;
}

int CountProcs(const std::function<bool(const std::string&)>& match) {
  int n = 0;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/status");
    std::stringstream ss;
    ss << f.rdbuf();
    if (!ss.str().empty() && match(ss.str())) ++n;
  }
  if (d) closedir(d);
  return n;
}

}  // namespace

const std::string& HostileBinary() {
  static const std::string bin = Build();
  return bin;
}

std::string HostileDir() {
  return std::filesystem::path(HostileBinary()).parent_path().string();
}

std::string MakeTempDir(const char* tag) {
  std::string templ = std::string("/tmp/trench-sbx-") + tag + "-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) abort();
  return templ;
}

void RemoveTree(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

Options HostileOptions(const std::vector<std::string>& args) {
  Options o;
  o.argv = {HostileBinary()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env = {"PATH=/usr/bin:/bin", "FOO=bar"};
  o.work_dir = MakeTempDir("work");
  o.read_only_paths = {HostileDir()};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  o.uid = o.gid = 200000 + std::hash<std::string>()(name) % 1000000;
  o.limits.wall_seconds = 30;
  o.limits.cpu_seconds = 20;
  o.limits.address_space_bytes = 512ull << 20;
  o.limits.processes = 64;
  return o;
}

int ProcessesOfUid(uid_t uid) {
  std::string key = "\nUid:\t" + std::to_string(uid) + "\t";
  return CountProcs(
      [&](const std::string& s) { return s.find(key) != std::string::npos; });
}

int ChildrenOfSelf() {
  std::string key = "\nPPid:\t" + std::to_string(getpid()) + "\n";
  return CountProcs(
      [&](const std::string& s) { return s.find(key) != std::string::npos; });
}

std::string UseNonExecutableProgram(Options& o) {
  const std::string file = o.work_dir + "/not-exec";
  std::ofstream(file) << "#!/bin/sh\n";
  chmod(file.c_str(), 0644);
  o.argv = {file};
  return file;
}

Result RunLeavingNothing(const Options& o) {
  const bool own_uid = !DetectCapabilities().can_set_uid;
  const uid_t uid = own_uid ? getuid() : o.uid;
  const int before = own_uid ? ProcessesOfUid(uid) : 0;
  StatusOr<Result> r = sandbox::Run(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Result();
  std::printf("%s\n", r->Summary().c_str());
  EXPECT_EQ(ProcessesOfUid(uid), before) << r->Summary();
  EXPECT_EQ(ChildrenOfSelf(), 0) << r->Summary();
  return *std::move(r);
}

OutsideWrites MakeOutsideWrites(const std::string& tag) {
  OutsideWrites w;
  w.outside =
      "/var/tmp/trench-sbx-" + tag + "-outside-" + std::to_string(getpid());
  std::filesystem::create_directories(w.outside);
  chmod(w.outside.c_str(), 0777);
  w.host_tmp = MakeTempDir((tag + "-hosttmp").c_str());
  chmod(w.host_tmp.c_str(), 0777);
  w.dirs = {w.outside, w.host_tmp};
  w.args = {"write",           w.outside + "/x",
            "/etc/trench-sbx", HostileDir() + "/x",
            w.host_tmp + "/x", "inside.txt"};
  w.expected = w.outside + "/x: EROFS\n/etc/trench-sbx: EROFS\n" +
               HostileDir() + "/x: EROFS\n" + w.host_tmp +
               "/x: ENOENT\ninside.txt: ok\n";
  return w;
}

}  // namespace trench::sandbox::testing
