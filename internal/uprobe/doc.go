// Package uprobe builds the events of hwprof's exact source: one uprobe at
// the entry of every function of an ELF object, sampled at every hit, so
// that each sample is one call.
//
// Functions lists the probe points of an object: the FUNC symbols of
// .symtab (else .dynsym) with a non-zero size in an executable section,
// PLT stubs excluded, one probe per address (aliases share it), each with
// the file offset the kernel wants (found through the PT_LOAD segment that
// holds the address). Define creates them as uprobes in tracefs
// (uprobe_events, group "hwprof_PID_N"), all probes of an object in one
// multi-probe event named after its file (so that the kernel releases them
// with one wait, not one per probe), and Events turns each tracefs event
// into a tracepoint event that samples the IP, the thread, the time, a
// frame-pointer callchain and the first 8 bytes of the user stack (see
// SampleType for what each costs); Undefine removes them once their events are
// closed. tracefs.go says why not the uprobe PMU.
//
// Counting: a sample's IP is the probed function's entry (the callee).
// At a function's first instruction the frame-pointer callchain does not
// hold the immediate caller yet (the callee has not pushed its frame), but
// the return address is the u64 at the top of the stack;
// unwind.EntryReturnAddress reads it from the stack copy. The call
// instruction ends just before it, so the caller is the function
// containing the return address − 1 and the call site is the
// call instruction before the return address. A tail call (jmp) into a
// probed function is seen as a call from the tail caller's own caller.
// In Go, a function whose goroutine stack must grow calls
// runtime.morestack_noctxt from its prologue, which copies the stack and
// restarts the function at its entry: the probe counts one more call from
// the same call site. Each restart is also a hit of
// runtime.morestack_noctxt.abi0 whose return address is in that function,
// so a loader can discount it (the live Go test does, per callee).
//
// Setup does all of it for one recording: it finds the functions of a
// Request (a program or processes, libraries, a name filter), defines
// their probes in tracefs (mounting it if needed) and returns their
// events; DropOwn removes the probes and that mount once the events are
// closed.
//
// What to probe: Executables finds the program (argv[0] through PATH, or
// each -p process's /proc/PID/exe); FindLibrary resolves a library named
// by path or by name, matching the whole file name or soname up to a
// version suffix (libm is libm.so.6, never libmount.so.1) among the files
// the processes map (their /proc/PID/maps, read with perf/synth), then in the
// executable's RUNPATH, LD_LIBRARY_PATH and the library directories.
//
// What the caller provides: root, or write access to tracefs's
// uprobe_events (Access says which is missing; Tracefs mounts tracefs when
// it is not mounted, and UnmountOwn unmounts that mount, never another)
// and a kernel with CONFIG_UPROBE_EVENTS (and multi-probe events, Linux
// 5.4 and later); enough file descriptors for events × CPUs
// (EnsureFileLimit raises RLIMIT_NOFILE); and Undefine
// after the events are closed, or the probes stay defined (RemoveStale
// removes those of hwprof processes that are gone).
//
// What it costs: every hit traps (1–19 µs), so a program calling small
// functions in a hot loop runs hundreds of times slower. Measure turns the
// hits and the processes' user and system time into a Cost (the traps are
// system time) and its Slowdown; a Meter tells the expected slowdown after
// MeasureCPU of the program's CPU time and asks to stop beyond a limit
// (hwprof record --max-slowdown, DefaultMaxSlowdown).
//
// What it does not do: it opens no perf events (internal/record does) and
// reads no recordings.
package uprobe
