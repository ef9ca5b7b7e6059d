package metrics

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// GRPCMetrics are the series of every gRPC call, by type, service and
// method (and code once handled), the names, help and labels of the
// go-grpc-middleware Prometheus provider's server metrics, each call
// counted as it counts them: started, each message received and each one
// sent without error, handled with its code and timed. A method's series
// are looked up once and kept (the label lookups were most of the cost of
// a REST call's metrics), and appear only once first counted, as before.
type GRPCMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec
	methods                          sync.Map // "type /service/method" → *grpcSeries
	unary                            sync.Map // "/service/method" → its unary *grpcSeries, found without a key to build
}

// grpcSeries are one method's series, each made when first counted.
type grpcSeries struct {
	labels                  []string // type, service, method
	started, received, sent atomic.Pointer[prometheus.Counter]
	handling                atomic.Pointer[prometheus.Observer]
	handled                 [codes.Unauthenticated + 1]atomic.Pointer[prometheus.Counter]
}

func newGRPCMetrics(buckets []float64) *GRPCMetrics {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	return &GRPCMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total",
			Help: "Total number of RPCs started on the server.",
		}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, append(labels[:3:3], "grpc_code")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total",
			Help: "Total number of RPC stream messages received on the server.",
		}, labels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total",
			Help: "Total number of gRPC stream messages sent by the server.",
		}, labels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: buckets,
		}, labels),
	}
}

// Describe and Collect make GRPCMetrics a prometheus.Collector.
func (m *GRPCMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.started.Describe(ch)
	m.handled.Describe(ch)
	m.received.Describe(ch)
	m.sent.Describe(ch)
	m.handling.Describe(ch)
}

func (m *GRPCMetrics) Collect(ch chan<- prometheus.Metric) {
	m.started.Collect(ch)
	m.handled.Collect(ch)
	m.received.Collect(ch)
	m.sent.Collect(ch)
	m.handling.Collect(ch)
}

// series returns the series of fullMethod (/package.Service/Method) called
// as typ. A server calls only the methods registered on it: a closed set.
func (m *GRPCMetrics) series(typ, fullMethod string) *grpcSeries {
	key := typ + " " + fullMethod
	if s, ok := m.methods.Load(key); ok {
		return s.(*grpcSeries)
	}
	service, method := "unknown", "unknown"
	if name := strings.TrimPrefix(fullMethod, "/"); strings.Contains(name, "/") {
		service, method, _ = strings.Cut(name, "/")
	}
	s, _ := m.methods.LoadOrStore(key, &grpcSeries{labels: []string{typ, service, method}})
	return s.(*grpcSeries)
}

// unarySeries is series("unary", fullMethod), looked up by the method's
// name as it is (series builds its key: an allocation a call).
func (m *GRPCMetrics) unarySeries(fullMethod string) *grpcSeries {
	if s, ok := m.unary.Load(fullMethod); ok {
		return s.(*grpcSeries)
	}
	s := m.series("unary", fullMethod)
	m.unary.Store(fullMethod, s)
	return s
}

// counter returns the child of vec kept in p, made with labels when first needed.
func counter(p *atomic.Pointer[prometheus.Counter], vec *prometheus.CounterVec, labels ...string) prometheus.Counter {
	if c := p.Load(); c != nil {
		return *c
	}
	c := vec.WithLabelValues(labels...)
	p.Store(&c)
	return c
}

func (m *GRPCMetrics) begin(s *grpcSeries) { counter(&s.started, m.started, s.labels...).Inc() }

func (m *GRPCMetrics) received1(s *grpcSeries) { counter(&s.received, m.received, s.labels...).Inc() }

func (m *GRPCMetrics) sent1(s *grpcSeries) { counter(&s.sent, m.sent, s.labels...).Inc() }

// end counts a call handled with err's code (a context error's as gRPC
// answers it) after d.
func (m *GRPCMetrics) end(s *grpcSeries, err error, d time.Duration) {
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	code := st.Code()
	if int(code) < len(s.handled) {
		counter(&s.handled[code], m.handled, s.labels[0], s.labels[1], s.labels[2], code.String()).Inc()
	} else {
		m.handled.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], code.String()).Inc()
	}
	h := s.handling.Load()
	if h == nil {
		o := m.handling.WithLabelValues(s.labels...)
		s.handling.Store(&o)
		h = &o
	}
	(*h).Observe(d.Seconds())
}

// UnaryServerInterceptor counts unary calls.
func (m *GRPCMetrics) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		s := m.unarySeries(info.FullMethod)
		m.begin(s)
		m.received1(s)
		resp, err := handler(ctx, req)
		if err == nil {
			m.sent1(s)
		}
		m.end(s, err, time.Since(start))
		return resp, err
	}
}

// StreamServerInterceptor counts streaming calls and their messages.
func (m *GRPCMetrics) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		typ := "bidi_stream" // also a stream that says neither, as the provider counted it
		switch {
		case info.IsClientStream && !info.IsServerStream:
			typ = "client_stream"
		case !info.IsClientStream && info.IsServerStream:
			typ = "server_stream"
		}
		s := m.series(typ, info.FullMethod)
		m.begin(s)
		err := handler(srv, &countedStream{ServerStream: ss, m: m, s: s})
		m.end(s, err, time.Since(start))
		return err
	}
}

// countedStream counts the messages received and sent without error.
type countedStream struct {
	grpc.ServerStream
	m *GRPCMetrics
	s *grpcSeries
}

func (c *countedStream) SendMsg(msg any) error {
	err := c.ServerStream.SendMsg(msg)
	if err == nil {
		c.m.sent1(c.s)
	}
	return err
}

func (c *countedStream) RecvMsg(msg any) error {
	err := c.ServerStream.RecvMsg(msg)
	if err == nil {
		c.m.received1(c.s)
	}
	return err
}
