package replicas

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// register is one operation of a history over LLM settings records used as
// registers: a PATCH writing max_tokens, or a GET reading it.
type register struct {
	id    string
	write bool
	value int
}

// registers is porcupine's model of those records, checked per record.
var registers = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byID := map[string][]porcupine.Operation{}
		for _, op := range history {
			id := op.Input.(register).id
			byID[id] = append(byID[id], op)
		}
		var out [][]porcupine.Operation
		for _, ops := range byID {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		in := input.(register)
		if in.write {
			return true, in.value
		}
		return output.(int) == state.(int), state
	},
	Equal: func(a, b any) bool { return a == b },
	DescribeOperation: func(input, output any) string {
		in := input.(register)
		if in.write {
			return fmt.Sprintf("PATCH %s max_tokens=%d", in.id, in.value)
		}
		return fmt.Sprintf("GET %s -> %v", in.id, output)
	},
}

// linearizableHistory runs PATCHes and GETs of a few records from clients
// spread over the replicas (fn runs meanwhile, e.g. a leader stop) and checks
// the history with porcupine: no replica answers a read that no order of the
// acknowledged writes allows (a stale read from a cache, a lost write).
// Requests that did not succeed (503 during an election) are left out when
// they are reads; a write that was not acknowledged may or may not have
// happened, which porcupine models as an operation that returns at the end.
func linearizableHistory(t *testing.T, rs []*replica, token string, during func()) {
	t.Helper()
	var ids []string
	for i := range 3 {
		a := rs[0].call(t, "POST", "/api/v1/llm-settings", token,
			fmt.Sprintf(`{"data":{"type":"llm-settings","attributes":{"model_name":"reg-%d","max_tokens":0}}}`, i))
		if a.status != http.StatusCreated {
			t.Fatalf("create: %d %s", a.status, a.body)
		}
		ids = append(ids, idOf(t, a))
	}
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		next    int
	)
	start := time.Now()
	var wg sync.WaitGroup
	var openWrites []porcupine.Operation
	for client := range 6 {
		r := rs[client%len(rs)]
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(client), 11))
			for range 60 {
				op := register{id: ids[rnd.IntN(len(ids))], write: rnd.IntN(3) == 0}
				if op.write {
					mu.Lock()
					next++
					op.value = next
					mu.Unlock()
				}
				call := time.Since(start).Nanoseconds()
				var a answer
				if op.write {
					a = r.call(t, "PATCH", "/api/v1/llm-settings/"+op.id, token, fmt.Sprintf(`{"data":{"attributes":{"max_tokens":%d}}}`, op.value))
				} else {
					a = r.call(t, "GET", "/api/v1/llm-settings/"+op.id, token, "")
				}
				ret := time.Since(start).Nanoseconds()
				out := 0
				switch {
				case a.status == http.StatusOK && !op.write:
					var doc struct {
						Data struct {
							Attributes struct {
								MaxTokens int `json:"max_tokens"`
							} `json:"attributes"`
						} `json:"data"`
					}
					if err := json.Unmarshal([]byte(a.body), &doc); err != nil {
						t.Errorf("GET answer %s: %v", a.body, err)
						return
					}
					out = doc.Data.Attributes.MaxTokens
				case a.status == http.StatusOK:
				case a.status == http.StatusServiceUnavailable && op.write:
					// Maybe applied: it stays open until the end.
					mu.Lock()
					openWrites = append(openWrites, porcupine.Operation{ClientId: 100 + len(openWrites), Input: op, Call: call})
					mu.Unlock()
					continue
				case a.status == http.StatusServiceUnavailable:
					continue
				default:
					t.Errorf("%+v: %d %s", op, a.status, a.body)
					return
				}
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: client, Input: op, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	if during != nil {
		during()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	end := time.Since(start).Nanoseconds()
	for _, op := range openWrites {
		op.Output, op.Return = 0, end
		history = append(history, op)
	}
	res, _ := porcupine.CheckOperationsVerbose(registers, history, time.Minute)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations over %d replicas: %v (not linearizable)", len(history), len(rs), res)
	}
	t.Logf("%d operations (%d writes unacknowledged) linearizable", len(history), len(openWrites))
}
