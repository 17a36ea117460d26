package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// simplePath is a parsed printer-column path: field names and list
// indices, such as .spec.replicas or .status.conditions[0].type. It is the
// subset of JSONPath that CRD printer columns use in practice; the full
// JSONPath of client-go may not be imported by the library, and
// apimachinery has none. Filters, wildcards and ranges are refused when
// the path is configured.
type simplePath []pathStep

// pathStep is a field name, or an index when field is "".
type pathStep struct {
	field string
	index int
}

// parseSimplePath parses p, which must start with "." (braces around the
// whole path, as in {.spec.replicas}, are accepted).
func parseSimplePath(p string) (simplePath, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(p, "{"), "}")
	if !strings.HasPrefix(s, ".") || s == "." {
		return nil, fmt.Errorf("path %q must start with \".\" and name a field", p)
	}
	var out simplePath
	for _, part := range splitUnescaped(s[1:]) {
		name, rest, _ := strings.Cut(part, "[")
		if name == "" {
			return nil, fmt.Errorf("path %q has an empty field name", p)
		}
		out = append(out, pathStep{field: name})
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(idx)
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("path %q: only non-negative list indices are supported in brackets", p)
			}
			out = append(out, pathStep{index: i})
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: unexpected %q after an index", p, after)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out, nil
}

// get returns the value at p in obj and whether it exists.
func (p simplePath) get(obj map[string]any) (any, bool) {
	var cur any = obj
	for _, st := range p {
		switch x := cur.(type) {
		case map[string]any:
			if st.field == "" {
				return nil, false
			}
			v, ok := x[st.field]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if st.field != "" || st.index >= len(x) {
				return nil, false
			}
			cur = x[st.index]
		default:
			return nil, false
		}
	}
	return cur, true
}

// splitUnescaped splits a path at dots that are not escaped as "\.", the
// way label keys such as topology.kubernetes.io/zone are written in
// printer columns; escaped dots become plain dots.
func splitUnescaped(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '.':
			cur.WriteByte('.')
			i++
		case s[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, cur.String())
}
