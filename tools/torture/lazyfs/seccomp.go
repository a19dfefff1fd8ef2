package lazyfs

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// syncfs(2) and sync(2) never reach a FUSE filesystem (the kernel sends
// FUSE_SYNCFS to virtiofs only), yet the programs rely on syncfs. So the
// processes lazyfs starts carry a seccomp filter that hands those two
// calls to the test: it makes everything durable, then lets the call go
// on. Every descendant inherits the filter.

// seccompData, seccompNotif and seccompNotifResp are the kernel's structs
// (linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}

// installSyncFilter installs, on the calling thread (which must then
// exec), a filter that reports syncfs and sync to the returned listener.
func installSyncFilter() (int, error) {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return -1, fmt.Errorf("lazyfs: no seccomp filter for %s", runtime.GOARCH)
	}
	const ld, jeq, ret = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_RET | unix.BPF_K
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jt: 0, Jf: 3},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, K: unix.SYS_SYNCFS, Jt: 2},
		{Code: jeq, K: unix.SYS_SYNC, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_USER_NOTIF},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, fmt.Errorf("lazyfs: installing the seccomp filter: %w", errno)
	}
	return int(fd), nil
}

// serveSyncs answers the filter's reports until every process that
// carries it is gone or stop is closed: sync makes everything durable
// before the call returns to the process.
func serveSyncs(listener int, sync func(), stop <-chan struct{}) {
	defer unix.Close(listener)
	for {
		select {
		case <-stop:
			return
		default:
		}
		fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n == 0 || err != nil {
			continue
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process carries the filter any more
		}
		var req seccompNotif
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&req))); errno != 0 {
			continue // ENOENT: the caller died meanwhile
		}
		sync()
		resp := seccompNotifResp{ID: req.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
		unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	}
}
