package perf

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags of perf_event_open(2), mirrors PERF_FLAG_* in <linux/perf_event.h>.
const (
	FlagFDNoGroup = 1 << 0 // PERF_FLAG_FD_NO_GROUP
	FlagFDOutput  = 1 << 1 // PERF_FLAG_FD_OUTPUT
	FlagPIDCgroup = 1 << 2 // PERF_FLAG_PID_CGROUP
	FlagFDCloexec = 1 << 3 // PERF_FLAG_FD_CLOEXEC
)

// Event is one event to open: its name and its attr (package perf/event
// builds them as perf record would).
type Event struct {
	Name string // perf's name: the specification as written, or its name= term
	Attr Attr
}

// OpenError is a failed perf_event_open(2), with the attr it was given and
// an explanation a user can act on.
type OpenError struct {
	Name  string // the event's name, as the user wrote it
	PID   int
	CPU   int
	Errno unix.Errno
	Hint  string // what the errno means for this attr, and what to do
}

func (e *OpenError) Error() string {
	target := fmt.Sprintf("pid %d", e.PID)
	if e.PID == -1 {
		target = "all processes"
	}
	msg := fmt.Sprintf("open event %s (%s, cpu %d): %v", e.Name, target, e.CPU, e.Errno)
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg
}

func (e *OpenError) Unwrap() error { return e.Errno }

// Sentinel errors callers can branch on with errors.Is.
var (
	// ErrNotSupported: this machine's PMU does not offer the event or one
	// of its features (branch stacks, precise sampling).
	ErrNotSupported = errors.New("not supported by this machine's PMU")
	// ErrPermission: the paranoid level or missing capabilities forbid it.
	ErrPermission = errors.New("permission denied")
)

// Is lets errors.Is(err, ErrNotSupported / ErrPermission) match by errno.
func (e *OpenError) Is(target error) bool {
	switch target {
	case ErrNotSupported:
		return e.Errno == unix.ENOENT || e.Errno == unix.EOPNOTSUPP || e.Errno == unix.ENODEV
	case ErrPermission:
		return e.Errno == unix.EACCES || e.Errno == unix.EPERM
	}
	return false
}

// Open calls perf_event_open(2) with the attr as encoded by Attr.Marshal.
// The returned error is an *OpenError with a hint.
func Open(name string, a *Attr, pid, cpu, groupFD int, flags int) (int, error) {
	buf := a.Marshal()
	fd, _, errno := unix.Syscall6(unix.SYS_PERF_EVENT_OPEN,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(pid), uintptr(cpu),
		uintptr(groupFD), uintptr(flags), 0)
	if errno != 0 {
		return -1, &OpenError{Name: name, PID: pid, CPU: cpu, Errno: errno, Hint: openHint(a, pid, errno)}
	}
	return int(fd), nil
}

// openHint explains an errno of perf_event_open for this attr. The causes
// follow the kernel's perf_event_open and perf's own evsel__open_strerror.
func openHint(a *Attr, pid int, errno unix.Errno) string {
	switch errno {
	case unix.EACCES, unix.EPERM:
		lvl, err := Paranoid()
		return permissionHint(a, pid, errno, lvl, err)
	case unix.ENOENT, unix.ENODEV:
		if a.Type == TypeHardware || a.Type == TypeHWCache || a.Type == TypeRaw {
			return "this machine has no hardware PMU for it (no 'cpu' PMU in /sys/bus/event_source/devices" +
				"; a VM often has none); run 'hwprof check' to see which sources work here"
		}
		return "the event does not exist on this kernel; run 'hwprof check'"
	case unix.EOPNOTSUPP:
		switch {
		case a.SampleType&SampleBranchStack != 0:
			return "this PMU cannot sample branch stacks (LBR); run 'hwprof check' and use another source"
		case a.PreciseIP > 0:
			return "this PMU does not support precise sampling at this level; use fewer :p"
		}
		return "the PMU does not support this kind of sampling; run 'hwprof check'"
	case unix.ESRCH:
		return "no such process (it exited, or the pid is wrong)"
	case unix.EMFILE:
		return "too many open files; raise the limit (ulimit -n)"
	case unix.EINVAL:
		return "the kernel rejected the event's settings (period, sample type or filter)"
	case unix.EBUSY:
		return "the PMU is in use by another tool"
	case unix.E2BIG:
		return "this kernel's perf_event_attr is older than hwprof's"
	}
	return ""
}

// ioctl request numbers, mirrors PERF_EVENT_IOC_* in <linux/perf_event.h>.
const (
	iocEnable    = 0x2400
	iocDisable   = 0x2401
	iocRefresh   = 0x2402
	iocReset     = 0x2403
	iocPeriod    = 0x40082404 // _IOW('$', 4, __u64)
	iocSetOutput = 0x2405
	iocSetFilter = 0x40082406
	iocID        = 0x80082407 // _IOR('$', 7, __u64 *)
)

func ioctl(fd int, req uint, arg uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), arg)
	if errno != 0 {
		return errno
	}
	return nil
}

// Enable starts counting on fd (PERF_EVENT_IOC_ENABLE).
func Enable(fd int) error { return wrap("enable event", ioctl(fd, iocEnable, 0)) }

// Disable stops counting on fd (PERF_EVENT_IOC_DISABLE).
func Disable(fd int) error { return wrap("disable event", ioctl(fd, iocDisable, 0)) }

// EventID returns the kernel's id of the event on fd (PERF_EVENT_IOC_ID):
// the value of the ID and IDENTIFIER sample fields.
func EventID(fd int) (uint64, error) {
	var id uint64
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), iocID, uintptr(unsafe.Pointer(&id)))
	if errno != 0 {
		return 0, wrap("read event id", errno)
	}
	return id, nil
}

// SetOutput redirects fd's records into the ring of target
// (PERF_EVENT_IOC_SET_OUTPUT). Both must be on the same CPU.
func SetOutput(fd, target int) error {
	return wrap("redirect event output", ioctl(fd, iocSetOutput, uintptr(target)))
}

// SetPeriod changes the sampling period (or frequency, for a freq event)
// of fd. The kernel reads a u64 through the pointer; x/sys's
// IoctlSetPointerInt passes an int32 and must not be used for it.
func SetPeriod(fd int, period uint64) error {
	// The pointer conversion must be in the Syscall call itself for the
	// compiler to keep period alive and in place during the call.
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), iocPeriod, uintptr(unsafe.Pointer(&period)))
	if errno != 0 {
		return wrap("set period", errno)
	}
	return nil
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
