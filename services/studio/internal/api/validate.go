package api

import (
	"fmt"
	"math"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	studiov1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/studio/v1"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// applyChanges sets on attrs every attribute present in ch, then checks the
// result; it answers 400 naming the first field in error.
func applyChanges(attrs *studiov1.LlmSettingsAttributes, ch *studiov1.LlmSettingsChanges) error {
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
			attrs.Metadata = ch.Metadata
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

func invalid(msg string) error { return rest.Error(codes.InvalidArgument, http.StatusBadRequest, msg) }

// validate checks a whole record against CONTRACT §1.
func validate(a *studiov1.LlmSettingsAttributes) error {
	if a.GetModelName() == "" {
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
