package jsontext

// Kind names the JSON type of the value b as json.UnmarshalTypeError's
// Value does ("string", "object", "array", "bool", "null", "number";
// "value" for nothing), for the hand-written decoders that report a value
// of the wrong type the way encoding/json does.
func Kind(b []byte) string {
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
