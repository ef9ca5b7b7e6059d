package jsonstrict

import "encoding/json"

// overMaxValues tells whether data, valid JSON, holds more than MaxValues
// values, without allocating: the walker's json.Decoder boxes every token,
// and a document refused for its size should not first make a million of
// them (a 15 MiB body of tiny values cost the services tens of MiB of
// garbage). For data that is not valid JSON it reports false and the walker
// finds what is wrong.
func overMaxValues(data []byte) bool {
	return countValues(data) > MaxValues && json.Valid(data)
}

// countValues counts the values of valid JSON data, stopping past
// MaxValues: every object, array and string, and every other scalar (it
// starts after white space, '[', ',' or ':'), less the strings that are
// keys (one per ':'). On other data the count means nothing.
func countValues(data []byte) int {
	n := 0
	inString, escaped := false, false
	prev := byte(' ')
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			prev = c
			continue
		}
		switch c {
		case '"':
			inString = true
			n++
		case '{', '[':
			n++
		case ':':
			n--
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 't', 'f', 'n':
			switch prev {
			case ' ', '\t', '\n', '\r', '[', ',', ':':
				n++
			}
		}
		if n > MaxValues+1 {
			return n
		}
		prev = c
	}
	return n
}
