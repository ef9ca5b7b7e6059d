package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

// TestAcknowledgedWritesSurviveSIGKILL runs the real binary, has 32 clients
// create, patch and delete records as fast as it answers (so commits are
// shared), and kills it with SIGKILL while requests are in flight, right
// after an acknowledgement. Every acknowledged write must be in the file
// after the kill, and the file must pass bbolt's consistency check.
func TestAcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary")
	}
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"studio"})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "studio.db")
	p := binproc.Start(t, bins["studio"], []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0", "--db", db,
		"--bootstrap-token", token}, os.Environ(), nil, "")
	base := "http://" + p.HTTPAddr + "/api/v1/llm-settings"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	send := func(method, url, body string) (int, string, error) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}

	// What the clients were told, per record id: its model name after the
	// last acknowledged create or PATCH, or "" once its DELETE was
	// acknowledged; and the state a request in flight would leave (it may
	// have committed without its answer arriving).
	var mu sync.Mutex
	acked, inFlight := map[uint32]string{}, map[uint32]string{}
	expect := func(id uint32, name string) {
		mu.Lock()
		defer mu.Unlock()
		inFlight[id] = name
	}
	const killAfter = 600 // acknowledgements
	var total int
	killed := make(chan struct{})
	var once sync.Once
	kill := func() {
		once.Do(func() {
			p.Cmd.Process.Kill() // requests of the other clients are in flight
			close(killed)
		})
	}
	ack := func(id uint32, name string) {
		mu.Lock()
		defer mu.Unlock()
		acked[id] = name
		if total++; total == killAfter {
			kill()
		}
	}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-killed:
					return
				default:
				}
				name := fmt.Sprintf("m-%d-%d", c, i)
				code, body, err := send("POST", base, `{"data":{"type":"llm-settings","attributes":{"model_name":"`+name+`"}}}`)
				if err != nil || code != http.StatusCreated {
					return // the process is gone
				}
				var created struct {
					Data struct{ ID string } `json:"data"`
				}
				json.Unmarshal([]byte(body), &created)
				n, _ := strconv.ParseUint(created.Data.ID, 10, 32)
				id := uint32(n)
				ack(id, name)
				switch i % 3 {
				case 1:
					name += "-patched"
					expect(id, name)
					if code, _, err := send("PATCH", fmt.Sprint(base, "/", id), `{"data":{"attributes":{"model_name":"`+name+`"}}}`); err != nil || code != http.StatusOK {
						return
					}
					ack(id, name)
				case 2:
					expect(id, "")
					if code, _, err := send("DELETE", fmt.Sprint(base, "/", id), ""); err != nil || code != http.StatusNoContent {
						return
					}
					ack(id, "")
				}
			}
		})
	}
	wg.Wait()
	kill() // in case every client stopped on an error first
	if total < killAfter {
		t.Errorf("the clients stopped after %d acknowledgements, before the kill", total)
	}

	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Check(); err != nil {
		t.Fatalf("the file after SIGKILL: %v", err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	for id, name := range acked {
		rec, err := st.GetLlmSettings(context.Background(), id)
		if errors.Is(err, store.ErrNotFound) {
			rec.ModelName = ""
		} else if err != nil {
			t.Fatal(err)
		}
		if next, ok := inFlight[id]; rec.ModelName != name && !(ok && rec.ModelName == next) {
			t.Errorf("record %d: %q; want %q, acknowledged before the kill", id, rec.ModelName, name)
		}
	}
	t.Logf("%d acknowledged writes on %d records, all there after SIGKILL", total, len(acked))
}
