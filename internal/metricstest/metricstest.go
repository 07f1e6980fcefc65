// Package metricstest reads Prometheus metrics the way a scraper does,
// for tests: it fetches the text exposition format, parses it with
// prometheus/common's parser, and finds samples by their labels.
package metricstest

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are the metric families of one scrape, by name.
type Families map[string]*dto.MetricFamily

// Parse parses a text exposition.
func Parse(tb testing.TB, text string) Families {
	tb.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		tb.Fatalf("metrics do not parse: %v\n%s", err, text)
	}
	return fams
}

// Gather scrapes g as promhttp serves it, in the text format.
func Gather(tb testing.TB, g prometheus.Gatherer) Families {
	tb.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return Parse(tb, rec.Body.String())
}

// Scrape GETs url with the header pairs given and parses the answer,
// which must be 200 in the text format.
func Scrape(tb testing.TB, url string, header ...string) Families {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		tb.Fatalf("GET %s: %d %s %s", url, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return Parse(tb, string(b))
}

// Sample is one metric of a family: its labels and value (a counter's,
// a gauge's, or a histogram's sample count).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples returns the samples of the family name (none when absent).
func (f Families) Samples(name string) []Sample {
	fam := f[name]
	if fam == nil {
		return nil
	}
	var out []Sample
	for _, m := range fam.GetMetric() {
		s := Sample{Labels: map[string]string{}}
		for _, l := range m.GetLabel() {
			s.Labels[l.GetName()] = l.GetValue()
		}
		switch {
		case m.Counter != nil:
			s.Value = m.GetCounter().GetValue()
		case m.Gauge != nil:
			s.Value = m.GetGauge().GetValue()
		case m.Histogram != nil:
			s.Value = float64(m.GetHistogram().GetSampleCount())
		case m.Summary != nil:
			s.Value = float64(m.GetSummary().GetSampleCount())
		case m.Untyped != nil:
			s.Value = m.GetUntyped().GetValue()
		}
		out = append(out, s)
	}
	return out
}

// Value returns the value of the sample of the family name whose labels
// include labels (name/value pairs), and whether there is one; it fails
// tb when several match.
func (f Families) Value(tb testing.TB, name string, labels ...string) (float64, bool) {
	tb.Helper()
	var found []Sample
	for _, s := range f.Samples(name) {
		ok := true
		for i := 0; i+1 < len(labels); i += 2 {
			if s.Labels[labels[i]] != labels[i+1] {
				ok = false
			}
		}
		if ok {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return 0, false
	case 1:
		return found[0].Value, true
	}
	tb.Fatalf("%s%v: %d samples match: %v", name, labels, len(found), found)
	return 0, false
}

// LabelValues returns the sorted distinct values of label in the family.
func (f Families) LabelValues(name, label string) []string {
	set := map[string]bool{}
	for _, s := range f.Samples(name) {
		if v, ok := s.Labels[label]; ok {
			set[v] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
