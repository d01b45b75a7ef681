package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/zkconsumer/zkconsumer/connector"
)

// The CSV metrics reporter of --csv-reporter-enabled, as Kafka's
// KafkaCSVMetricsReporter (Yammer metrics' CsvReporter) wrote it: every
// csvInterval, one line per metric appended to a file of its own,
// <metric>.csv under --metrics-dir, headed by a "# time,..." line, the
// time in whole seconds since the reporter started. Metrics have Kafka's
// names; those Kafka kept per topic, partition, broker or stream get the
// file <metric>.<qualifier>.csv (Yammer named every file after the metric
// alone, so Kafka lost all but one of them). FetchRequestThrottleRateAndTimeMs
// is not written: fetches do not report the broker's throttle time. Unlike Kafka, which deletes
// --metrics-dir and everything in it at start, the reporter only creates
// the directory and overwrites its own files.

const csvInterval = 5 * time.Second

// Yammer's CSV columns of each kind of metric.
const (
	meterHeader     = "# time,count,1 min rate,mean rate,5 min rate,15 min rate"
	gaugeHeader     = "# time,value"
	histogramHeader = "# time,min,max,mean,median,stddev,95%,99%,99.9%"
)

// csvReporter is a connector.Metrics that writes CSV files.
type csvReporter struct {
	dir      string
	interval time.Duration
	start    time.Time
	stderr   func(error)

	mu         sync.Mutex // guards the event metrics below
	commits    map[string]*meter
	rebalances *histogram
	fetchTime  map[string]*histogram // "" is every broker
	fetchSize  map[string]*histogram

	// Owned by the reporting goroutine.
	c       *connector.ConsumerConnector
	meters  map[string]*meter // pulled counts, by file name
	files   map[string]*os.File
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

var _ connector.Metrics = (*csvReporter)(nil)

// newCSVReporter creates dir and reports there once attached; errors of
// writing go to report.
func newCSVReporter(dir string, report func(error)) (*csvReporter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("console-consumer: metrics directory: %w", err)
	}
	return &csvReporter{
		dir: dir, interval: csvInterval, stderr: report,
		commits:    map[string]*meter{},
		rebalances: newHistogram(),
		fetchTime:  map[string]*histogram{"": newHistogram()},
		fetchSize:  map[string]*histogram{"": newHistogram()},
		meters:     map[string]*meter{},
		files:      map[string]*os.File{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}, nil
}

// Attach starts the reports.
func (r *csvReporter) Attach(c *connector.ConsumerConnector) error {
	r.c, r.start = c, time.Now()
	// Kafka registers these at start, so their files exist from the
	// first report on.
	r.mu.Lock()
	r.commits["ZooKeeperCommitsPerSec"] = newMeter(r.start)
	r.commits["KafkaCommitsPerSec"] = newMeter(r.start)
	r.mu.Unlock()
	go r.loop()
	return nil
}

// Detach stops the reports and closes the files.
func (r *csvReporter) Detach() {
	r.stopped.Do(func() { close(r.stop) })
	<-r.done
}

// Fetch records a fetch request's duration and response size.
func (r *csvReporter) Fetch(e connector.FetchEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, key := range []string{"", "broker" + strconv.Itoa(int(e.Broker))} {
		if r.fetchTime[key] == nil {
			r.fetchTime[key], r.fetchSize[key] = newHistogram(), newHistogram()
		}
		r.fetchTime[key].update(float64(e.Duration) / float64(time.Millisecond))
		r.fetchSize[key].update(float64(e.Bytes))
	}
}

// Rebalance records a rebalance's duration.
func (r *csvReporter) Rebalance(e connector.RebalanceEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rebalances.update(float64(e.Duration) / float64(time.Millisecond))
}

// Commit counts a write of offsets.
func (r *csvReporter) Commit(e connector.CommitEvent) {
	name := "ZooKeeperCommitsPerSec"
	if e.Store == connector.OffsetsStorageKafka {
		name = "KafkaCommitsPerSec"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.commits[name]; m != nil {
		m.count++
	}
}

func (r *csvReporter) loop() {
	defer close(r.done)
	defer func() {
		for _, f := range r.files {
			_ = f.Close()
		}
	}()
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-ticker.C:
			r.report(now)
		}
	}
}

// report appends one line to the file of every metric.
func (r *csvReporter) report(now time.Time) {
	secs := int64(now.Sub(r.start) / time.Second)
	st := r.c.Stats()
	line := func(name, header string, values []byte) {
		f, err := r.file(name, header)
		if err != nil {
			r.stderr(err)
			return
		}
		row := strconv.AppendInt(nil, secs, 10)
		row = append(append(row, ','), values...)
		if _, err := f.Write(append(row, '\n')); err != nil {
			r.stderr(fmt.Errorf("console-consumer: metrics: %w", err))
		}
	}
	pulled := func(name string, count int64) {
		m := r.meters[name]
		if m == nil {
			m = newMeter(r.start)
			r.meters[name] = m
		}
		m.count = count
		m.tick()
		line(name, meterHeader, m.values(now))
	}
	gauge := func(name string, v []byte) { line(name, gaugeHeader, v) }

	var messages, bytes int64
	for _, t := range st.Topics {
		messages += t.Messages
		bytes += t.Bytes
		pulled("MessagesPerSec."+t.Topic, t.Messages)
		pulled("BytesPerSec."+t.Topic, t.Bytes)
	}
	pulled("MessagesPerSec", messages)
	pulled("BytesPerSec", bytes)
	gauge("OwnedPartitionsCount", strconv.AppendInt(nil, int64(len(st.Partitions)), 10))
	perTopic := map[string]int64{}
	for _, p := range st.Partitions {
		perTopic[p.Topic]++
		gauge("ConsumerLag."+p.Topic+"."+strconv.Itoa(int(p.Partition)), strconv.AppendInt(nil, p.Lag, 10))
	}
	for _, topic := range slices.Sorted(maps.Keys(perTopic)) {
		gauge("OwnedPartitionsCount."+topic, strconv.AppendInt(nil, perTopic[topic], 10))
	}
	gauge("MaxLag", strconv.AppendInt(nil, st.MaxLag, 10))
	gauge("MinFetchRate", appendJavaFloat(nil, st.MinFetchRate, 64))
	for _, s := range st.Streams {
		name := "FetchQueueSize." + strconv.Itoa(s.Thread)
		if s.Topic != "" {
			name = "FetchQueueSize." + s.Topic + "." + strconv.Itoa(s.Thread)
		}
		gauge(name, strconv.AppendInt(nil, int64(s.QueuedChunks), 10))
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	for name, m := range r.commits {
		m.tick()
		line(name, meterHeader, m.values(now))
	}
	line("RebalanceRateAndTime", histogramHeader, r.rebalances.values())
	for key, h := range r.fetchTime {
		name, size := "FetchRequestRateAndTimeMs", "FetchResponseSize"
		if key != "" {
			name, size = name+"."+key, size+"."+key
		}
		line(name, histogramHeader, h.values())
		line(size, histogramHeader, r.fetchSize[key].values())
	}
}

// file returns the open file of a metric, creating it with its header.
func (r *csvReporter) file(name, header string) (*os.File, error) {
	if f, ok := r.files[name]; ok {
		return f, nil
	}
	f, err := os.Create(filepath.Join(r.dir, name+".csv"))
	if err != nil {
		return nil, fmt.Errorf("console-consumer: metrics: %w", err)
	}
	if _, err := f.WriteString(header + "\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("console-consumer: metrics: %w", err)
	}
	r.files[name] = f
	return f, nil
}

// meter is Yammer's Meter: a count, its mean rate and its exponentially
// weighted moving averages over 1, 5 and 15 minutes, ticked every 5 s.
type meter struct {
	created                 time.Time
	count, ticked           int64
	m1, m5, m15             float64
	alpha1, alpha5, alpha15 float64
	initialised             bool
}

func newMeter(created time.Time) *meter {
	alpha := func(minutes float64) float64 { return 1 - math.Exp(-5.0/60.0/minutes) }
	return &meter{created: created, alpha1: alpha(1), alpha5: alpha(5), alpha15: alpha(15)}
}

// tick folds the count added since the last tick into the averages, as
// Yammer's EWMA does every 5 s.
func (m *meter) tick() {
	instant := float64(m.count-m.ticked) / csvInterval.Seconds()
	m.ticked = m.count
	if !m.initialised {
		m.m1, m.m5, m.m15, m.initialised = instant, instant, instant, true
		return
	}
	m.m1 += m.alpha1 * (instant - m.m1)
	m.m5 += m.alpha5 * (instant - m.m5)
	m.m15 += m.alpha15 * (instant - m.m15)
}

func (m *meter) values(now time.Time) []byte {
	mean := 0.0
	if el := now.Sub(m.created).Seconds(); m.count > 0 && el > 0 {
		mean = float64(m.count) / el
	}
	b := strconv.AppendInt(nil, m.count, 10)
	for _, v := range []float64{m.m1, mean, m.m5, m.m15} {
		b = appendJavaFloat(append(b, ','), v, 64)
	}
	return b
}

// histogram is Yammer's Histogram (and the statistics of its Timer): min,
// max, mean and standard deviation of every value, quantiles of the
// latest histogramSample values.
type histogram struct {
	count    int64
	min, max float64
	mean, m2 float64 // Welford's running mean and sum of squares
	sample   []float64
	next     int
}

const histogramSample = 1028 // Yammer's reservoir size

func newHistogram() *histogram { return &histogram{} }

func (h *histogram) update(v float64) {
	h.count++
	if h.count == 1 || v < h.min {
		h.min = v
	}
	if h.count == 1 || v > h.max {
		h.max = v
	}
	d := v - h.mean
	h.mean += d / float64(h.count)
	h.m2 += d * (v - h.mean)
	if len(h.sample) < histogramSample {
		h.sample = append(h.sample, v)
	} else {
		h.sample[h.next] = v
		h.next = (h.next + 1) % histogramSample
	}
}

func (h *histogram) values() []byte {
	var vals []float64
	if h.count > 0 {
		stddev := 0.0
		if h.count > 1 {
			stddev = math.Sqrt(h.m2 / float64(h.count-1))
		}
		s := slices.Sorted(slices.Values(h.sample))
		vals = []float64{h.min, h.max, h.mean, quantile(s, 0.5), stddev, quantile(s, 0.95), quantile(s, 0.99), quantile(s, 0.999)}
	} else {
		vals = make([]float64, 8)
	}
	var b []byte
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJavaFloat(b, v, 64)
	}
	return b
}

// quantile interpolates as Yammer's Snapshot.getValue does.
func quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	pos := q * float64(n+1)
	switch {
	case pos < 1:
		return sorted[0]
	case pos >= float64(n):
		return sorted[n-1]
	}
	lower := sorted[int(pos)-1]
	upper := sorted[int(pos)]
	return lower + (pos-math.Floor(pos))*(upper-lower)
}
