package httpclient

import (
	"io"
	"net/http"
)

// declaredLength is the length resp's body will have, -1 when unknown.
// The answer to a HEAD declares its GET's length and has no body.
func declaredLength(resp *http.Response) int64 {
	if resp.Request != nil && resp.Request.Method == http.MethodHead {
		return 0
	}
	return resp.ContentLength
}

// readBody reads a body of at most max bytes, else ErrTooLarge.
// declared is its Content-Length (-1: unknown). A declared length over
// max is refused before anything is read (a server that says 1 GiB is
// not listened to); a declared one is read into one allocation of its
// size; an unknown one in growing chunks joined at the end, so that a
// body that runs over the cap has cost about the cap, not the 2.4 times
// as much of io.ReadAll's growing and copying.
func readBody(body io.Reader, declared, max int64) ([]byte, error) {
	if declared > max {
		return nil, ErrTooLarge
	}
	if declared >= 0 {
		buf := make([]byte, declared)
		if _, err := io.ReadFull(body, buf); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return buf, nil
	}
	var chunks [][]byte
	total := int64(0)
	for size := 32 << 10; ; size = min(2*size, 1<<20) {
		chunk := make([]byte, size)
		n, err := io.ReadFull(body, chunk)
		chunks = append(chunks, chunk[:n])
		total += int64(n)
		if total > max {
			return nil, ErrTooLarge
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, total)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}
