package datafile

import (
	"bytes"
	"encoding/json"
	"io"
)

// Reader returns f written as a data file by encoding/json, for any
// reader of one (memstore.LoadReader, an ImportStream): so that a File
// built or changed in Go loads the way a file on disk does, validated
// (an explicit "" included: supplier.Text). A File that cannot be written
// (an enum value the supplier package does not know, say) gives that
// error at the first Read.
func (f *File) Reader() io.Reader {
	b, err := json.Marshal(f)
	if err != nil {
		return &errReader{err}
	}
	return bytes.NewReader(b)
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }
