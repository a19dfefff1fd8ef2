package jsondoc

import (
	"strconv"
)

// number follows Python's scanner: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?
func (d *decoder) number() (Value, error) {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.data[d.pos] == '-' {
		d.pos++
	}
	if d.pos < len(d.data) && d.data[d.pos] == '0' {
		d.pos++
	} else if digits() == 0 {
		d.pos = start
		return nil, d.errorf("expecting value")
	}
	isFloat := false
	if d.pos+1 < len(d.data) && d.data[d.pos] == '.' && isDigit(d.data[d.pos+1]) {
		d.pos++
		digits()
		isFloat = true
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		save := d.pos
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if digits() == 0 {
			d.pos = save // not an exponent: Python stops the number here
		} else {
			isFloat = true
		}
	}
	lit := d.src[start:d.pos]
	if !isFloat {
		if lit == "-0" {
			lit = "0"
		}
		return Number{Text: lit}, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isRangeErr(err) {
		return nil, d.errorf("bad number %q", lit)
	}
	return Float(f), nil // out of range gives ±Inf or 0, as in Python
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
