package ring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Poller waits on many ring fds at once plus a wake-up eventfd, with
// epoll. Wait and Add/Remove/Close belong to one goroutine; Wake may be
// called from any goroutine until Close.
type Poller struct {
	epfd   int
	efd    int // eventfd written by Wake
	nfds   int // fds added, besides efd
	events []unix.EpollEvent
	ready  []int
	hup    []int
}

// epollWait is unix.EpollWait; tests replace it to inject EINTR.
var epollWait = unix.EpollWait

// NewPoller creates the epoll instance and its wake-up eventfd.
func NewPoller() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("ring poller: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("ring poller: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("ring poller: add eventfd: %w", err)
	}
	return &Poller{epfd: epfd, efd: efd, events: make([]unix.EpollEvent, 1)}, nil
}

// Add watches fd for EPOLLIN (level-triggered); EPOLLHUP and EPOLLERR are
// always reported. The caller keeps ownership of fd.
func (p *Poller) Add(fd int) error {
	if p.epfd < 0 {
		return errors.New("ring poller: add: poller is closed")
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("ring poller: add fd %d: %w", fd, err)
	}
	p.nfds++
	if len(p.events) < p.nfds+1 {
		p.events = make([]unix.EpollEvent, p.nfds+1)
	}
	return nil
}

// Remove stops watching fd, typically after it hung up (a hung-up fd
// would be reported by every later Wait). Closing the fd also removes it.
func (p *Poller) Remove(fd int) error {
	if p.epfd < 0 {
		return errors.New("ring poller: remove: poller is closed")
	}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return fmt.Errorf("ring poller: remove fd %d: %w", fd, err)
	}
	p.nfds--
	return nil
}

// Wake makes a pending Wait return now with woken set, or the next Wait
// if none is pending. Safe to call from another goroutine (not
// concurrently with Close).
func (p *Poller) Wake() error {
	if p.efd < 0 {
		return errors.New("ring poller: wake: poller is closed")
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	for {
		_, err := unix.Write(p.efd, one[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is saturated, a wake-up is pending anyway
			return nil
		case unix.EINTR:
			continue
		}
		return fmt.Errorf("ring poller: wake: %w", err)
	}
}

// Wait blocks until a watched fd is ready, Wake is called, or timeout
// passes (a negative timeout waits without limit, zero only polls). It
// returns the fds that are readable, the fds that hung up or failed
// (EPOLLHUP or EPOLLERR: a per-task event's task has exited, or its PMU
// went away), and whether Wake was called. An fd can be in both lists.
// The slices are reused by the next Wait. EINTR is retried with the
// remaining time.
//
// The kernel reports a perf fd readable once per wake-up (perf_poll
// consumes the flag), not while data is pending: drain the ring fully
// with Ring.Read after it is reported. A hung-up fd's ring may still hold
// records: drain it, then Remove it.
func (p *Poller) Wait(timeout time.Duration) (ready []int, hup []int, woken bool, err error) {
	p.ready, p.hup = p.ready[:0], p.hup[:0]
	if p.epfd < 0 {
		return p.ready, p.hup, false, errors.New("ring poller: wait: poller is closed")
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	n, err := epollWait(p.epfd, p.events, msec(timeout))
	for err == unix.EINTR {
		if timeout > 0 {
			timeout = max(time.Until(deadline), 0)
		}
		n, err = epollWait(p.epfd, p.events, msec(timeout))
	}
	if err != nil {
		return p.ready, p.hup, false, fmt.Errorf("ring poller: epoll_wait: %w", err)
	}
	for _, ev := range p.events[:n] {
		fd := int(ev.Fd)
		if fd == p.efd {
			woken = true
			p.drainEventfd()
			continue
		}
		if ev.Events&unix.EPOLLIN != 0 {
			p.ready = append(p.ready, fd)
		}
		if ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			p.hup = append(p.hup, fd)
		}
	}
	return p.ready, p.hup, woken, nil
}

// drainEventfd resets the eventfd counter so the next Wait blocks again.
func (p *Poller) drainEventfd() {
	var b [8]byte
	for {
		if _, err := unix.Read(p.efd, b[:]); err != unix.EINTR {
			return // nil, or EAGAIN: already reset
		}
	}
}

// msec converts a timeout to epoll_wait's milliseconds, rounding up so a
// short positive timeout still waits.
func msec(d time.Duration) int {
	switch {
	case d < 0:
		return -1
	case d == 0:
		return 0
	case d > time.Duration(1<<31-1)*time.Millisecond:
		return 1<<31 - 1
	}
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

// Close closes the epoll instance and the eventfd, not the watched fds.
func (p *Poller) Close() error {
	if p.epfd < 0 {
		return nil
	}
	err1 := unix.Close(p.efd)
	err2 := unix.Close(p.epfd)
	p.efd, p.epfd = -1, -1
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("ring poller: close: %w", err)
	}
	return nil
}
