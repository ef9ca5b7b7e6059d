package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
)

// TestDecodeV1LlmSettings: the field-by-field reader of version-1 records
// reads every field of the message they were written as, negative numbers
// included, and refuses a truncated record.
func TestDecodeV1LlmSettings(t *testing.T) {
	meta, err := structpb.NewStruct(map[string]any{"team": "a"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Marshal(&studiov1.LlmSettingsAttributes{ModelName: "m", MaxLength: 7, MaxTokens: -3, MinLength: 1,
		Seed: 42, TopK: 5, Temperature: 0.5, TopP: 0.25, RepetitionPenalty: 1.5, StopWords: []string{"a", "b"},
		Metadata: meta, SystemPrompt: "be brief"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeV1LlmSettings(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := LlmSettings{ModelName: "m", MaxLength: 7, MaxTokens: -3, MinLength: 1, Seed: 42, TopK: 5, Temperature: 0.5,
		TopP: 0.25, RepetitionPenalty: 1.5, StopWords: []string{"a", "b"}, Metadata: []byte(`{"team":"a"}`), SystemPrompt: "be brief"}
	got.Metadata = []byte(compactJSON(t, got.Metadata))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decoded %+v\nwant    %+v", got, want)
	}
	if _, err := decodeV1LlmSettings(raw[:len(raw)-3]); err == nil {
		t.Error("a truncated record decoded without an error")
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
