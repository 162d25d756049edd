package offcpu

import "strings"

// Reasons a thread leaves the CPU, read off the kernel part of the stack
// it left with. The order is the order of precedence: a read of a pipe
// is "pipe", a page fault that waits for the disk is "page fault".
var reasons = []struct {
	reason string
	marks  []string // kernel function names (or prefixes ending in *) that say it
}{
	{"futex", []string{"futex_wait*", "__x64_sys_futex*", "futex_q_lock*"}},
	{"sleep", []string{"do_nanosleep", "hrtimer_nanosleep*", "__x64_sys_nanosleep", "__x64_sys_clock_nanosleep", "common_nsleep"}},
	{"child", []string{"do_wait", "kernel_wait4", "kernel_waitid", "__do_sys_wait4", "__x64_sys_wait4", "__x64_sys_waitid"}},
	{"pipe", []string{"pipe_read", "pipe_write", "anon_pipe_read", "anon_pipe_write", "pipe_wait*", "wait_for_partner"}},
	{"socket", []string{"sk_wait_data", "unix_stream_read_generic", "unix_dgram_recvmsg", "tcp_recvmsg*", "udp_recvmsg",
		"inet_csk_accept", "__sys_accept4*", "sock_alloc_send_pskb", "sk_stream_wait_memory", "__skb_wait_for_more_packets", "__inet_stream_connect"}},
	{"poll", []string{"do_sys_poll", "do_select", "core_sys_select", "ep_poll", "do_epoll_wait", "__x64_sys_poll", "__x64_sys_ppoll", "__x64_sys_epoll_wait", "__x64_sys_epoll_pwait*", "__x64_sys_select", "__x64_sys_pselect6"}},
	{"page fault", []string{"asm_exc_page_fault", "exc_page_fault", "do_user_addr_fault", "handle_mm_fault"}},
	{"I/O", []string{"io_schedule*", "folio_wait_bit*", "wait_on_page_bit*", "__folio_lock*", "blk_mq_get_tag", "jbd2_log_wait_commit", "wait_on_buffer", "__wait_on_buffer", "bit_wait_io"}},
	{"read", []string{"ksys_read", "vfs_read", "__x64_sys_read", "__x64_sys_pread64", "__x64_sys_readv"}},
	{"write", []string{"ksys_write", "vfs_write", "__x64_sys_write", "__x64_sys_pwrite64", "__x64_sys_writev"}},
	{"yield", []string{"do_sched_yield", "__x64_sys_sched_yield"}},
	{"signal", []string{"__x64_sys_pause", "sigsuspend", "__x64_sys_rt_sigsuspend", "do_sigtimedwait", "__x64_sys_rt_sigtimedwait"}},
	{"kernel lock", []string{"__mutex_lock*", "mutex_lock*", "rwsem_down_*", "down_read*", "down_write*", "__rt_mutex_*"}},
	{"preempted", []string{"exit_to_user_mode_loop", "irqentry_exit_to_user_mode", "preempt_schedule*", "irqentry_exit"}},
}

// Reason names why a thread left the CPU from the names of the kernel
// frames of the stack it left with, innermost first ("futex", "sleep",
// "child", "pipe", "socket", "poll", "page fault", "I/O", "read", "write",
// "yield", "signal", "kernel lock", "preempted"); failing those, the
// system call it was in (the name after __x64_sys_ or __do_sys_), and ""
// when the stack says nothing (no kernel frames, or unnamed ones).
func Reason(kernelFrames []string) string {
	for _, r := range reasons {
		for _, f := range kernelFrames {
			for _, m := range r.marks {
				if match(f, m) {
					return r.reason
				}
			}
		}
	}
	for _, f := range kernelFrames {
		for _, p := range []string{"__x64_sys_", "__do_sys_", "__se_sys_"} {
			if name, ok := strings.CutPrefix(f, p); ok && name != "" {
				return name
			}
		}
	}
	return ""
}

func match(name, mark string) bool {
	if p, ok := strings.CutSuffix(mark, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return name == mark
}
