// Package report draws the fleet simulation's plots (PNG, gonum/plot)
// and formats its tables.
package report

import (
	"fmt"
	"image/color"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line of a plot.
type Series struct {
	Name string
	X, Y []float64
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// Lines draws the series on one plot and saves it as a PNG.
func Lines(path, title, xLabel, yLabel string, series []Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Legend.Top = false
	p.Add(plotter.NewGrid())
	for i, s := range series {
		l, err := line(s, i, vg.Points(1))
		if err != nil {
			return err
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	return p.Save(20*vg.Centimeter, 10*vg.Centimeter, path)
}

// Panels draws each series on a panel of its own, one above the other,
// on the same axes, and saves them as one PNG: lines that overlap hide
// each other's spikes.
func Panels(path, title, xLabel, yLabel string, series []Series) error {
	if len(series) == 0 {
		return fmt.Errorf("%s: nothing to draw", path)
	}
	var xmax, ymax float64
	for _, s := range series {
		for i := range s.X {
			xmax, ymax = max(xmax, s.X[i]), max(ymax, s.Y[i])
		}
	}
	rows := make([][]*plot.Plot, len(series))
	for i, s := range series {
		p := plot.New()
		p.Title.Text = s.Name
		if i == 0 {
			p.Title.Text = title + "\n" + s.Name
		}
		p.Y.Label.Text = yLabel
		if i == len(series)-1 {
			p.X.Label.Text = xLabel
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax, 0, ymax*1.05
		p.Add(plotter.NewGrid())
		l, err := line(s, i, vg.Points(0.7))
		if err != nil {
			return err
		}
		p.Add(l)
		rows[i] = []*plot.Plot{p}
	}
	w, h := 24*vg.Centimeter, vg.Length(len(series))*7*vg.Centimeter
	img := vgimg.New(w, h)
	dc := draw.New(img)
	t := draw.Tiles{Rows: len(series), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadX: vg.Points(4), PadY: vg.Points(6)}
	canvases := plot.Align(rows, t, dc)
	for i := range rows {
		rows[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// line is series s drawn in the i-th colour of the palette.
func line(s Series, i int, width vg.Length) (*plotter.Line, error) {
	xys := make(plotter.XYs, len(s.X))
	for j := range s.X {
		xys[j].X, xys[j].Y = s.X[j], s.Y[j]
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	l.Color = palette[i%len(palette)]
	l.Width = width
	return l, nil
}

// Rate is requests per second per 1000 agents, bucket by bucket (each
// bucket seconds long), as a series over time in seconds.
func Rate(name string, perBucket []float64, agents int, bucket float64) Series {
	s := Series{Name: name}
	for i, v := range perBucket {
		s.X = append(s.X, float64(i)*bucket)
		s.Y = append(s.Y, v/bucket*1000/float64(max(agents, 1)))
	}
	return s
}

// CDF is the share of xs (in percent) at or below each value.
func CDF(name string, xs []float64) Series {
	s := Series{Name: name}
	sorted := slices.Sorted(slices.Values(xs))
	for i, x := range sorted {
		s.X = append(s.X, x)
		s.Y = append(s.Y, 100*float64(i+1)/float64(len(sorted)))
	}
	return s
}
