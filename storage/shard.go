package storage

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// ParseShardSelector parses a shard selector in the syntax of Kubernetes'
// server-side sharded list and watch (KEP-5866, the shardSelector list
// option): one or more
//
//	shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')
//
// joined by ||. The field is object.metadata.uid or object.metadata.namespace,
// the same in every range; the bounds are 0x-prefixed, lower-case, 16-digit
// hex strings (the end may be '0x10000000000000000', 2^64), start < end. An
// object is selected when the 64-bit FNV-1a hash of the field's value falls
// in [start, end) of any range (k8s.io/apimachinery/pkg/sharding). Errors
// are ErrInvalidArgument (400 over HTTP).
func ParseShardSelector(expr string) (sharding.Selector, error) {
	p := &shardParser{s: strings.TrimSpace(expr)}
	if p.s == "" {
		return nil, shardError("empty shard selector is not allowed; omit it for unfiltered lists")
	}
	var reqs []sharding.ShardRangeRequirement
	for {
		req, err := p.shardRange()
		if err != nil {
			return nil, err
		}
		if len(reqs) > 0 && req.Key != reqs[0].Key {
			return nil, shardError(fmt.Sprintf("all shard ranges must use the same field, got %q and %q", reqs[0].Key, req.Key))
		}
		reqs = append(reqs, req)
		p.space()
		if p.done() {
			return newShardSelector(reqs), nil
		}
		if !p.take("||") {
			return nil, p.errorf("expected || or the end")
		}
	}
}

func shardError(msg string) error { return NewInvalidArgumentError("invalid shardSelector: "+msg, nil) }

// shardParser reads the restricted grammar by hand; no CEL evaluation.
type shardParser struct {
	s   string
	pos int
}

func (p *shardParser) done() bool { return p.pos >= len(p.s) }

func (p *shardParser) space() {
	for !p.done() && unicode.IsSpace(rune(p.s[p.pos])) {
		p.pos++
	}
}

func (p *shardParser) take(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *shardParser) errorf(format string, args ...any) error {
	return shardError(fmt.Sprintf("at offset %d: ", p.pos) + fmt.Sprintf(format, args...))
}

func (p *shardParser) shardRange() (sharding.ShardRangeRequirement, error) {
	if !p.take("shardRange") || !p.take("(") {
		return sharding.ShardRangeRequirement{}, p.errorf("expected shardRange(; only shardRange() and || are allowed")
	}
	field := p.path()
	switch field {
	case "object.metadata.uid", "object.metadata.namespace":
	default:
		return sharding.ShardRangeRequirement{}, p.errorf("unsupported field path %q; supported: object.metadata.uid, object.metadata.namespace", field)
	}
	if !p.take(",") {
		return sharding.ShardRangeRequirement{}, p.errorf("expected , after the field path")
	}
	start, err := p.hex("start")
	if err != nil {
		return sharding.ShardRangeRequirement{}, err
	}
	if !p.take(",") {
		return sharding.ShardRangeRequirement{}, p.errorf("expected , after the start")
	}
	end, err := p.hex("end")
	if err != nil {
		return sharding.ShardRangeRequirement{}, err
	}
	if !p.take(")") {
		return sharding.ShardRangeRequirement{}, p.errorf("expected ) after the end; shardRange() takes exactly 3 arguments")
	}
	if !sharding.HexLess(start, end) {
		return sharding.ShardRangeRequirement{}, shardError(fmt.Sprintf("shard range start %s must be less than end %s", start, end))
	}
	return sharding.ShardRangeRequirement{Key: field, Start: start, End: end}, nil
}

// path reads a dotted identifier such as object.metadata.uid.
func (p *shardParser) path() string {
	p.space()
	from := p.pos
	for !p.done() {
		c := rune(p.s[p.pos])
		if c != '.' && c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			break
		}
		p.pos++
	}
	return p.s[from:p.pos]
}

// hex reads a quoted bound and checks its form.
func (p *shardParser) hex(name string) (string, error) {
	p.space()
	if p.done() || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return "", p.errorf("%s must be a string literal such as '0x8000000000000000'", name)
	}
	quote := p.s[p.pos]
	end := strings.IndexByte(p.s[p.pos+1:], quote)
	if end < 0 {
		return "", p.errorf("unterminated string literal for %s", name)
	}
	v := p.s[p.pos+1 : p.pos+1+end]
	p.pos += end + 2
	digits, ok := strings.CutPrefix(v, "0x")
	switch {
	case !ok:
		return "", shardError(fmt.Sprintf("%s must have the 0x prefix, got %q", name, v))
	case strings.Trim(digits, "0123456789abcdef") != "":
		return "", shardError(fmt.Sprintf("%s: %q is not lower-case hex", name, v))
	case len(digits) == 17 && v == "0x10000000000000000":
		return v, nil
	case len(digits) != 16:
		return "", shardError(fmt.Sprintf("%s must be a 0x-prefixed 16-digit hex value, got %q", name, v))
	}
	return v, nil
}

// shardMatches reports whether obj is in the shard; an object whose field
// cannot be read is not.
func shardMatches(sel sharding.Selector, obj runtime.Object) bool {
	ok, err := sel.Matches(obj)
	return err == nil && ok
}

// shardSelector is a sharding.Selector with its bounds parsed to numbers, so
// that matching hashes once without formatting: the same selection as
// sharding.NewSelector (FNV-1a 64 of the field, in [start, end) of a
// range), several times cheaper on the cacher's dispatch path.
type shardSelector struct {
	sharding.Selector // String, Requirements, Empty, DeepCopySelector
	field             string
	ranges            []HashRange
}

// HashRange is one range of a shard selector as numbers: [Start, End) over
// 64-bit hashes, with End 2^64 written as ToMax.
type HashRange struct {
	Start, End uint64
	ToMax      bool
}

// Holds reports whether hash h is in the range.
func (r HashRange) Holds(h uint64) bool { return h >= r.Start && (r.ToMax || h < r.End) }

// Before reports whether the range ends at or before h (it cannot hold h
// or anything above).
func (r HashRange) Before(h uint64) bool { return !r.ToMax && r.End <= h }

// ShardHashRanges returns the field a shard selector hashes and its ranges
// as numbers; ok is false when its ranges do not all use one field or a
// bound is malformed (possible only for selectors not made by
// ParseShardSelector).
func ShardHashRanges(sel sharding.Selector) (field string, ranges []HashRange, ok bool) {
	if s, isOurs := sel.(*shardSelector); isOurs {
		return s.field, s.ranges, true
	}
	reqs := sel.Requirements()
	if len(reqs) == 0 {
		return "", nil, false
	}
	for _, r := range reqs {
		if r.Key != reqs[0].Key || len(r.Start) < 3 || len(r.End) < 3 {
			return "", nil, false
		}
		start, err := strconv.ParseUint(r.Start[2:], 16, 64)
		if err != nil {
			return "", nil, false
		}
		hr := HashRange{Start: start, ToMax: r.End == "0x10000000000000000"}
		if !hr.ToMax {
			if hr.End, err = strconv.ParseUint(r.End[2:], 16, 64); err != nil {
				return "", nil, false
			}
		}
		ranges = append(ranges, hr)
	}
	return reqs[0].Key, ranges, true
}

func newShardSelector(reqs []sharding.ShardRangeRequirement) sharding.Selector {
	s := &shardSelector{Selector: sharding.NewSelector(reqs...), field: reqs[0].Key}
	_, s.ranges, _ = ShardHashRanges(s.Selector)
	return s
}

// Matches implements sharding.Selector.
func (s *shardSelector) Matches(obj runtime.Object) (bool, error) {
	v, err := sharding.ResolveFieldValue(obj, s.field)
	if err != nil {
		return false, err
	}
	h := ShardHash(v)
	for _, r := range s.ranges {
		if r.Holds(h) {
			return true, nil
		}
	}
	return false, nil
}

// ShardHash is the 64-bit FNV-1a hash shard ranges are compared with (the
// number sharding.HashField prints in hex).
func ShardHash(value string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(value))
	return h.Sum64()
}
