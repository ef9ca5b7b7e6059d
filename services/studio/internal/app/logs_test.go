package app

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/binproc"
)

// TestLogsNeverHoldSecrets runs the real binary with a bootstrap secret,
// sends keys in headers (REST and gRPC) and secrets in bodies, and reads
// every line it logged: one line per REST request with method, route
// pattern, status, duration and trace id, and no secret anywhere.
func TestLogsNeverHoldSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"studio"})
	if err != nil {
		t.Fatal(err)
	}
	secret := binproc.RandomToken(t)
	p := binproc.Start(t, bins["studio"], []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--db", filepath.Join(t.TempDir(), "studio.db"), "--bootstrap-token", secret}, nil, nil, "")
	base := "http://" + p.HTTPAddr

	send := func(method, path, auth, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		return res
	}
	wrong, inBody := binproc.RandomToken(t), binproc.RandomToken(t)
	var user struct {
		Data struct {
			Attributes struct {
				APIKey string `json:"api_key"`
			} `json:"attributes"`
		} `json:"data"`
	}
	res, err := http.DefaultClient.Do(func() *http.Request {
		req, _ := http.NewRequest("POST", base+"/api/v1/users", strings.NewReader(`{"data":{"type":"users","attributes":{"email":"a@example.com","name":"A","is_admin":true}}}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		return req
	}())
	if err != nil {
		t.Fatal(err)
	}
	decodeJSON(t, res, &user)
	key := user.Data.Attributes.APIKey
	if key == "" {
		t.Fatal("no api_key in the create answer")
	}
	requests := []struct{ method, path, auth, body string }{
		{"GET", "/api/v1/llm-settings", "Bearer " + key, ""},
		{"POST", "/api/v1/llm-settings", "Bearer " + secret, llm(`{"model_name":"m","system_prompt":"` + inBody + `"}`)},
		{"GET", "/api/v1/llm-settings/1", "Bearer " + wrong, ""},
		{"POST", "/api/v1/llm-settings", "Bearer " + secret, `{"data":` + inBody},
		{"GET", "/api/v1/" + inBody, "Bearer " + secret, ""},
	}
	for _, r := range requests {
		send(r.method, r.path, r.auth, r.body)
	}
	conn, err := grpc.NewClient("passthrough:///"+p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+wrong)
	studiov1.NewStudioServiceClient(conn).GetLlmSettings(ctx, &studiov1.GetLlmSettingsRequest{})
	p.Stop(t, 10*time.Second)

	logs := p.Output()
	for name, s := range map[string]string{"bootstrap secret": secret, "created key": key, "unknown key": wrong, "body secret": inBody} {
		if strings.Contains(logs, s) {
			t.Errorf("the %s appears in the logs:\n%s", name, logs)
		}
	}
	line := regexp.MustCompile(`(?m)^.*msg=http .*$`)
	lines := line.FindAllString(logs, -1)
	if len(lines) != 1+len(requests) {
		t.Errorf("%d request lines for %d requests:\n%s", len(lines), 1+len(requests), logs)
	}
	for _, l := range lines {
		for _, attr := range []string{"method=", "route=", "status=", "duration=", "trace_id="} {
			if !strings.Contains(l, attr) {
				t.Errorf("request line without %s: %s", attr, l)
			}
		}
	}
	if !strings.Contains(logs, `route=/api/v1/llm-settings/{id} status=401`) {
		t.Errorf("no line names the route pattern of GET /api/v1/llm-settings/1:\n%s", logs)
	}
}

func decodeJSON(t *testing.T, res *http.Response, v any) {
	t.Helper()
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("%d: %v", res.StatusCode, err)
	}
}
