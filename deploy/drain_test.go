package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// studioBinary is the studio as the Dockerfile builds it (builtBinaries),
// for the tests that run it as an operator would.
func studioBinary() (string, error) {
	bins, err := builtBinaries()
	if err == nil && bins["studio"] == "" {
		err = errors.New("the studio was not built")
	}
	return bins["studio"], err
}

func startStudio(t *testing.T, db, token string, args ...string) *binproc.Process {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the studio binary; skipped with -short")
	}
	bin, err := studioBinary()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--db", db, "--bootstrap-token", token}, args...)
	return binproc.Start(t, bin, args, distrolessEnv(), nil, filepath.Dir(db))
}

// TestDrainOnSIGTERM sends REST and gRPC load through a SIGTERM, as a pod
// behind a Service sees it in a rolling update. The clients act as a load
// balancer does: they send new requests only while the instance says it is
// ready (/readyz, gRPC health, polled every 50 ms). On SIGTERM both must turn
// NOT_SERVING at once while requests keep being served for --shutdown-delay;
// then the listeners close and what is in flight drains — a slow upload that
// began before the signal and ends after the listeners closed included. Not
// one request may be refused or cut.
func TestDrainOnSIGTERM(t *testing.T) {
	const delay = 2 * time.Second
	token := binproc.RandomToken(t)
	p := startStudio(t, filepath.Join(t.TempDir(), "studio.db"), token, "--shutdown-delay", delay.String())
	base := "http://" + p.HTTPAddr
	conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client, health := studiov1.NewStudioServiceClient(conn), healthpb.NewHealthClient(conn)

	var ready atomic.Bool
	ready.Store(true)
	var notReadyAt atomic.Int64 // unix nanos when the balancer saw not ready
	balancerDone := make(chan struct{})
	go func() { // the balancer: polls readiness on both ports
		defer close(balancerDone)
		for ready.Load() {
			time.Sleep(50 * time.Millisecond)
			res, err := http.Get(base + "/readyz")
			if err == nil {
				res.Body.Close()
			}
			hc, herr := health.Check(context.Background(), &healthpb.HealthCheckRequest{Service: studiov1.StudioService_ServiceDesc.ServiceName})
			if err != nil || herr != nil {
				t.Errorf("a readiness probe failed before readiness turned: REST %v, gRPC %v", err, herr)
			}
			if err == nil && res.StatusCode == http.StatusServiceUnavailable && herr == nil && hc.Status == healthpb.HealthCheckResponse_NOT_SERVING {
				notReadyAt.Store(time.Now().UnixNano())
				ready.Store(false)
			}
		}
	}()

	var sent, failed atomic.Int64
	var failures sync.Map
	fail := func(what string, err error) {
		failed.Add(1)
		failures.Store(fmt.Sprintf("%s: %v", what, err), true)
	}
	httpClient := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { // REST writers
			for n := 0; ready.Load(); n++ {
				sent.Add(1)
				req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/llm-settings",
					strings.NewReader(fmt.Sprintf(`{"data":{"type":"llm-settings","attributes":{"model_name":"m-%d-%d"}}}`, i, n)))
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := httpClient.Do(req)
				if err != nil {
					fail("REST", err)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusCreated {
					fail("REST", fmt.Errorf("status %d", res.StatusCode))
				}
			}
		})
	}
	for i := range 4 {
		wg.Go(func() { // gRPC writers
			ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
			for n := 0; ready.Load(); n++ {
				sent.Add(1)
				_, err := client.CreateLlmSettings(ctx, &studiov1.CreateLlmSettingsRequest{Data: &studiov1.LlmSettingsInput{
					Attributes: &studiov1.LlmSettingsChanges{ModelName: proto.String(fmt.Sprintf("g-%d-%d", i, n))}}})
				if err != nil {
					fail("gRPC", err)
				}
			}
		})
	}
	// A slow upload that began before the signal and ends after the
	// listeners closed: drained, not cut.
	slow := make(chan error, 1)
	go func() {
		pr, pw := io.Pipe()
		go func() {
			body := `{"data":{"type":"llm-settings","attributes":{"model_name":"slow"}}}`
			for i := range len(body) {
				pw.Write([]byte{body[i]})
				time.Sleep((delay + time.Second) / time.Duration(len(body)))
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/llm-settings", pr)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := httpClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		slow <- err
	}()

	time.Sleep(500 * time.Millisecond)
	signalled := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-balancerDone
	wg.Wait()
	if err := <-slow; err != nil {
		t.Errorf("the slow upload across the listener close: %v", err)
	}
	p.Wait(t, delay+15*time.Second)
	took := time.Since(signalled)
	// "At once" is pkg/server's TestShutdownDelay (within 200 ms, in
	// process); here, on a loaded machine, the bound is the delay itself.
	if turned := time.Unix(0, notReadyAt.Load()).Sub(signalled); turned > delay {
		t.Errorf("the balancer saw readiness turn %v after SIGTERM, after the %v delay", turned, delay)
	}
	failures.Range(func(k, _ any) bool { t.Errorf("refused or cut: %s", k); return true })
	t.Logf("%d requests, %d refused or cut; NOT_SERVING %v after SIGTERM; exit %v after it",
		sent.Load(), failed.Load(), time.Unix(0, notReadyAt.Load()).Sub(signalled).Round(time.Millisecond), took.Round(time.Millisecond))
	if sent.Load() < 20 {
		t.Errorf("only %d requests sent: not a load", sent.Load())
	}
	if !strings.Contains(p.Output(), "shutting down: /readyz and gRPC health NOT_SERVING") {
		t.Errorf("no shutdown-delay line in the log:\n%s", p.Output())
	}
}
