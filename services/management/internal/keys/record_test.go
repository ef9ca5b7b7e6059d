package keys

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// TestRecordJSON: the record written by hand reads byte for byte as
// encoding/json writes the map it stands for.
func TestRecordJSON(t *testing.T) {
	at := time.Date(2026, 11, 28, 4, 5, 6, 789, time.UTC)
	for _, k := range []store.IssuedKey{
		{Hash: "h", Created: at, Updated: at},
		{Hash: "h", Alias: "ana", APIs: []string{"b", "a", "b"}, Policies: []string{"gold", "silver"}, Created: at, Updated: at.Add(time.Hour)},
		{Hash: "h", Alias: `q"uote\ <b>&é` + "\n\x01", APIs: []string{"<x>"}, Policies: []string{"p&q"}, Created: at.In(time.FixedZone("x", 3600)), Updated: at},
	} {
		rights := map[string]map[string]string{}
		for _, a := range k.APIs {
			rights[a] = map[string]string{"api_id": a}
		}
		pols := k.Policies
		if pols == nil {
			pols = []string{}
		}
		want, _ := json.Marshal(map[string]any{
			"alias": k.Alias, "apply_policies": pols, "access_rights": rights,
			"date_created": k.Created.Format(time.RFC3339Nano), "last_updated": k.Updated.Format(time.RFC3339Nano),
		})
		if got := recordJSON(k); string(got) != string(want) {
			t.Errorf("recordJSON:\n%s\nencoding/json:\n%s", got, want)
		}
	}
}

func BenchmarkRecordJSON(b *testing.B) {
	at := time.Now()
	k := store.IssuedKey{Hash: "h", Alias: "alias-1", APIs: []string{"a0000000000000000000000000000001"}, Created: at, Updated: at}
	b.ReportAllocs()
	for b.Loop() {
		recordJSON(k)
	}
}
