package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gatehouse/gatehouse/pkg/bodylimit"
	"github.com/gatehouse/gatehouse/pkg/inflight"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// startAttacked builds and runs the studio binary on a fresh store and
// returns the attack harness aimed at it: CreateLlmSettings, whose
// data.attributes.metadata (fields 1, 2, 11) is a free-form Struct.
func startAttacked(t *testing.T, env ...string) *servertest.Attack {
	t.Helper()
	return servertest.StartAttack(t, filepath.Join("..", "..", "..", ".."), "studio", token,
		servertest.Attack{Auth: "Bearer " + token, Method: "/gatehouse.studio.v1.StudioService/CreateLlmSettings", Nest: []protowire.Number{1, 2, 11}}, env...)
}

// TestHostileBinary reproduces issue 18's rows against the real binary,
// in seconds: 16 MiB gRPC messages (gzip-compressed and plain) without
// credentials cost no memory and are refused within 1 s; a message over
// its method's limit is ResourceExhausted; an address at its connection cap
// is refused while another is served.
func TestHostileBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and attacks the binary")
	}
	a := startAttacked(t)
	t.Run("unauthenticated gRPC", func(t *testing.T) { a.T = t; a.Unauthenticated(16) })
	t.Run("message over the method's limit", func(t *testing.T) { a.T = t; a.MessageLimit(bodylimit.Small) })
	t.Run("connections per address", func(t *testing.T) { a.T = t; a.ConnsPerIP(64, "/api/v1/llm-settings") })
	t.Run("free-form field on gRPC", func(t *testing.T) { a.T = t; a.FreeFormGRPC("data.attributes.metadata", 16) })
	t.Run("ids of 1 MB", func(t *testing.T) {
		a.T = t
		a.LongIDs(a.Auth, "/gatehouse.studio.v1.StudioService/DeleteLlmSettings", 150, "DELETE", "/api/v1/llm-settings/", 1)
	})
	t.Run("one key holding the byte budget", func(t *testing.T) {
		a.T = t
		other := "Bearer " + userKey(t, a, "other@x", true)
		body := []byte(`{"data":{"type":"llm-settings","attributes":{"model_name":"m"}}}`)
		a.HeldBudget(other, "POST", "/api/v1/llm-settings", body, nil, 20, 1_000_000, 900_000, 20)
	})
	t.Run("streams of a non-admin key on one connection", func(t *testing.T) {
		held := *a
		held.T, held.Auth = t, "Bearer "+userKey(t, a, "held@x", false)
		held.HeldStreams32(a.Auth, nil, 50, 20, 16)
	})
	t.Run("stalled upload", func(t *testing.T) {
		a.T = t
		a.StalledUpload("POST", "/api/v1/llm-settings", 1_000_000, 1000, inflight.FirstProgress+3*time.Second)
	})
	t.Run("free-form field on REST", func(t *testing.T) {
		a.T = t
		body := `{"data":{"type":"llm-settings","attributes":{"model_name":"m","metadata":{"k":[` + strings.Repeat("0,", 500_000) + `0]}}}}`
		a.Refused("POST metadata of 500,000 elements", "POST", "/api/v1/llm-settings", "", []byte(body), 400, "data.attributes.metadata", 16)
	})
}

// userKey creates another user (an admin when admin is set) and returns
// its key.
func userKey(t *testing.T, a *servertest.Attack, email string, admin bool) string {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+a.HTTPAddr+"/api/v1/users",
		strings.NewReader(fmt.Sprintf(`{"data":{"type":"users","attributes":{"email":%q,"name":"Other","is_admin":%v}}}`, email, admin)))
	req.Header.Set("Authorization", a.Auth)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var created struct {
		Data struct {
			Attributes struct {
				APIKey string `json:"api_key"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || created.Data.Attributes.APIKey == "" {
		t.Fatalf("create an admin user: %d %v", res.StatusCode, err)
	}
	return created.Data.Attributes.APIKey
}

// TestHostileLong is make test-hostile's part for the studio: 1,000 held
// streams, and 32 clients sending 1 MiB settings at once.
func TestHostileLong(t *testing.T) {
	servertest.Long(t)
	a := startAttacked(t, servertest.PodEnv...)
	body := `{"data":{"type":"llm-settings","attributes":{"model_name":"m","system_prompt":"` + strings.Repeat("p", bodylimit.Small-200) + `"}}}`
	t.Run("32 bodies of 1 MiB at once", func(t *testing.T) {
		a.T = t
		a.ConcurrentBodies(32, "POST", "/api/v1/llm-settings", []byte(body), servertest.PodLimitMiB)
	})
	t.Run("1,000 held streams", func(t *testing.T) { a.T = t; a.HeldStreams(10, 100, 256) })
}
