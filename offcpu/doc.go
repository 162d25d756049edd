// Package offcpu measures where threads wait: the time they spend off the
// CPU, with the stack they left it with, from what the kernel gives any
// user for their own processes, without BPF or tracepoints.
//
// A recording made with Events has, beside its on-CPU samples, switch
// records (attr.context_switch: PERF_RECORD_SWITCH per thread,
// SWITCH_CPU_WIDE per CPU; the sample id says which thread went out or came
// in, and PERF_RECORD_MISC_SWITCH_OUT_PREEMPT whether it was preempted
// while runnable) and, where this process may sample the kernel, the
// off-CPU event: the software context-switch event with period 1, whose
// every sample is the stack a thread left the CPU with, the kernel's part
// saying why (Reason: futex, sleep, pipe, I/O...). The kernel drops that
// sample for an event that excludes the kernel, so at perf_event_paranoid
// 2 without CAP_PERFMON a recording has the switch records alone: every
// interval off the CPU, exact, without its stack.
//
// A Tracker, fed the switch records, the off-CPU samples' stack keys and
// the threads' exits in time order (the recording's order), returns each
// interval a thread spent off the CPU: from its switch out to its switch
// in, with the stack sampled at the switch out, preempted or not.
// Intervals the recording did not see whole are cut at its start (a
// thread first seen coming in), at the thread's exit, or at the end, and
// say so (Cut).
//
// What it does not do: it opens no events (internal/record does), folds
// nothing (the caller weights each interval's stack by its length), and
// knows no symbols (Reason takes the kernel frames' names). It makes no
// system calls and starts no goroutines; a Tracker is not safe for
// concurrent use.
package offcpu
