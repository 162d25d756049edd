package event_test

import (
	"fmt"
	"os"

	"github.com/hwprof/hwprof/perf"
	"github.com/hwprof/hwprof/perf/event"
)

// The attr of hwprof's lbr source: user-mode branch instructions with
// call-edge branch stacks and frame-pointer callchains, as
// `perf record -e branches:u -j any_call,u -g -c 10007 -- cmd` opens it.
func ExampleBuildAttrs() {
	evs, err := event.BuildAttrs(event.RecordConfig{
		Events:       []string{"branches:u"},
		Period:       10007,
		CallGraph:    "fp",
		BranchFilter: "any_call,u",
		Limits:       &perf.KernelLimits{}, // do not consult this machine's sysctls
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range evs {
		fmt.Println(ev.Name)
		perf.FprintAttr(os.Stdout, &ev.Attr)
	}
	// Output:
	// branches:u
	// perf_event_attr:
	//   size                             128
	//   config                           0x4
	//   { sample_period, sample_freq }   10007
	//   sample_type                      IP|TID|TIME|CALLCHAIN|BRANCH_STACK
	//   read_format                      ID|LOST
	//   disabled                         1
	//   inherit                          1
	//   exclude_kernel                   1
	//   exclude_hv                       1
	//   mmap                             1
	//   comm                             1
	//   enable_on_exec                   1
	//   task                             1
	//   sample_id_all                    1
	//   exclude_guest                    1
	//   mmap2                            1
	//   comm_exec                        1
	//   ksymbol                          1
	//   bpf_event                        1
	//   branch_sample_type               USER|ANY_CALL
}
