package request

// MergePatch applies an RFC 7386 JSON merge patch to target and returns the
// result. A patch that is not an object replaces the target; in an object
// patch, null removes a member and any other value is merged recursively
// (objects) or replaces the member. target's maps may be modified and
// reused; pass a copy when the original must survive.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = make(map[string]any, len(p))
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = MergePatch(t[k], v)
	}
	return t
}
