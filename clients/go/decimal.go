package market

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// Decimal is an amount of money (or another decimal figure) exactly as the API wrote
// it: the text of a JSON number in major units of its currency, such as "19.99", "5",
// "1200.5" or "1200" (JPY). It is built on json.Number (json.Number(d) and
// Decimal(n) convert between them), so it never goes through a float64 and never
// shows artefacts such as 19.990000001.
//
// Compare, add or store amounts with Rat (exact), or convert them to integer minor
// units with MinorUnits. Float64 is there for display and rough arithmetic only.
//
// The zero value "" means "not set": request parameters of type Decimal (MinPrice,
// MaxPrice) are left out of the request when they are "".
type Decimal json.Number

// ParseDecimal checks that s is a plain decimal number (digits, at most one '.', an
// optional leading '-', an optional exponent) and returns it as a Decimal, unchanged.
func ParseDecimal(s string) (Decimal, error) {
	if !isJSONNumber(s) {
		return "", fmt.Errorf("market: %q is not a decimal number", s)
	}
	return Decimal(s), nil
}

// String returns the decimal exactly as the API sent it (or as it was made).
func (d Decimal) String() string { return string(d) }

// IsZero reports whether d is unset ("").
func (d Decimal) IsZero() bool { return d == "" }

// Number returns d as a json.Number.
func (d Decimal) Number() json.Number { return json.Number(d) }

// Float64 returns d as a float64, which may round it. Use Rat or MinorUnits for exact
// arithmetic.
func (d Decimal) Float64() (float64, error) { return json.Number(d).Float64() }

// Rat returns d as an exact rational number.
func (d Decimal) Rat() (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(string(d))
	if !ok || !isJSONNumber(string(d)) {
		return nil, fmt.Errorf("market: %q is not a decimal number", string(d))
	}
	return r, nil
}

// Cmp compares d and e exactly: -1 if d < e, 0 if they are equal ("5" equals "5.00"),
// +1 if d > e. It returns an error when either is not a number.
func (d Decimal) Cmp(e Decimal) (int, error) {
	a, err := d.Rat()
	if err != nil {
		return 0, err
	}
	b, err := e.Rat()
	if err != nil {
		return 0, err
	}
	return a.Cmp(b), nil
}

// MinorUnits returns d in minor units of a currency with the given exponent (2 for
// USD and EUR, 0 for JPY, 3 for KWD): "19.99" with exponent 2 is 1999. It returns an
// error if d has more fractional digits than the exponent allows or does not fit an
// int64.
func (d Decimal) MinorUnits(exponent int) (int64, error) {
	r, err := d.Rat()
	if err != nil {
		return 0, err
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exponent)), nil)
	r.Mul(r, new(big.Rat).SetInt(scale))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("market: %s is not a whole number of minor units with exponent %d", string(d), exponent)
	}
	return r.Num().Int64(), nil
}

// UnmarshalJSON keeps the text of a JSON number as it is. A JSON string holding a
// number is accepted too; null leaves d unchanged.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = str
	}
	if !isJSONNumber(s) {
		return fmt.Errorf("market: decimal: %s is not a number", string(b))
	}
	*d = Decimal(s)
	return nil
}

// MarshalJSON writes d as a JSON number, unchanged ("" is written as null).
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	if !isJSONNumber(string(d)) {
		return nil, fmt.Errorf("market: decimal %q is not a number", string(d))
	}
	return []byte(d), nil
}

// isJSONNumber reports whether s is a number in the grammar of RFC 8259.
func isJSONNumber(s string) bool {
	i, n := 0, len(s)
	if i < n && s[i] == '-' {
		i++
	}
	switch {
	case i < n && s[i] == '0':
		i++
	case i < n && s[i] >= '1' && s[i] <= '9':
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < n && s[i] == '.' {
		i++
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == n
}
