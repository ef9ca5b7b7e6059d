package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

const token = "test-bootstrap-token-0123456789abcdef"

// service is a studio running on loopback for one test.
type service struct {
	base   string // http://host:port
	client studiov1.StudioServiceClient
	stop   func()
}

// start runs the studio on 127.0.0.1:0 with a store at db.
func start(tb testing.TB, db string) *service {
	tb.Helper()
	in := servertest.Start(tb, Serve, db, token)
	return &service{base: in.Base, client: studiov1.NewStudioServiceClient(in.Conn), stop: in.Stop}
}

func startTemp(tb testing.TB) *service {
	return start(tb, filepath.Join(tb.TempDir(), "studio.db"))
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends a REST request with the bootstrap admin key unless auth is given.
func (s *service) do(tb testing.TB, method, path, body string, auth ...string) response {
	tb.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if len(auth) > 0 {
		req.Header.Del("Authorization")
		if auth[0] != "" {
			req.Header.Set("Authorization", auth[0])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, string(b)}
}

func errBody(status int, detail string) string {
	return fmt.Sprintf(`{"errors":[{"title":%q,"detail":%q}]}`, http.StatusText(status), detail)
}

func (r response) expect(tb testing.TB, what string, status int, body string) {
	tb.Helper()
	if r.status != status || (body != "" && r.body != body) {
		tb.Fatalf("%s: got %d %s\nwant %d %s", what, r.status, r.body, status, body)
	}
}

const full = `{"model_name":"gpt","max_length":2048,"max_tokens":512,"min_length":1,"seed":42,"top_k":40,"temperature":0.7,"top_p":0.9,"repetition_penalty":1.1,"stop_words":["END"],"metadata":{"n":{"on":true},"team":"ai"},"system_prompt":"Be brief."}`

func llm(attrs string) string { return `{"data":{"type":"llm-settings","attributes":` + attrs + `}}` }

func record(id, attrs string) string {
	return `{"data":{"type":"llm-settings","id":"` + id + `","attributes":` + attrs + `}}`
}

func TestRESTLifecycle(t *testing.T) {
	s := startTemp(t)
	r := s.do(t, "POST", "/api/v1/llm-settings", llm(full))
	r.expect(t, "create", 201, record("1", full))
	if loc := r.header.Get("Location"); loc != "/api/v1/llm-settings/1" {
		t.Errorf("Location %q, want /api/v1/llm-settings/1", loc)
	}
	for h := range r.header {
		if strings.HasPrefix(strings.ToLower(h), "grpc-") || strings.EqualFold(h, "x-http-code") {
			t.Errorf("response leaks the header %s", h)
		}
	}
	s.do(t, "GET", "/api/v1/llm-settings/1", "").expect(t, "get", 200, record("1", full))
	patched := strings.Replace(full, `"seed":42`, `"seed":7`, 1)
	s.do(t, "PATCH", "/api/v1/llm-settings/1", llm(`{"seed":7}`)).expect(t, "patch", 200, record("1", patched))

	r = s.do(t, "DELETE", "/api/v1/llm-settings/1", "")
	r.expect(t, "delete", 204, "")
	if r.body != "" || r.header.Get("Content-Type") != "" {
		t.Errorf("204 carries a body %q or a content type %q", r.body, r.header.Get("Content-Type"))
	}
	notFound := errBody(404, "LLM Settings not found")
	s.do(t, "GET", "/api/v1/llm-settings/1", "").expect(t, "get deleted", 404, notFound)
	s.do(t, "DELETE", "/api/v1/llm-settings/1", "").expect(t, "delete twice", 404, notFound)
	s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"next"}`)).expect(t, "create after delete", 201, "")
	s.do(t, "GET", "/api/v1/llm-settings/2", "").expect(t, "the next id is 2", 200, "")
}

func TestRESTMinimalRecordHasAllAttributes(t *testing.T) {
	s := startTemp(t)
	r := s.do(t, "POST", "/api/v1/llm-settings", llm(`{"model_name":"m","unknown":1}`))
	want := `{"model_name":"m","max_length":0,"max_tokens":0,"min_length":0,"seed":0,"top_k":0,"temperature":0,"top_p":0,"repetition_penalty":0,"stop_words":[],"metadata":{},"system_prompt":""}`
	r.expect(t, "minimal create", 201, record("1", want))
}

func TestRESTErrors(t *testing.T) {
	s := startTemp(t)
	s.do(t, "POST", "/api/v1/llm-settings", llm(full)).expect(t, "create", 201, "")
	unauthorized := errBody(401, "missing or invalid API key")
	badID := errBody(400, "Invalid LLM Settings ID")
	tests := []struct {
		name, method, path, body string
		auth                     []string
		status                   int
		want                     string // exact body, or a substring when it starts with "~"
	}{
		{"no header", "GET", "/api/v1/llm-settings", "", []string{""}, 401, unauthorized},
		{"unknown key", "DELETE", "/api/v1/llm-settings/1", "", []string{"Bearer nope"}, 401, unauthorized},
		{"no scheme", "GET", "/api/v1/llm-settings", "", []string{token}, 401, unauthorized},
		{"extra word", "GET", "/api/v1/llm-settings", "", []string{"Bearer " + token + " x"}, 401, unauthorized},
		{"scheme case", "GET", "/api/v1/llm-settings", "", []string{"bEaReR " + token}, 200, ""},
		{"id letters", "DELETE", "/api/v1/llm-settings/abc", "", nil, 400, badID},
		{"id zero", "DELETE", "/api/v1/llm-settings/0", "", nil, 400, badID},
		{"id over uint32", "GET", "/api/v1/llm-settings/4294967296", "", nil, 400, badID},
		{"id signed", "PATCH", "/api/v1/llm-settings/%2B1", llm(`{"seed":1}`), nil, 400, badID},
		{"id unknown", "DELETE", "/api/v1/llm-settings/4294967295", "", nil, 404, errBody(404, "LLM Settings not found")},
		{"model_name missing", "POST", "/api/v1/llm-settings", llm(`{"seed":1}`), nil, 400, "~model_name"},
		{"temperature", "POST", "/api/v1/llm-settings", llm(`{"model_name":"m","temperature":2.5}`), nil, 400, "~temperature"},
		{"top_p", "PATCH", "/api/v1/llm-settings/1", llm(`{"top_p":-0.1}`), nil, 400, "~top_p"},
		{"top_k", "POST", "/api/v1/llm-settings", llm(`{"model_name":"m","top_k":-1}`), nil, 400, "~top_k"},
		{"wrong type", "POST", "/api/v1/llm-settings", llm(`{"model_name":"m","max_tokens":"many"}`), nil, 400, "~max_tokens"},
		{"stop_words", "POST", "/api/v1/llm-settings", llm(`{"model_name":"m","stop_words":[1]}`), nil, 400, "~stop_words"},
		{"not json", "POST", "/api/v1/llm-settings", `{"data":`, nil, 400, `~"title":"Bad Request"`},
		{"not json, no key", "POST", "/api/v1/llm-settings", `{"data":`, []string{""}, 401, unauthorized},
		{"not json, not admin", "PATCH", "/api/v1/llm-settings/1", `{"data":`, []string{"Bearer nope"}, 401, unauthorized},
		{"page zero", "GET", "/api/v1/llm-settings?page=0", "", nil, 400, errBody(400, "Invalid page number")},
		{"page text", "GET", "/api/v1/llm-settings?page=x", "", nil, 400, errBody(400, "Invalid page number")},
		{"unknown path", "GET", "/api/v1/nothing", "", nil, 404, errBody(404, "Not Found")},
		{"wrong method", "PUT", "/api/v1/llm-settings", "{}", nil, 405, errBody(405, "Method Not Allowed")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, tt.method, tt.path, tt.body, tt.auth...)
			if sub, ok := strings.CutPrefix(tt.want, "~"); ok {
				if r.status != tt.status || !strings.Contains(r.body, sub) {
					t.Fatalf("got %d %s, want %d containing %s", r.status, r.body, tt.status, sub)
				}
				return
			}
			r.expect(t, tt.name, tt.status, tt.want)
		})
	}
	if got := s.do(t, "GET", "/api/v1/llm-settings/1", "").body; got != record("1", full) {
		t.Errorf("refused writes changed the record: %s", got)
	}
	if allow := s.do(t, "PUT", "/api/v1/llm-settings", "{}").header.Get("Allow"); allow != "GET, HEAD, POST" {
		t.Errorf("Allow %q, want GET, HEAD, POST", allow)
	}
}

func TestRESTOversizeBody(t *testing.T) {
	s := startTemp(t)
	body := `{"data":"` + strings.Repeat("a", 16<<20) + `"}`
	s.do(t, "POST", "/api/v1/llm-settings", body).expect(t, "17 MiB body", 413, errBody(413, "request body too large"))
}

func TestRESTPaging(t *testing.T) {
	s := startTemp(t)
	for i := range 5 {
		s.do(t, "POST", "/api/v1/llm-settings", llm(fmt.Sprintf(`{"model_name":"m%d"}`, i))).expect(t, "create", 201, "")
	}
	s.do(t, "DELETE", "/api/v1/llm-settings/2", "").expect(t, "delete", 204, "")
	tests := []struct {
		query        string
		ids          []string
		count, pages string
	}{
		{"", []string{"1", "3", "4", "5"}, "4", "1"},
		{"?page=2&page_size=3", []string{"5"}, "4", "2"},
		{"?page=1&page_size=0", []string{"1"}, "4", "4"},
		{"?page_size=1000", []string{"1", "3", "4", "5"}, "4", "1"},
		{"?page=9", nil, "4", "1"},
		// REST keeps reading the query text itself: decimal only, and a
		// page_size that is not a number means the default.
		{"?page=02&page_size=x", nil, "4", "1"},
		{"?page_size=0x2", []string{"1", "3", "4", "5"}, "4", "1"},
		{"?page=1&page_size=99999999999999999999", []string{"1", "3", "4", "5"}, "4", "1"},
		{"?page=&page_size=", []string{"1", "3", "4", "5"}, "4", "1"},
	}
	for _, q := range []string{"?page=0", "?page=-1", "?page=x", "?page=0x1", "?page=1.5", "?page=99999999999999999999"} {
		s.do(t, "GET", "/api/v1/llm-settings"+q, "").expect(t, q, 400, errBody(400, "Invalid page number"))
	}
	for _, tt := range tests {
		r := s.do(t, "GET", "/api/v1/llm-settings"+tt.query, "")
		var list struct {
			Data []struct{ ID string }
		}
		if err := json.Unmarshal([]byte(r.body), &list); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", tt.query, r.status, r.body)
		}
		var ids []string
		for _, d := range list.Data {
			ids = append(ids, d.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tt.ids) || r.header.Get("X-Total-Count") != tt.count || r.header.Get("X-Total-Pages") != tt.pages {
			t.Errorf("%s: ids %v count %s pages %s; want %v %s %s", tt.query, ids, r.header.Get("X-Total-Count"), r.header.Get("X-Total-Pages"), tt.ids, tt.count, tt.pages)
		}
	}
}

func TestRESTUsers(t *testing.T) {
	s := startTemp(t)
	r := s.do(t, "POST", "/api/v1/users", `{"data":{"type":"users","attributes":{"email":"u@x","name":"U","is_admin":false}}}`)
	var created struct {
		Data struct {
			ID         string
			Attributes struct {
				APIKey string `json:"api_key"`
			}
		}
	}
	if err := json.Unmarshal([]byte(r.body), &created); err != nil || r.status != 201 || created.Data.Attributes.APIKey == "" {
		t.Fatalf("create user: %d %s", r.status, r.body)
	}
	key := created.Data.Attributes.APIKey
	s.do(t, "GET", "/api/v1/llm-settings", "", "Bearer "+key).expect(t, "non-admin", 403, errBody(403, "admin role required"))
	if list := s.do(t, "GET", "/api/v1/users", ""); strings.Contains(list.body, key) || strings.Contains(list.body, "api_key") {
		t.Errorf("the user list shows keys: %s", list.body)
	}
	s.do(t, "DELETE", "/api/v1/users/"+created.Data.ID, "").expect(t, "delete user", 204, "")
	s.do(t, "GET", "/api/v1/llm-settings", "", "Bearer "+key).expect(t, "deleted user's key", 401, errBody(401, "missing or invalid API key"))
	s.do(t, "POST", "/api/v1/users", `{"data":{"attributes":{"name":"no email"}}}`).expect(t, "no email", 400, errBody(400, "email is required"))
}

func TestGRPCPaging(t *testing.T) {
	s := startTemp(t)
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	for i := range 3 {
		name := fmt.Sprint("m", i)
		if _, err := s.client.CreateLlmSettings(admin, &studiov1.CreateLlmSettingsRequest{Data: &studiov1.LlmSettingsInput{Attributes: &studiov1.LlmSettingsChanges{ModelName: &name}}}); err != nil {
			t.Fatal(err)
		}
	}
	// What grpcurl -d '{"page":2,"page_size":2}' sends.
	var req studiov1.ListLlmSettingsRequest
	if err := protojson.Unmarshal([]byte(`{"page":2,"page_size":2}`), &req); err != nil {
		t.Fatalf("integer paging fields in JSON: %v", err)
	}
	list, err := s.client.ListLlmSettings(admin, &req)
	if err != nil || len(list.GetData()) != 1 || list.GetData()[0].GetId() != "3" {
		t.Errorf("page 2 of 2: %v, %v; want record 3", list, err)
	}
	zero := int64(0)
	_, err = s.client.ListLlmSettings(admin, &studiov1.ListLlmSettingsRequest{Page: &zero})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != "Invalid page number" {
		t.Errorf("page 0: %v; want InvalidArgument Invalid page number", err)
	}
}

func TestGRPCSameMessages(t *testing.T) {
	s := startTemp(t)
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	name := "grpc"
	created, err := s.client.CreateLlmSettings(admin, &studiov1.CreateLlmSettingsRequest{Data: &studiov1.LlmSettingsInput{Attributes: &studiov1.LlmSettingsChanges{ModelName: &name}}})
	if err != nil || created.GetData().GetId() != "1" || created.GetData().GetAttributes().GetModelName() != "grpc" {
		t.Fatalf("create: %v, %v", created, err)
	}
	if _, err := s.client.DeleteLlmSettings(admin, &studiov1.DeleteLlmSettingsRequest{Id: "1"}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	tests := []struct {
		name string
		ctx  context.Context
		id   string
		code codes.Code
		msg  string
	}{
		{"no credentials", context.Background(), "1", codes.Unauthenticated, "missing or invalid API key"},
		{"bad id", admin, "x", codes.InvalidArgument, "Invalid LLM Settings ID"},
		{"gone", admin, "1", codes.NotFound, "LLM Settings not found"},
	}
	for _, tt := range tests {
		_, err := s.client.DeleteLlmSettings(tt.ctx, &studiov1.DeleteLlmSettingsRequest{Id: tt.id})
		if st := status.Convert(err); st.Code() != tt.code || st.Message() != tt.msg {
			t.Errorf("%s: %v %q, want %v %q", tt.name, st.Code(), st.Message(), tt.code, tt.msg)
		}
	}
}

func TestRestartKeepsData(t *testing.T) {
	db := filepath.Join(t.TempDir(), "studio.db")
	s := start(t, db)
	s.do(t, "POST", "/api/v1/llm-settings", llm(full)).expect(t, "create", 201, "")
	s.do(t, "POST", "/api/v1/llm-settings", llm(full)).expect(t, "create", 201, "")
	s.do(t, "DELETE", "/api/v1/llm-settings/2", "").expect(t, "delete", 204, "")
	s.stop()
	s = start(t, db)
	s.do(t, "GET", "/api/v1/llm-settings/1", "").expect(t, "after restart", 200, record("1", full))
	s.do(t, "POST", "/api/v1/llm-settings", llm(full)).expect(t, "create after restart", 201, record("3", full))
}

func BenchmarkDeleteREST(b *testing.B) {
	s := startTemp(b)
	for range b.N {
		s.do(b, "POST", "/api/v1/llm-settings", llm(full))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if r := s.do(b, "DELETE", fmt.Sprintf("/api/v1/llm-settings/%d", i+1), ""); r.status != 204 {
			b.Fatalf("delete: %d %s", r.status, r.body)
		}
	}
}

func BenchmarkDeleteGRPC(b *testing.B) {
	s := startTemp(b)
	admin := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
	name := "bench"
	for range b.N {
		if _, err := s.client.CreateLlmSettings(admin, &studiov1.CreateLlmSettingsRequest{Data: &studiov1.LlmSettingsInput{Attributes: &studiov1.LlmSettingsChanges{ModelName: &name}}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.client.DeleteLlmSettings(admin, &studiov1.DeleteLlmSettingsRequest{Id: fmt.Sprint(i + 1)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetREST(b *testing.B) {
	s := startTemp(b)
	s.do(b, "POST", "/api/v1/llm-settings", llm(full))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if r := s.do(b, "GET", "/api/v1/llm-settings/1", ""); r.status != 200 {
			b.Fatalf("get: %d", r.status)
		}
	}
}
