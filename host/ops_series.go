package host

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The request metrics of a handler file are found once, not per request:
// each handlerFile holds its fileSeries, made on its first request, which
// keeps the children of the request counter and the latency histogram
// (prometheus's WithLabelValues, a hash and a map look-up under a lock)
// by method and status. Requests no file answered share one fileSeries
// ("none"). A reloaded file is a new handlerFile, whose first requests
// find the same children again.

// seriesSlot is where a handlerFile keeps its fileSeries.
type seriesSlot struct{ p atomic.Pointer[fileSeries] }

// servedFile is the handler file that answered a request, as its metrics
// and the access log see it: its label and its seriesSlot (the zero
// value: no file answered).
type servedFile struct {
	rel    string
	series *seriesSlot
	live   uint8 // reqState.live: a WebSocket or a stream, whose lifetime is no request duration
}

// fileSeries are the request series of one handler file.
type fileSeries struct {
	file string // the handler label
	// list holds the series seen so far; readers load it without a lock,
	// writers (a new method or status) replace it under mu.
	list atomic.Pointer[[]requestSeries]
	mu   sync.Mutex
}

// requestSeries are the children of one method and status.
type requestSeries struct {
	method   string
	status   int
	requests prometheus.Counter
	duration prometheus.Observer
}

// maxSeriesPerFile bounds a fileSeries's list (methods times statuses);
// beyond it, requests find their children through the vectors again.
const maxSeriesPerFile = 64

// seriesOf returns the request series of f.
func (m *metrics) seriesOf(f servedFile) *fileSeries {
	if f.series == nil {
		return m.none
	}
	if s := f.series.p.Load(); s != nil {
		return s
	}
	s := &fileSeries{file: f.rel}
	if !f.series.p.CompareAndSwap(nil, s) {
		return f.series.p.Load()
	}
	return s
}

// find returns the series of method and status (method a label value:
// a standard method or "OTHER").
func (s *fileSeries) find(m *metrics, method string, status int) requestSeries {
	if l := s.list.Load(); l != nil {
		for _, rs := range *l {
			if rs.status == status && rs.method == method {
				return rs
			}
		}
	}
	return s.add(m, method, status)
}

// add makes the series of method and status and keeps it, within
// maxSeriesPerFile.
func (s *fileSeries) add(m *metrics, method string, status int) requestSeries {
	code := "other"
	if status > 0 && status < len(statusLabels) {
		code = statusLabels[status]
	}
	rs := requestSeries{method: method, status: status,
		requests: m.requests.WithLabelValues(s.file, method, code),
		duration: m.duration.WithLabelValues(s.file, method)}
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []requestSeries
	if l := s.list.Load(); l != nil {
		old = *l
	}
	for _, o := range old {
		if o.status == status && o.method == method {
			return o // added meanwhile
		}
	}
	if len(old) < maxSeriesPerFile {
		l := append(append(make([]requestSeries, 0, len(old)+1), old...), rs)
		s.list.Store(&l)
	}
	return rs
}

// requestOnly counts a finished request of f whose duration is not a
// request's: an upgraded connection or a stream.
func (m *metrics) requestOnly(f servedFile, method string, status int) {
	m.inflight.Add(-1)
	m.seriesOf(f).find(m, methodLabel(method), status).requests.Inc()
}

// request counts a finished request of f.
func (m *metrics) request(f servedFile, method string, status int, d time.Duration) {
	m.inflight.Add(-1)
	rs := m.seriesOf(f).find(m, methodLabel(method), status)
	rs.requests.Inc()
	rs.duration.Observe(d.Seconds())
}
