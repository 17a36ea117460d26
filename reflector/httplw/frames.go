package httplw

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// frameReader splits a watch stream into frames.
//
// Servers (this project's and Kubernetes') write one frame per line,
// {"type":"...","object":{...}} followed by a newline, so the reader takes
// a line and cuts the object out of it without scanning it (the object's
// decoder validates it anyway): that halves the client's CPU per event
// compared with encoding/json.Decoder, which scans every frame twice
// before the object is decoded. A line that is not in that form is parsed
// as a whole frame; a line that does not parse as one frame (frames spread
// over several lines, or several on one line) switches the reader to a
// json.Decoder for the rest of the stream.
type frameReader struct {
	br  *bufio.Reader
	buf []byte        // a line longer than br's buffer
	dec *json.Decoder // set once the stream is not one frame per line
}

// rawFrame is one frame; its slices are valid until the next call to next.
type rawFrame struct {
	typ    watch.EventType
	object []byte
	line   []byte // the whole frame when it was cut out of a line (fast path)
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next frame, io.EOF at the end of the stream, or another
// error for a stream that is cut or malformed.
func (r *frameReader) next() (rawFrame, error) {
	if r.dec != nil {
		var f frame
		if err := r.dec.Decode(&f); err != nil {
			return rawFrame{}, err
		}
		return rawFrame{typ: f.Type, object: f.Object}, nil
	}
	for {
		line, err := r.readLine()
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if err != nil {
				return rawFrame{}, err
			}
			continue
		}
		if typ, obj, ok := cutFrame(trimmed); ok {
			return rawFrame{typ: typ, object: obj, line: trimmed}, nil
		}
		var f frame
		if jerr := json.Unmarshal(trimmed, &f); jerr != nil {
			// Not one frame per line (a frame spread over lines, or several
			// on one): parse the rest of the stream with a json.Decoder.
			r.switchToDecoder(line)
			return r.next()
		}
		return rawFrame{typ: f.Type, object: f.Object}, nil
	}
}

// nextEvent returns the next event decoded with decode.
func (r *frameReader) nextEvent(decode func([]byte) (runtime.Object, error)) (watch.Event, error) {
	f, err := r.next()
	if err != nil {
		return watch.Event{}, err
	}
	ev, err := toEvent(f, decode)
	if err != nil && f.line != nil {
		// The object cut out of the line does not decode: read the line
		// again with a full parser.
		r.switchToDecoder(f.line)
		return r.nextEvent(decode)
	}
	return ev, err
}

// switchToDecoder makes the rest of the stream, starting with pending,
// go through a json.Decoder.
func (r *frameReader) switchToDecoder(pending []byte) {
	rest := append(append([]byte(nil), pending...), '\n')
	r.dec = json.NewDecoder(io.MultiReader(bytes.NewReader(rest), r.br))
}

// readLine returns the next line, including its newline if any.
func (r *frameReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	r.buf = append(r.buf[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return r.buf, err
		}
	}
}

// cutFrame splits {"type":"T","object":O} into T and O without looking
// inside O.
func cutFrame(b []byte) (watch.EventType, []byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"type":"`))
	if !ok {
		return "", nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", nil, false
	}
	typ := rest[:i]
	obj, ok := bytes.CutPrefix(rest[i+1:], []byte(`,"object":`))
	if !ok || len(obj) < 2 || obj[len(obj)-1] != '}' {
		return "", nil, false
	}
	return watch.EventType(typ), obj[:len(obj)-1], true
}
