package cache

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// sameBytes compares in the pooled reader's buffer, a block at a time:
// files around and beyond a block, a difference before, at and after a
// block's end, and a file longer or shorter than what is encoded.
func TestSameBytesAcrossBlocks(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*blockSize/16+5)
	flip := func(i int) []byte {
		b := bytes.Clone(big)
		b[i] ^= 1
		return b
	}
	tests := []struct {
		name string
		file []byte
		want bool
	}{
		{"equal", big, true},
		{"differs first byte", flip(0), false},
		{"differs at a block's end", flip(blockSize - 1), false},
		{"differs after a block", flip(blockSize + 1), false},
		{"differs last byte", flip(len(big) - 1), false},
		{"file longer", append(bytes.Clone(big), 'x'), false},
		{"file shorter", big[:len(big)-1], false},
		{"empty file", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.json")
			if err := os.WriteFile(path, tc.file, 0o600); err != nil {
				t.Fatal(err)
			}
			// One write of everything (bufio passes a write bigger than
			// its buffer straight through), and small writes.
			for _, chunk := range []int{len(big), 1000} {
				got := sameBytes(path, func(w *bufio.Writer) error {
					for rest := big; len(rest) > 0; {
						n := min(chunk, len(rest))
						w.Write(rest[:n])
						rest = rest[n:]
					}
					return w.Flush()
				})
				if got != tc.want {
					t.Errorf("writes of %d: sameBytes = %v, want %v", chunk, got, tc.want)
				}
			}
		})
	}
}

func TestSameFilesAcrossBlocks(t *testing.T) {
	dir := t.TempDir()
	a := bytes.Repeat([]byte("x"), 2*blockSize+3)
	b := bytes.Clone(a)
	b[blockSize+7] = 'y'
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pa, pa2, pb := write("a", a), write("a2", a), write("b", b)
	for _, tc := range []struct {
		x, y string
		want bool
	}{{pa, pa2, true}, {pa, pb, false}, {pa, filepath.Join(dir, "missing"), false}} {
		got, err := sameFiles(tc.x, tc.y)
		if err != nil || got != tc.want {
			t.Errorf("sameFiles(%s, %s) = %v, %v; want %v", filepath.Base(tc.x), filepath.Base(tc.y), got, err, tc.want)
		}
	}
}
