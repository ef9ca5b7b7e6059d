package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStoresLinkNoServiceLayer holds the three services' stores to being
// storage only: none links the converter, the gateways package, the REST
// facade or grpc-gateway's runtime, the gRPC server's service wiring or the
// tracing exporter (OTLP). A
// store names the objects it creates through the audit log's leaf package
// (auditctx), which imports the standard library alone.
func TestStoresLinkNoServiceLayer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	const mod = "github.com/gatehouse/gatehouse/"
	stores := []string{
		mod + "services/management/internal/store",
		mod + "services/studio/internal/store",
		mod + "services/portal/internal/store",
	}
	forbidden := []string{
		mod + "services/management/internal/convert",
		mod + "services/management/internal/gateways",
		mod + "pkg/restfacade",
		mod + "pkg/grpcserver",
		mod + "pkg/tracing",
		mod + "pkg/audit", // the log itself; auditctx is allowed
		"go.opentelemetry.io/otel/exporters/",
		"github.com/grpc-ecosystem/grpc-gateway/", // the REST gateway's runtime, linked by the generated API packages
	}
	for _, s := range stores {
		out, err := exec.Command("go", "list", "-deps", s).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", s, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f) {
					t.Errorf("%s links %s", strings.TrimPrefix(s, mod), dep)
				}
			}
		}
	}
}
