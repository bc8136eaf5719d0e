package feature

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Check applies the contract's schema of the feature name (either spelling)
// to args, in order of name: unknown, missing and null arguments, types,
// bounds, enums and formats. Its error is the reference server's 400
// message, which runs Check too. What needs the service's state is not
// checked, nor a name that is not a feature (a newer service may know it).
func Check(name string, args map[string]any) error { return check(name, args, true) }

// CheckGiven is Check for a price: missing required arguments and empty
// strings (typed arguments' zero values) pass.
func CheckGiven(name string, args map[string]any) error { return check(name, args, false) }

func check(name string, args map[string]any, all bool) error {
	f, ok := Lookup(name)
	if !ok {
		return nil
	}
	names := argNames[f.Name]
	var unknown []string // sorted only when there are any: a create checks its args on every call
	for n := range args {
		if _, known := slices.BinarySearch(names, n); !known {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("args.%s is not an argument of %s (arguments: %s)", slices.Min(unknown), f.Name, strings.Join(names, ", "))
	}
	for _, n := range names {
		a, _ := f.Arg(n)
		v, present := args[n]
		switch {
		case v == nil && a.Required && all:
			return fmt.Errorf("args.%s is required", n)
		case v == nil && present:
			return fmt.Errorf("args.%s must not be null", n)
		case v == nil, !all && v == "":
			continue
		}
		if err := a.Check(v); err != nil {
			return err
		}
	}
	return nil
}

// Check validates one present value of the argument, as [Check] does; the
// client's typed arguments call it per field, with no map to build.
func (a *Arg) Check(v any) error {
	str, isStr := v.(string)
	switch {
	case a.Type == "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("args.%s must be a boolean", a.Name)
		}
	case a.Type == "integer":
		if n, ok := AsInt(v); !ok || n < a.Minimum || n > a.Maximum {
			return fmt.Errorf("args.%s must be an integer from %d to %d", a.Name, a.Minimum, a.Maximum)
		}
	case a.Enum != nil:
		if !isStr || !slices.Contains(a.Enum, str) {
			return fmt.Errorf("args.%s must be one of %s", a.Name, strings.Join(a.Enum, ", "))
		}
	case a.Format == "hex-color":
		if !isStr || !a.Pattern.MatchString(str) {
			return fmt.Errorf("args.%s must be a CSS hex colour such as #101820", a.Name)
		}
	case a.Format == "file-id":
		if !isStr || str == "" {
			return fmt.Errorf("args.%s must be a file id (a string from the upload endpoints)", a.Name)
		}
	case a.Format == "voice-id":
		if !isStr || str == "" {
			return fmt.Errorf("args.%s must be a voice id or slug", a.Name)
		}
	default:
		if n := utf8.RuneCountInString(str); !isStr || n < a.MinLength || n > a.MaxLength {
			return fmt.Errorf("args.%s must be a string of %d to %d characters", a.Name, a.MinLength, a.MaxLength)
		}
		if !Visible(str) {
			return fmt.Errorf("args.%s has no visible character: it is all control, space or invisible format characters", a.Name)
		}
	}
	return nil
}

// Visible reports whether s has a character that shows: not a control, a
// space, a format character (zero-width, bidirectional marks, soft hyphens,
// tags) or another default-ignorable code point.
func Visible(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf { // ASCII shows from '!' to '~': no table to read
			if r > ' ' && r != 0x7f {
				return true
			}
			continue
		}
		if !unicode.IsControl(r) && !unicode.IsSpace(r) &&
			!unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return true
		}
	}
	return false
}

// AsInt reads an integral number: a decoded JSON number (float64) or a
// table's default (int), within ±2^31.
func AsInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= 1<<31 {
			return int(n), true
		}
	}
	return 0, false
}
