package benchkit

import (
	"errors"
	"testing"
	"time"
)

// Sides take turns in every round; round 0 is run but not kept.
func TestAlternate(t *testing.T) {
	var order []int
	got, err := Alternate(2, 2, func(round, side int) (Sample, error) {
		order = append(order, round*10+side)
		return Sample{Wall: time.Duration(round*10 + side)}, nil
	})
	if err != nil || len(order) != 6 || order[2] != 10 || order[3] != 11 {
		t.Fatalf("order %v, %v", order, err)
	}
	if len(got) != 2 || got[0][0].Wall != 10 || got[0][1].Wall != 20 || got[1][1].Wall != 21 {
		t.Errorf("samples %v", got)
	}
	if _, err := Alternate(1, 1, func(int, int) (Sample, error) { return Sample{}, errors.New("x") }); err == nil {
		t.Error("an error was not returned")
	}
}
