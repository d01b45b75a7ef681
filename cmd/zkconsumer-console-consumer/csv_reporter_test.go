package main

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMeterLikeYammers(t *testing.T) {
	start := time.Now()
	m := newMeter(start)
	m.count = 50
	m.tick()
	require.Equal(t, "50,10.0,5.0,10.0,10.0", string(m.values(start.Add(10*time.Second))), "the first tick sets every average")
	m.tick() // nothing new for 5 s
	alpha1 := 1 - math.Exp(-5.0/60.0)
	require.InDelta(t, 10*(1-alpha1), m.m1, 1e-12)
	require.Less(t, m.m1, m.m5)
	require.Less(t, m.m5, m.m15)
}

func TestHistogramLikeYammers(t *testing.T) {
	h := newHistogram()
	require.Equal(t, "0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0", string(h.values()))
	for _, v := range []float64{4, 1, 3, 2} {
		h.update(v)
	}
	// min, max, mean, median, stddev (n-1), 95%, 99%, 99.9%
	require.Equal(t, "1.0,4.0,2.5,2.5,1.2909944487358056,4.0,4.0,4.0", string(h.values()))
	require.InDelta(t, 1.5, quantile([]float64{1, 2, 3}, 0.375), 1e-12) // position 1.5: halfway from 1 to 2
}
