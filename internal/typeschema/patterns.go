package typeschema

import (
	"strconv"
	"strings"
)

// Regular expressions for string values whose decoding has rules of its own. All are
// anchored and written in the common subset of Go (RE2) and ECMA-262 syntax.
const (
	// dateTimePattern narrows "format": "date-time" to what time.Time.UnmarshalJSON
	// parses: RFC 3339 with an upper case T and Z, hours 00-23, seconds 00-59 (no leap
	// second) and offsets up to ±23:59. The format assertion checks that the date exists.
	dateTimePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$`

	// base64Pattern is what base64.StdEncoding decodes into a []byte: padded standard
	// base64, with carriage returns and line feeds ignored anywhere.
	base64Pattern = `^` + nl + `(?:` + b64 + nl + b64 + nl + b64 + nl + b64 + nl + `)*(?:` +
		b64 + nl + b64 + nl + `=` + nl + `=` + nl + `|` +
		b64 + nl + b64 + nl + b64 + nl + `=` + nl + `)?$`
	b64 = `[A-Za-z0-9+/]`
	nl  = `[\r\n]*`

	// numberPattern is a JSON number, what a json.Number accepts when written as a string.
	numberPattern = `^` + jsonNumber + `$`
	jsonNumber    = `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`

	// Patterns for the string of a field with the ",string" option, which encoding/json
	// decodes as a JSON literal of the field's kind (or null).
	quotedBoolPattern   = `^(?:null|true|false)$`
	quotedStringPattern = `^(?:null|"(?:[^"\\\x00-\x1f]|\\["\\/'bfnrt]|\\u[0-9a-fA-F]{4})*")$`
	quotedNumberPattern = `^(?:null|` + jsonNumber + `)$`
	// quotedFloatPattern is the decimal subset of what strconv.ParseFloat reads; it does
	// not bound the magnitude (see the package documentation).
	quotedFloatPattern = `^(?:null|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)$`
)

// signedPattern matches (unanchored) the decimal integers strconv.ParseInt(s, 10, 64)
// reads and that fit in bits bits; plus allows a leading '+' (ParseInt does, but a
// ",string" value must start with '-' or a digit).
func signedPattern(bits int, plus bool) string {
	pos := uint64(1)<<(bits-1) - 1
	sign := ""
	if plus {
		sign = `\+?`
	}
	return "(?:" + sign + upTo(pos) + "|-" + upTo(pos+1) + ")"
}

// unsignedPattern matches (unanchored) the decimal integers strconv.ParseUint(s, 10, 64)
// reads and that fit in bits bits.
func unsignedPattern(bits int) string {
	max := ^uint64(0) >> (64 - bits)
	return upTo(max)
}

// upTo matches the decimal numerals of 0..max (max > 0), leading zeros allowed.
func upTo(max uint64) string {
	n := strconv.FormatUint(max, 10)
	k := len(n)
	var alts []string
	if k >= 2 {
		alts = append(alts, "[1-9]"+digits(k-2, true)) // fewer digits than max
	}
	for i := 0; i < k; i++ {
		lo := byte('0')
		if i == 0 {
			lo = '1'
		}
		if d := n[i]; d > lo {
			alts = append(alts, n[:i]+digitRange(lo, d-1)+digits(k-i-1, false))
		}
	}
	alts = append(alts, n)
	return "0*(?:0|" + strings.Join(alts, "|") + ")"
}

// digits matches n decimal digits, or up to n when upToN.
func digits(n int, upToN bool) string {
	switch {
	case n == 0:
		return ""
	case upToN:
		return "[0-9]{0," + strconv.Itoa(n) + "}"
	case n == 1:
		return "[0-9]"
	}
	return "[0-9]{" + strconv.Itoa(n) + "}"
}

func digitRange(lo, hi byte) string {
	if lo == hi {
		return string(lo)
	}
	return "[" + string(lo) + "-" + string(hi) + "]"
}
