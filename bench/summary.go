package main

import (
	"fmt"
	"slices"
	"strings"
)

// stats is min, median and max.
type stats struct{ min, med, max float64 }

func statsOf(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stats{s[0], med, s[len(s)-1]}
}

// summary prints, for each shape, every client's msgs/s and CPU per GB
// (min / median / max over the rounds), then the ratios of the connector
// to every other client within each round, and of the console consumer to
// kcat, and the goals.
func (r *runner) summary(sets []*dataset) {
	ours := r.clients[0]
	for _, c := range r.clients {
		if c == "connector" {
			ours = c
		}
	}
	fmt.Printf("\n== summary: msgs/s and client CPU-seconds per GB of values at steady state (start-up taken out),\n"+
		"   min / median / max over %d rounds; peak RSS and start-up (ms to the first message) medians\n", r.rounds)
	for _, d := range sets {
		fmt.Printf("\n%s (%s, %d messages, topic %s)\n", d.name, d.label, d.total, d.topic)
		fmt.Printf("  %-22s %-34s %-22s %-8s %s\n", "client", "msgs/s", "CPU s/GB", "RSS MB", "start-up ms")
		for _, c := range r.clients {
			rate, cpu, rss, first := r.series(d.name, c)
			rs, cs, ms, fs := statsOf(rate), statsOf(cpu), statsOf(rss), statsOf(first)
			fmt.Printf("  %-22s %9.0f / %9.0f / %9.0f   %5.2f / %5.2f / %5.2f   %6.1f   %7.1f\n", c, rs.min, rs.med, rs.max, cs.min, cs.med, cs.max, ms.med, fs.med)
		}
		for _, c := range r.clients {
			if c == ours {
				continue
			}
			ratios, cpuRatios := r.ratios(d.name, ours, c)
			if len(ratios) == 0 {
				continue
			}
			rs, cs := statsOf(ratios), statsOf(cpuRatios)
			fmt.Printf("  %s / %-12s msgs/s by round: %s; median %.2f (min %.2f, max %.2f); CPU/GB ratio median %.2f\n",
				ours, c, fmtList(ratios), rs.med, rs.min, rs.max, cs.med)
		}
		// The console consumer's own goal is against kcat.
		for _, c := range consoles(r.clients) {
			ratios, cpuRatios := r.ratios(d.name, c, "kcat")
			if c == ours || len(ratios) == 0 {
				continue
			}
			rs, cs := statsOf(ratios), statsOf(cpuRatios)
			fmt.Printf("  %s / %-12s msgs/s by round: %s; median %.2f (min %.2f, max %.2f); CPU/GB ratio median %.2f\n",
				c, "kcat", fmtList(ratios), rs.med, rs.min, rs.max, cs.med)
		}
	}
	fmt.Printf("\n== goals (issue #13), at the median of the per-round ratios\n")
	for _, d := range sets {
		var parts []string
		check := func(a, other, what string, ok func(rate, cpu float64) bool) {
			ratios, cpuRatios := r.ratios(d.name, a, other)
			if len(ratios) == 0 {
				return
			}
			rs, cs := statsOf(ratios), statsOf(cpuRatios)
			mark := "MISSED"
			if ok(rs.med, cs.med) {
				mark = "met"
			}
			parts = append(parts, fmt.Sprintf("%s %s (%.2fx, CPU %.2fx)", what, mark, rs.med, cs.med))
		}
		if !slices.Contains(consoles(r.clients), ours) {
			check(ours, "kcat", ">=1.0x kcat and <= its CPU/GB:", func(rate, cpu float64) bool { return rate >= 1 && cpu <= 1 })
			check(ours, "scala", ">=2x Scala:", func(rate, _ float64) bool { return rate >= 2 })
			check(ours, "franz", "> franz-go:", func(rate, _ float64) bool { return rate > 1 })
			check(ours, "sarama", "> sarama:", func(rate, _ float64) bool { return rate > 1 })
		}
		for _, c := range consoles(r.clients) {
			check(c, "kcat", c+" >=1.0x kcat:", func(rate, _ float64) bool { return rate >= 1 })
		}
		for _, c := range r.clients {
			if c == "kcat" || c == "scala" {
				continue
			}
			_, _, _, ours := r.series(d.name, c)
			_, _, _, theirs := r.series(d.name, "kcat")
			if len(ours) == 0 || len(theirs) == 0 {
				continue
			}
			ratio := statsOf(ours).med / statsOf(theirs).med
			mark := "MISSED"
			if ratio <= 2 {
				mark = "met"
			}
			parts = append(parts, fmt.Sprintf("%s start-up <=2x kcat's %s (%.2fx)", c, mark, ratio))
		}
		fmt.Printf("  %-5s %s\n", d.name, strings.Join(parts, "; "))
	}
}

// markdown prints the summary as one Markdown table, as BENCHMARKS.md
// leads with: per shape and client the medians over the rounds of steady
// msgs/s, CPU-seconds per GB, peak RSS and start-up, and the median of the
// per-round ratios of msgs/s and CPU per GB to kcat's.
func (r *runner) markdown(sets []*dataset) {
	fmt.Printf("\n== Markdown (medians over %d rounds; x kcat: median of the per-round ratios)\n\n", r.rounds)
	fmt.Println("| shape | client | msgs/s | x kcat | CPU s/GB | CPU x kcat | peak RSS MB | start-up ms |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, d := range sets {
		for _, c := range r.clients {
			rate, cpu, rss, first := r.series(d.name, c)
			if len(rate) == 0 {
				continue
			}
			ratio, cpuRatio := "", ""
			if c != "kcat" {
				if rs, cs := r.ratios(d.name, c, "kcat"); len(rs) > 0 {
					ratio = fmt.Sprintf("%.2fx", statsOf(rs).med)
					if len(cs) > 0 {
						cpuRatio = fmt.Sprintf("%.2fx", statsOf(cs).med)
					}
				}
			}
			startup := "n/a"
			if len(first) > 0 {
				startup = fmt.Sprintf("%.0f", statsOf(first).med)
			}
			fmt.Printf("| %s | %s | %s | %s | %.2f | %s | %.0f | %s |\n", d.label, c, humanRate(statsOf(rate).med),
				ratio, statsOf(cpu).med, cpuRatio, statsOf(rss).med, startup)
		}
	}
}

// humanRate writes msgs/s as 1.23 M or 456 k.
func humanRate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.0f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// consoles returns the console clients (console, console:<variant>) of
// clients.
func consoles(clients []string) []string {
	var out []string
	for _, c := range clients {
		if name, _, _ := strings.Cut(c, ":"); name == "console" {
			out = append(out, c)
		}
	}
	return out
}

// series returns a client's steady rates, CPU per GB and RSS on a shape,
// and its start-ups, by round.
func (r *runner) series(shapeName, client string) (rate, cpu, rss, first []float64) {
	for _, res := range r.results {
		if res.Shape == shapeName && res.Client == client {
			rate = append(rate, steadyRate(res))
			cpu = append(cpu, steadyCPUPerGB(res))
			rss = append(rss, res.RSSMB)
			if res.FirstMs > 0 {
				first = append(first, res.FirstMs)
			}
		}
	}
	return rate, cpu, rss, first
}

// steadyRate is a read's msgs/s without its start-up, or its rate when
// the start-up was not measured (scala reports its own rate).
func steadyRate(res result) float64 {
	if res.Steady > 0 {
		return res.Steady
	}
	return res.Rate
}

// steadyCPUPerGB is CPU per GB without the start-up's, when measured.
func steadyCPUPerGB(res result) float64 {
	if res.Steady > 0 && res.Bytes > 0 {
		return res.SteadyCPU / (float64(res.Bytes) / 1e9)
	}
	return cpuPerGB(res)
}

// ratios returns a/b of steady msgs/s and of CPU per GB, round by round.
func (r *runner) ratios(shapeName, a, b string) (rate, cpu []float64) {
	byRound := map[int]*result{}
	for i := range r.results {
		if res := &r.results[i]; res.Shape == shapeName && res.Client == b {
			byRound[res.Round] = res
		}
	}
	for _, res := range r.results {
		if res.Shape != shapeName || res.Client != a {
			continue
		}
		if o := byRound[res.Round]; o != nil && steadyRate(*o) > 0 {
			rate = append(rate, steadyRate(res)/steadyRate(*o))
			if c := steadyCPUPerGB(*o); c > 0 {
				cpu = append(cpu, steadyCPUPerGB(res)/c)
			}
		}
	}
	return rate, cpu
}

func fmtList(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%.2f", x))
	}
	return strings.Join(parts, " ")
}
