package chaos

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Figures are a process's resources at one instant, from /proc.
type Figures struct {
	At time.Time
	// RSS and PeakRSS are VmRSS and VmHWM, in bytes.
	RSS, PeakRSS int64
	// FDs is the count of open descriptors; Threads, of OS threads.
	FDs, Threads int
}

// ReadFigures reads pid's figures.
func ReadFigures(pid int) (Figures, error) {
	f := Figures{At: time.Now()}
	st, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return f, err
	}
	defer st.Close()
	sc := bufio.NewScanner(st)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			f.RSS = n << 10
		case "VmHWM":
			f.PeakRSS = n << 10
		case "Threads":
			f.Threads = int(n)
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return f, err
	}
	f.FDs = len(fds)
	return f, nil
}

// Sampler reads a process's figures at an interval, from Watch to Stop.
type Sampler struct {
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	samples []Figures
}

// Watch samples pid every interval until Stop (or until it is gone).
func Watch(pid int, every time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			f, err := ReadFigures(pid)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.samples = append(s.samples, f)
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Samples are the figures read so far.
func (s *Sampler) Samples() []Figures {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Figures(nil), s.samples...)
}

// Stop ends the sampling and returns every sample.
func (s *Sampler) Stop() []Figures {
	close(s.stop)
	<-s.done
	return s.Samples()
}

// MaxRSS is the largest RSS sampled, and the peak the kernel saw.
func MaxRSS(samples []Figures) (sampled, peak int64) {
	for _, f := range samples {
		sampled, peak = max(sampled, f.RSS), max(peak, f.PeakRSS)
	}
	return sampled, peak
}

// MiB formats bytes as mebibytes.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
