// Package metrics holds a Gatehouse process's Prometheus metrics, served at
// GET /metrics (CONTRACT §5): gRPC calls by method and code, REST requests by
// route pattern, method and status, store transactions, authentication
// failures, the build (gatehouse_build_info), and the Go runtime and process
// collectors. A service's own counters (management's migration outcomes)
// are declared where they are counted, with NewCounterVec.
//
// A process runs one service, so the metrics live in one registry per process
// (Registry); every server of the process reports into it. Label values are
// always drawn from closed sets (method names, route patterns, status codes,
// fixed words): never an ID, a key or anything else a client chooses.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatehouse/gatehouse/pkg/buildinfo"
)

// latencyBuckets (seconds) span what the services answer in: tens of
// microseconds for a cached read to seconds for a large migration.
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

var (
	// Registry holds every metric of the process.
	Registry = prometheus.NewRegistry()

	// GRPC measures every gRPC call (grpc_server_handled_total,
	// grpc_server_handling_seconds, ...); grpcserver installs its interceptors.
	GRPC = newGRPCMetrics(latencyBuckets)

	httpRequests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gatehouse_http_request_duration_seconds",
		Help:    "REST requests by route pattern (never the raw path), method and status code.",
		Buckets: latencyBuckets,
	}, []string{"route", "method", "code"})

	storeTx = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gatehouse_store_transaction_duration_seconds",
		Help:    "Store transactions by kind (read, write), commit included.",
		Buckets: latencyBuckets,
	}, []string{"kind"})

	storeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_store_transaction_failures_total",
		Help: "Store transactions that returned an error, by kind (read, write).",
	}, []string{"kind"})

	authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_auth_failures_total",
		Help: "Requests refused for missing or invalid credentials (401), which the audit log does not store.",
	}, []string{"service"})

	auditDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_audit_refused_dropped_total",
		Help: "Refused requests not stored in the audit log because their caller passed its per-minute allowance.",
	}, []string{"service"})

	storeFull = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gatehouse_store_full_total",
		Help: "Writes the store refused because its space quota is exhausted (etcd's NOSPACE alarm); /readyz answers 503 meanwhile.",
	})

	gatewayNotifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gatehouse_gateway_notifications_total",
		Help: "Reload notifications for Tyk Gateways by outcome: published, failed (Redis refused or did not answer; kept for a retry), retried (an attempt after a failure).",
	}, []string{"outcome"})

	gatewayNodes     atomic.Pointer[func() float64]
	gatewayNodeGauge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatehouse_gateway_nodes",
		Help: "Tyk Gateway nodes registered with the service and seen in the last minute (management with --node-secret).",
	}, func() float64 {
		if fn := gatewayNodes.Load(); fn != nil {
			return (*fn)()
		}
		return 0
	})
)

// buildInfo is gatehouse_build_info{version,revision,goversion} 1: which
// build the process runs (CONTRACT §5).
func buildInfo() prometheus.Collector {
	b := buildinfo.Get()
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "gatehouse_build_info",
		Help:        "The running build: version, source revision and Go release (always 1).",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	}, func() float64 { return 1 })
}

func init() {
	Registry.MustRegister(buildInfo(),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		GRPC, httpRequests, storeTx, storeFailures, storeFull, authFailures, auditDropped, gatewayNotifications, gatewayNodeGauge,
	)
}

// CountAuthFailure counts a request of service refused for its credentials.
func CountAuthFailure(service string) { authFailures.WithLabelValues(service).Inc() }

// CountStoreFull counts a write the store refused for want of space.
func CountStoreFull() { storeFull.Inc() }

// CountAuditDropped counts a refused request of service the audit log did not store.
func CountAuditDropped(service string) { auditDropped.WithLabelValues(service).Inc() }

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

// ObserveHTTP records one REST request. route is the matched route pattern,
// or a fixed word when none matched.
func ObserveHTTP(route, method string, status int, d time.Duration) {
	k := httpSeries{route, method, status}
	o, ok := httpObservers.Load(k)
	if !ok {
		o, _ = httpObservers.LoadOrStore(k, httpRequests.WithLabelValues(route, method, strconv.Itoa(status)))
	}
	o.(prometheus.Observer).Observe(d.Seconds())
}

// httpSeries names one series of httpRequests. Its label values come from
// closed sets (the documented routes and fixed words, the methods
// HTTPMethod names, the statuses the facade writes), so httpObservers, which
// keeps each series' observer after its first request instead of hashing the
// three labels of every request, stays as small as the metric itself.
type httpSeries struct {
	route, method string
	status        int
}

var httpObservers sync.Map // httpSeries → prometheus.Observer

// Store transaction kinds.
const (
	Read  = "read"
	Write = "write"
)

// ObserveStore records one store transaction of kind (Read or Write) that
// started at start and ended with err.
func ObserveStore(kind string, start time.Time, err error) {
	storeTx.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	if err != nil {
		storeFailures.WithLabelValues(kind).Inc()
	}
}

// NewCounterVec registers a counter of the process (in Registry) with the
// label names labels and returns it; the caller counts into it. Its label
// values must come from closed sets, as every metric's here.
func NewCounterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	Registry.MustRegister(c)
	return c
}

// Notification outcomes of gatehouse_gateway_notifications_total.
const (
	Published = "published"
	Failed    = "failed"
	Retried   = "retried"
)

// NotificationsEnabled makes gatehouse_gateway_notifications_total show its
// three outcomes (at 0) from the start, as the service with notifications on
// calls it.
func NotificationsEnabled() {
	for _, o := range []string{Published, Failed, Retried} {
		gatewayNotifications.WithLabelValues(o)
	}
}

// CountNotification counts one reload notification attempt by outcome
// (Published, Failed, Retried).
func CountNotification(outcome string) {
	gatewayNotifications.WithLabelValues(outcome).Inc()
}

// GatewayNodes makes gatehouse_gateway_nodes report what count answers at
// each scrape (the last service to call it wins; nil reports 0).
func GatewayNodes(count func() float64) {
	if count == nil {
		gatewayNodes.Store(nil)
		return
	}
	gatewayNodes.Store(&count)
}

// HTTPMethod maps a request method onto a closed set: anything that is not
// a standard method is counted as "other".
func HTTPMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
