package server

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// applyJSONPatch applies an RFC 6902 JSON patch (a list of operations
// decoded from JSON) to doc and returns the result. doc's maps and slices
// are modified; pass a copy. Errors describe the failing operation.
func applyJSONPatch(doc any, ops []any) (any, error) {
	for i, raw := range ops {
		op, ok := raw.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("operation %d is not an object", i)
		}
		var err error
		if doc, err = applyOp(doc, op); err != nil {
			return nil, fmt.Errorf("operation %d (%v %v): %w", i, op["op"], op["path"], err)
		}
	}
	return doc, nil
}

func applyOp(doc any, op map[string]any) (any, error) {
	name, _ := op["op"].(string)
	path, err := opPointer(op, "path")
	if err != nil {
		return nil, err
	}
	value, hasValue := op["value"]
	// The document may be patched again (a retried update) and later
	// operations modify what earlier ones added: never share the op's value.
	value = deepCopyJSON(value)
	needValue := name == "add" || name == "replace" || name == "test"
	if needValue && !hasValue {
		return nil, fmt.Errorf("missing value")
	}
	switch name {
	case "add":
		return addAt(doc, path, value)
	case "remove":
		doc, _, err = removeAt(doc, path)
		return doc, err
	case "replace":
		if len(path) == 0 {
			return value, nil
		}
		if doc, _, err = removeAt(doc, path); err != nil {
			return nil, err
		}
		return addAt(doc, path, value)
	case "test":
		cur, err := getAt(doc, path)
		if err != nil {
			return nil, err
		}
		a, aerr := appendJSON(nil, cur)
		b, berr := appendJSON(nil, value)
		if aerr != nil || berr != nil || !bytes.Equal(a, b) {
			return nil, fmt.Errorf("test failed")
		}
		return doc, nil
	case "move", "copy":
		from, err := opPointer(op, "from")
		if err != nil {
			return nil, err
		}
		var v any
		if name == "move" {
			if isPrefix(from, path) && len(from) < len(path) {
				return nil, fmt.Errorf("cannot move a value into itself")
			}
			doc, v, err = removeAt(doc, from)
		} else {
			v, err = getAt(doc, from)
			v = deepCopyJSON(v)
		}
		if err != nil {
			return nil, err
		}
		return addAt(doc, path, v)
	}
	return nil, fmt.Errorf("unknown op %q", name)
}

// opPointer parses the JSON pointer in op[key] into reference tokens.
func opPointer(op map[string]any, key string) ([]string, error) {
	s, ok := op[key].(string)
	if !ok {
		return nil, fmt.Errorf("missing %s", key)
	}
	if s == "" {
		return []string{}, nil
	}
	if !strings.HasPrefix(s, "/") {
		return nil, fmt.Errorf("%s %q does not start with /", key, s)
	}
	tokens := strings.Split(s[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

func isPrefix(prefix, path []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if prefix[i] != path[i] {
			return false
		}
	}
	return true
}

// arrayIndex parses an array index token; end allows len(arr) (and "-").
func arrayIndex(tok string, n int, end bool) (int, error) {
	if end && tok == "-" {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || (tok != "0" && strings.HasPrefix(tok, "0")) {
		return 0, fmt.Errorf("invalid array index %q", tok)
	}
	if i > n || (i == n && !end) {
		return 0, fmt.Errorf("array index %d out of range", i)
	}
	return i, nil
}

func getAt(doc any, path []string) (any, error) {
	for _, tok := range path {
		switch c := doc.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("path not found")
			}
			doc = v
		case []any:
			i, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return nil, err
			}
			doc = c[i]
		default:
			return nil, fmt.Errorf("path not found")
		}
	}
	return doc, nil
}

// atParent calls leaf on the container of path's last token and stores
// what it returns in place of that container.
func atParent(doc any, path []string, leaf func(container any, tok string) (any, error)) (any, error) {
	if len(path) == 1 {
		return leaf(doc, path[0])
	}
	switch c := doc.(type) {
	case map[string]any:
		child, ok := c[path[0]]
		if !ok {
			return nil, fmt.Errorf("path not found")
		}
		nc, err := atParent(child, path[1:], leaf)
		if err != nil {
			return nil, err
		}
		c[path[0]] = nc
		return c, nil
	case []any:
		i, err := arrayIndex(path[0], len(c), false)
		if err != nil {
			return nil, err
		}
		nc, err := atParent(c[i], path[1:], leaf)
		if err != nil {
			return nil, err
		}
		c[i] = nc
		return c, nil
	}
	return nil, fmt.Errorf("path not found")
}

func addAt(doc any, path []string, value any) (any, error) {
	if len(path) == 0 {
		return value, nil
	}
	return atParent(doc, path, func(container any, tok string) (any, error) {
		switch c := container.(type) {
		case map[string]any:
			c[tok] = value
			return c, nil
		case []any:
			i, err := arrayIndex(tok, len(c), true)
			if err != nil {
				return nil, err
			}
			c = append(c, nil)
			copy(c[i+1:], c[i:])
			c[i] = value
			return c, nil
		}
		return nil, fmt.Errorf("path not found")
	})
}

func removeAt(doc any, path []string) (any, any, error) {
	if len(path) == 0 {
		return nil, nil, fmt.Errorf("cannot remove the whole document")
	}
	var removed any
	doc, err := atParent(doc, path, func(container any, tok string) (any, error) {
		switch c := container.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("path not found")
			}
			removed = v
			delete(c, tok)
			return c, nil
		case []any:
			i, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return nil, err
			}
			removed = c[i]
			return append(c[:i:i], c[i+1:]...), nil
		}
		return nil, fmt.Errorf("path not found")
	})
	return doc, removed, err
}

// deepCopyJSON copies maps and slices of a decoded JSON value.
func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopyJSON(e)
		}
		return s
	}
	return v
}
