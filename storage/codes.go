package storage

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// codeSpec is what one Code means outside the process: its text, and the
// HTTP status and Status reason that carry it (Kubernetes' for the same
// condition). Code.String, Error.Status and FromStatus all derive from
// codeTable; a new code is one row.
type codeSpec struct {
	// text is Code.String().
	text string
	// status is the HTTP status code (a plain int: storage speaks no HTTP).
	status int32
	// reason is the Status reason.
	reason metav1.StatusReason
	// readBack: a Status with reason (or one of alsoFrom) is read back as
	// this code. Two codes that share a reason have one reader.
	readBack bool
	// alsoFrom are further reasons read back as this code.
	alsoFrom []metav1.StatusReason
	// byStatus: a Status with status and a reason no code reads back is read
	// back as this code.
	byStatus bool
}

// codeTable is indexed by Code.
var codeTable = [...]codeSpec{
	CodeUnknown:                 {text: "storage error", status: 500, reason: metav1.StatusReasonInternalError},
	CodeNotFound:                {text: "not found", status: 404, reason: metav1.StatusReasonNotFound, readBack: true},
	CodeKeyExists:               {text: "key exists", status: 409, reason: metav1.StatusReasonAlreadyExists, readBack: true},
	CodeConflict:                {text: "resource version conflict", status: 409, reason: metav1.StatusReasonConflict, readBack: true},
	CodeInvalidObj:              {text: "invalid object", status: 422, reason: metav1.StatusReasonInvalid, readBack: true},
	CodeInvalidArgument:         {text: "invalid argument", status: 400, reason: metav1.StatusReasonBadRequest, readBack: true},
	CodeGone:                    {text: "too old resource version", status: 410, reason: metav1.StatusReasonExpired, readBack: true, alsoFrom: []metav1.StatusReason{metav1.StatusReasonGone}, byStatus: true},
	CodeTooLargeResourceVersion: {text: "too large resource version", status: 504, reason: metav1.StatusReasonTimeout}, // read back by its cause (codeOfStatus)
	CodeNotReady:                {text: "storage not ready", status: 429, reason: metav1.StatusReasonTooManyRequests},
	CodeTimeout:                 {text: "timeout", status: 504, reason: metav1.StatusReasonTimeout, readBack: true, alsoFrom: []metav1.StatusReason{metav1.StatusReasonServerTimeout}, byStatus: true},
	CodeCorruptObj:              {text: "corrupt object", status: 500, reason: metav1.StatusReasonInternalError, alsoFrom: []metav1.StatusReason{metav1.StatusReasonStoreReadError}}, // or by its message (codeOfStatus)
	CodeTooManyRequests:         {text: "too many requests", status: 429, reason: metav1.StatusReasonTooManyRequests, readBack: true, byStatus: true},
	CodeUnreachable:             {text: "storage unreachable", status: 503, reason: metav1.StatusReasonServiceUnavailable, readBack: true, byStatus: true},
	CodeRequestTooLarge:         {text: "request too large", status: 413, reason: metav1.StatusReasonRequestEntityTooLarge, readBack: true},
	CodeInternal:                {text: "internal error", status: 500, reason: metav1.StatusReasonInternalError, readBack: true},
}

// byReason and byHTTPStatus are codeTable's reverse mappings.
var byReason, byHTTPStatus = reverseCodeTable()

func reverseCodeTable() (map[metav1.StatusReason]Code, map[int32]Code) {
	reasons, statuses := map[metav1.StatusReason]Code{}, map[int32]Code{}
	for i, s := range codeTable {
		c := Code(i)
		if s.readBack {
			reasons[s.reason] = c
		}
		for _, r := range s.alsoFrom {
			reasons[r] = c
		}
		if s.byStatus {
			statuses[s.status] = c
		}
	}
	return reasons, statuses
}

// spec returns c's row (CodeUnknown's for a code outside the table).
func (c Code) spec() codeSpec {
	if c < 0 || int(c) >= len(codeTable) {
		return codeTable[CodeUnknown]
	}
	return codeTable[c]
}

// String names the code.
func (c Code) String() string { return c.spec().text }

// HTTPStatus is the HTTP status code that carries c (Kubernetes' for the
// same condition: 404, 409, 410, 422, 429, 503, 504, ...).
func (c Code) HTTPStatus() int { return int(c.spec().status) }

// Reason is the Status reason that carries c.
func (c Code) Reason() metav1.StatusReason { return c.spec().reason }
