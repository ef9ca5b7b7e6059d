package api

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

// applyChanges sets on attrs every attribute present in ch, then checks the
// result; its error (an *invalidError, 400) names the first field in error.
func applyChanges(attrs *store.LlmSettings, ch *studiov1.LlmSettingsChanges) error {
	if ch != nil {
		if ch.ModelName != nil {
			attrs.ModelName = ch.GetModelName()
		}
		setInt(&attrs.MaxLength, ch.MaxLength)
		setInt(&attrs.MaxTokens, ch.MaxTokens)
		setInt(&attrs.MinLength, ch.MinLength)
		setInt(&attrs.Seed, ch.Seed)
		setInt(&attrs.TopK, ch.TopK)
		setFloat(&attrs.Temperature, ch.Temperature)
		setFloat(&attrs.TopP, ch.TopP)
		setFloat(&attrs.RepetitionPenalty, ch.RepetitionPenalty)
		if ch.StopWords != nil {
			words, ok := stringList(ch.StopWords)
			if !ok {
				return invalid("stop_words must be an array of strings")
			}
			attrs.StopWords = words
		}
		if ch.Metadata != nil {
			raw, err := protojson.Marshal(ch.Metadata)
			if err != nil {
				return invalid("metadata must be an object")
			}
			attrs.Metadata = raw
		}
		if ch.SystemPrompt != nil {
			attrs.SystemPrompt = ch.GetSystemPrompt()
		}
	}
	return validate(attrs)
}

func setInt(dst *int32, v *int32) {
	if v != nil {
		*dst = *v
	}
}

func setFloat(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

func stringList(l *structpb.ListValue) ([]string, bool) {
	out := make([]string, 0, len(l.GetValues()))
	for _, v := range l.GetValues() {
		s, ok := v.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, false
		}
		out = append(out, s.StringValue)
	}
	return out, true
}

// invalidError is a request that breaks a rule of CONTRACT §1: 400 with msg.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return e.msg }

func invalid(msg string) error { return &invalidError{msg} }

// validate checks a whole record against CONTRACT §1.
func validate(a *store.LlmSettings) error {
	if a.ModelName == "" {
		return invalid("model_name is required and must not be empty")
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"max_length", a.MaxLength}, {"max_tokens", a.MaxTokens}, {"min_length", a.MinLength}, {"seed", a.Seed}, {"top_k", a.TopK}} {
		if f.v < 0 {
			return invalid(f.name + " must be an integer of at least 0")
		}
	}
	for _, f := range []struct {
		name      string
		v, lo, hi float64
	}{{"temperature", a.Temperature, 0, 2}, {"top_p", a.TopP, 0, 1}} {
		if !(f.v >= f.lo && f.v <= f.hi) { // NaN fails too
			return invalid(fmt.Sprintf("%s must be between %g and %g", f.name, f.lo, f.hi))
		}
	}
	if !(a.RepetitionPenalty >= 0) || math.IsInf(a.RepetitionPenalty, 1) {
		return invalid("repetition_penalty must be a number of at least 0")
	}
	return nil
}
