#include "sandbox/seccomp.h"

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>

namespace trench::sandbox {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
constexpr unsigned kArch = 0;  // Unknown: no filter (see header).
#endif

// Denied outright. #ifdef'd where an architecture lacks the call.
constexpr long kDenied[] = {
    SYS_ptrace,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_unshare,
    SYS_setns,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_userfaultfd,
    SYS_open_by_handle_at,
    SYS_name_to_handle_at,
    SYS_open_tree,
    SYS_move_mount,
    SYS_fsopen,
    SYS_fsconfig,
    SYS_fsmount,
    SYS_fspick,
    SYS_mount_setattr,
    SYS_acct,
    SYS_settimeofday,
    SYS_clock_settime,
    SYS_sethostname,
    SYS_setdomainname,
    SYS_quotactl,
    SYS_syslog,
    // io_uring can open sockets (IORING_OP_SOCKET) past the socket rule.
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register,
#if defined(__x86_64__)
    SYS_iopl,
    SYS_ioperm,
#endif
};

constexpr unsigned kNamespaceFlags =
    CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
    CLONE_NEWUTS | CLONE_NEWCGROUP;

// A tiny assembler: jumps name a label, resolved to offsets at the end.
// kNone as a jump target means "the next instruction" (offset 0).
enum Label : int {
  kNone = -1,
  kAllow,
  kDeny,
  kKill,
  kNoSys,
  kSocket,
  kUnixDeny,
  kNumLabels
};

struct Insn {
  sock_filter f;
  Label jt = kNone, jf = kNone;
};

class Program {
 public:
  void Stmt(unsigned short code, unsigned k) {
    insns_.push_back({{code, 0, 0, k}});
  }
  void Jump(unsigned short code, unsigned k, Label jt, Label jf) {
    insns_.push_back({{code, 0, 0, k}, jt, jf});
  }
  void Bind(Label l) { labels_[l] = insns_.size(); }
  std::vector<sock_filter> Finish() {
    std::vector<sock_filter> out;
    for (size_t i = 0; i < insns_.size(); ++i) {
      sock_filter f = insns_[i].f;
      if (insns_[i].jt != kNone) f.jt = labels_[insns_[i].jt] - i - 1;
      if (insns_[i].jf != kNone) f.jf = labels_[insns_[i].jf] - i - 1;
      out.push_back(f);
    }
    return out;
  }

 private:
  std::vector<Insn> insns_;
  size_t labels_[kNumLabels] = {};
};

constexpr unsigned kArg0 = offsetof(seccomp_data, args[0]);  // Low word.

}  // namespace

std::vector<sock_filter> BuildSeccompFilter(SeccompMode mode) {
  if (mode == SeccompMode::kOff || kArch == 0) return {};
  Program p;
  p.Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  p.Jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, kNone, kKill);
  p.Stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  p.Jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, kKill, kNone);  // x32 ABI.
#endif
  for (long nr : kDenied) p.Jump(BPF_JMP | BPF_JEQ | BPF_K, nr, kDeny, kNone);
  // clone3 passes its flags in memory that BPF cannot read; ENOSYS makes
  // libc fall back to clone(), whose flags we can check.
  p.Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, kNoSys, kNone);
  // clone(flags, ...): no new namespaces.
  p.Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, kNone, kSocket);
  p.Stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
  p.Jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, kDeny, kAllow);
  // socket(domain, ...): never. AF_UNIX fails with EPERM in every mode (a
  // libc probing nscd or syslog must not be killed for it); socketpair()
  // stays, its sockets have no name to connect to.
  p.Bind(kSocket);
  p.Jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, kNone, kAllow);
  p.Stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
  p.Jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, kUnixDeny, kDeny);
  p.Bind(kAllow);
  p.Stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  p.Bind(kDeny);
  p.Stmt(BPF_RET | BPF_K, mode == SeccompMode::kKill
                              ? SECCOMP_RET_KILL_PROCESS
                              : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  p.Bind(kKill);
  p.Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  p.Bind(kUnixDeny);
  p.Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  p.Bind(kNoSys);
  p.Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  return p.Finish();
}

const char* SeccompModeName(SeccompMode mode) {
  switch (mode) {
    case SeccompMode::kOff:
      return "off";
    case SeccompMode::kErrno:
      return "errno";
    case SeccompMode::kKill:
      return "kill";
  }
  return "?";
}

}  // namespace trench::sandbox
