package check

import (
	"sort"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// engine is Prometheus's PromQL engine, as a server runs it (five minutes
// of lookback).
var engine = promql.NewEngine(promql.EngineOpts{
	MaxSamples:    10_000_000,
	Timeout:       time.Minute,
	LookbackDelta: 5 * time.Minute,
	Parser:        pql,
})

// store is an in-memory set of series for the engine: what Prometheus
// would have scraped.
type store struct {
	series []storage.Series
}

// add appends a series named name with labels lbls, scraped every step
// from start to end (inclusive) with value f(elapsed since start). f
// returning NaN leaves the sample out (the series did not exist yet).
func (st *store) add(name string, lbls map[string]string, start, end time.Time, step time.Duration, f func(time.Duration) float64) {
	m := map[string]string{labels.MetricName: name}
	for k, v := range lbls {
		m[k] = v
	}
	var samples []chunks.Sample
	for ts := start; !ts.After(end); ts = ts.Add(step) {
		v := f(ts.Sub(start))
		if v != v { // NaN
			continue
		}
		samples = append(samples, floatSample{t: ts.UnixMilli(), f: v})
	}
	st.series = append(st.series, storage.NewListSeries(labels.FromMap(m), samples))
}

func (st *store) queryable() storage.Queryable {
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(sortSeries bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
			var out []storage.Series
		next:
			for _, s := range st.series {
				for _, m := range ms {
					if !m.Matches(s.Labels().Get(m.Name)) {
						continue next
					}
				}
				out = append(out, s)
			}
			if sortSeries {
				sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].Labels(), out[j].Labels()) < 0 })
			}
			return &seriesSet{series: out, i: -1}
		},
	}}
}

// seriesSet is a storage.SeriesSet over a slice.
type seriesSet struct {
	series []storage.Series
	i      int
}

func (s *seriesSet) Next() bool                        { s.i++; return s.i < len(s.series) }
func (s *seriesSet) At() storage.Series                { return s.series[s.i] }
func (s *seriesSet) Err() error                        { return nil }
func (s *seriesSet) Warnings() annotations.Annotations { return nil }

// floatSample is a chunks.Sample with a float value.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }
