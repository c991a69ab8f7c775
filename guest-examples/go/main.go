// Command stats is a taskbox task written in Go: a WASI preview-1 command (the command ABI).
//
// It reads one JSON object from stdin, {"readings": [numbers], "unit"?: string}, and prints
// {"count", "min", "max", "mean", "median", "stddev", "unit"} to stdout (stddev is the
// population standard deviation; unit is "" when absent). On invalid input it prints a clear
// message to stderr and exits with status 2.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o go-stats.wasm .
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

type input struct {
	Readings *[]float64 `json:"readings"`
	Unit     string     `json:"unit"`
}

type stats struct {
	Count  int     `json:"count"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Stddev float64 `json:"stddev"`
	Unit   string  `json:"unit"`
}

func parse(data []byte) (input, error) {
	var in input
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		if errors.Is(err, io.EOF) {
			return in, errors.New("stdin is empty; expected {\"readings\": [numbers], \"unit\"?: string}")
		}
		return in, fmt.Errorf("expected {\"readings\": [numbers], \"unit\"?: string}: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return in, errors.New("unexpected data after the JSON object")
	}
	if in.Readings == nil {
		return in, errors.New("missing field \"readings\"")
	}
	if len(*in.Readings) == 0 {
		return in, errors.New("\"readings\" must not be empty")
	}
	return in, nil
}

func compute(readings []float64, unit string) stats {
	sorted := append([]float64(nil), readings...)
	sort.Float64s(sorted)
	n := len(sorted)
	// Welford's online algorithm: no overflow from summing large values first.
	var mean, m2 float64
	for i, x := range sorted {
		delta := x - mean
		mean += delta / float64(i+1)
		m2 += delta * (x - mean)
	}
	median := sorted[n/2]
	if n%2 == 0 {
		median = sorted[n/2-1]/2 + sorted[n/2]/2
	}
	return stats{
		Count:  n,
		Min:    sorted[0],
		Max:    sorted[n-1],
		Mean:   mean,
		Median: median,
		Stddev: math.Sqrt(m2 / float64(n)),
		Unit:   unit,
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "stats: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("cannot read stdin: %v", err)
	}
	in, err := parse(data)
	if err != nil {
		fail("invalid input: %v", err)
	}
	out, err := json.Marshal(compute(*in.Readings, in.Unit))
	if err != nil {
		fail("result cannot be written as JSON (readings too large?): %v", err)
	}
	os.Stdout.Write(append(out, '\n'))
}
