package check_test

import (
	"testing"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
)

type embInner struct {
	Name string `json:"name" validate:"max=3"`
}

type embMiddle struct {
	embInner
	Email string `json:"email" validate:"omitempty,email"`
}

type embOuter struct {
	embMiddle
	Items []embInner `json:"items" validate:"dive"`
}

// Embedded structs are flattened in JSON, so their names are not part of a
// field's path: "name", not "middle.inner.name".
func TestEmbeddedStructPaths(t *testing.T) {
	v := embOuter{embMiddle: embMiddle{embInner: embInner{Name: "toolong"}, Email: "x"}, Items: []embInner{{Name: "ok"}, {Name: "long"}}}
	err := check.Struct(procure.SourceData, &v)
	want := "name: must be at most 3 characters; email: must be a valid email address; items[1].name: must be at most 3 characters"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
