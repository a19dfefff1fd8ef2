package procstat

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "4242 (uwsgi (worker) 1) S 4200 4200 4200 0 -1 4194560 100 0 0 0 250 50 3 1 20 0 1 0 100 1000 10 18446744073709551615"
	s, err := ParseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != 4242 || s.PPID != 4200 || s.State != "S" || s.CPU != 3 {
		t.Fatalf("%+v", s)
	}
	for _, bad := range []string{"", "12 no parens", "1 (x) S 0"} {
		if _, err := ParseStat(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A service's time is its whole tree's: its workers', not its
// neighbours'.
func TestTreeCPU(t *testing.T) {
	all := []Stat{
		{PID: 1, PPID: 0, CPU: 100},
		{PID: 10, PPID: 1, CPU: 1}, // the service
		{PID: 11, PPID: 10, CPU: 2},
		{PID: 12, PPID: 11, CPU: 4},
		{PID: 20, PPID: 1, CPU: 8}, // another one
	}
	if got := TreeCPU(all, 10); got != 7 {
		t.Fatalf("tree of 10: %v, want 7", got)
	}
	if got := TreeCPU(all, 10, 20, 11); got != 15 {
		t.Fatalf("trees of 10, 20 and 11: %v, want 15 (11 once)", got)
	}
	if got := TreeCPU(all, 99); got != 0 {
		t.Fatalf("a missing process: %v", got)
	}
	if CPU(os.Getpid()) < 0 {
		t.Fatal("negative")
	}
}
