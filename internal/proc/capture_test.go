package proc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// want is what a Capture of stream should hold.
func want(stream []byte, head, tail int) (kept []byte, dropped int64) {
	if len(stream) <= head+tail {
		return stream, 0
	}
	kept = append(append([]byte(nil), stream[:head]...), stream[len(stream)-tail:]...)
	return kept, int64(len(stream) - head - tail)
}

func TestCaptureShort(t *testing.T) {
	t.Parallel()
	c := NewCapture(4, 4)
	for _, s := range []string{"ab", "cde", "fgh"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := string(c.Bytes()); got != "abcdefgh" || c.Dropped() != 0 || c.Len() != 8 {
		t.Errorf("got %q dropped %d len %d", got, c.Dropped(), c.Len())
	}
	c.Write([]byte("ij"))
	if got := string(c.Bytes()); got != "abcdghij" || c.Dropped() != 2 || c.Len() != 10 {
		t.Errorf("got %q dropped %d len %d", got, c.Dropped(), c.Len())
	}
	if got := NewCapture(3, 3).Bytes(); len(got) != 0 {
		t.Errorf("empty capture: %q", got)
	}
}

// Against the reference over random streams written in pieces of every
// kind: byte by byte, random sizes, one big chunk.
func TestCaptureRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][2]int{{0, 0}, {0, 7}, {7, 0}, {1, 1}, {5, 9}, {64, 64}, {100, 3}, {3, 100}, {1000, 1000}}
	for _, hs := range sizes {
		head, tail := hs[0], hs[1]
		for _, n := range []int{0, 1, head, head + tail - 1, head + tail, head + tail + 1, 3*(head+tail) + 17, 5000} {
			stream := make([]byte, max(n, 0))
			for i := range stream {
				stream[i] = byte(rng.IntN(256))
			}
			chunkings := map[string]func() int{
				"bytes":  func() int { return 1 },
				"random": func() int { return 1 + rng.IntN(2*(head+tail)+3) },
				"whole":  func() int { return len(stream) },
			}
			for name, next := range chunkings {
				t.Run(fmt.Sprintf("head%d/tail%d/len%d/%s", head, tail, n, name), func(t *testing.T) {
					c := NewCapture(head, tail)
					for rest := stream; len(rest) > 0; {
						k := min(max(next(), 1), len(rest))
						if m, err := c.Write(rest[:k]); m != k || err != nil {
							t.Fatalf("Write = %d, %v", m, err)
						}
						rest = rest[k:]
					}
					kept, dropped := want(stream, head, tail)
					if !bytes.Equal(c.Bytes(), kept) {
						t.Errorf("Bytes differ: got %d bytes, want %d", len(c.Bytes()), len(kept))
					}
					if c.Dropped() != dropped || c.Len() != int64(len(stream)) {
						t.Errorf("Dropped %d Len %d, want %d %d", c.Dropped(), c.Len(), dropped, len(stream))
					}
				})
			}
		}
	}
}

func TestCaptureNegative(t *testing.T) {
	t.Parallel()
	c := NewCapture(-1, -5)
	c.Write([]byte("abc"))
	if len(c.Bytes()) != 0 || c.Dropped() != 3 || c.Len() != 3 {
		t.Errorf("got %q dropped %d len %d", c.Bytes(), c.Dropped(), c.Len())
	}
}
