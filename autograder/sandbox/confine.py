"""Giving up privilege for good: no capabilities, no new privileges, a seccomp filter.

Runs in each notebook's child (see `autograder.sandbox.execution`) after it made its private
mounts and before any learner code: the capabilities it held in its own user namespace
are dropped from every set (bounding and ambient too), `no_new_privs` is set, and a
seccomp filter refuses what a notebook never needs and what would let it change its
confinement or reach the kernel's rarer surfaces: mounts, namespaces (`unshare`,
`setns`, `clone` with namespace flags), keyrings, ptrace, BPF, io_uring, modules.
Answer-free and dependency-free: it is mounted inside the sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_SET_SECCOMP = 38, 24, 47, 22
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER = 4, 2
CAPABILITY_VERSION_3 = 0x20080522
AUDIT_ARCH_X86_64 = 0xC000003E
RET_ALLOW, RET_KILL, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
LD_ABS_W, JEQ, JGE, AND, RET = 0x20, 0x15, 0x35, 0x54, 0x06
NAMESPACE_FLAGS = 0x7E020080  # CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET,TIME}

# x86_64 numbers of the refused system calls.
REFUSED = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
    "setns": 308, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
    "perf_event_open": 298, "userfaultfd": 323, "ptrace": 101, "process_vm_readv": 310,
    "process_vm_writev": 311, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "swapon": 167, "swapoff": 168, "reboot": 169,
    "acct": 163, "quotactl": 179, "open_by_handle_at": 304, "name_to_handle_at": 303,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "syslog": 103, "sethostname": 170, "setdomainname": 171,
    "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "iopl": 172, "ioperm": 173,
    "vhangup": 153,
}  # fmt: skip
CLONE, CLONE3 = 56, 435

_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(OSError):
    """A step of giving up privilege failed: the notebook must not run."""


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise ConfinementError(code, f"{what}: {errno.errorcode.get(code, code)}")


def _instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program() -> bytes:
    """The BPF filter (x86_64): refused calls fail with EPERM, clone3 with ENOSYS."""
    eperm = RET_ERRNO | errno.EPERM
    program = [
        _instruction(LD_ABS_W, 4),  # arch
        _instruction(JEQ, AUDIT_ARCH_X86_64, 1, 0),
        _instruction(RET, RET_KILL),
        _instruction(LD_ABS_W, 0),  # nr
        _instruction(JGE, 0x40000000, 0, 1),  # the x32 ABI
        _instruction(RET, eperm),
        _instruction(JEQ, CLONE3, 0, 1),  # glibc falls back to clone()
        _instruction(RET, RET_ERRNO | errno.ENOSYS),
    ]
    for number in sorted(REFUSED.values()):
        program += [_instruction(JEQ, number, 0, 1), _instruction(RET, eperm)]
    program += [
        _instruction(JEQ, CLONE, 0, 5),
        _instruction(LD_ABS_W, 16),  # low half of the flags argument
        _instruction(AND, NAMESPACE_FLAGS),
        _instruction(JEQ, 0, 1, 0),
        _instruction(RET, eperm),
        _instruction(RET, RET_ALLOW),
        _instruction(RET, RET_ALLOW),
    ]
    return b"".join(program)


def drop_capabilities() -> None:
    """Empty every capability set of this process, for good."""
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)  # two empty {effective, permitted, inheritable}
    _check(_libc.capset(ctypes.c_char_p(header), data), "capset")


def install_seccomp() -> None:
    """no_new_privs, then the filter; ConfinementError where it cannot be installed."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if platform.machine() != "x86_64":
        raise ConfinementError(errno.ENOSYS, f"no seccomp table for {platform.machine()}")
    program = seccomp_program()
    filters = ctypes.create_string_buffer(program)
    fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(filters))
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0), "seccomp"
    )


def confine() -> None:
    """Drop capabilities, set no_new_privs and install the seccomp filter."""
    drop_capabilities()
    install_seccomp()
