package pgpool

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// google/uuid's UUID as a parameter. pgx knows a uuid parameter's [16]byte,
// but uuid.UUID, a [16]byte of its own type, also implements
// driver.Valuer, and pgx does not look under a Valuer's type: it calls
// Value, which formats the 36-character text, and then parses that text
// back into 16 bytes to send them binary - 1.7 µs and 20 allocations a
// parameter, where the bytes themselves take 80 ns and 2
// (BenchmarkEncodeUUID, a quiet machine). A supplier put sends four such
// parameters (BenchmarkPutSupplierWhileReading: 421 allocations a put
// before, 349 after) and a read of the database one or two, so the pools
// of Config and ParseConfig call RegisterUUID on every connection
// (AfterConnect), which hands pgx the bytes as a pgtype.UUIDValuer. What
// is sent is the same in both formats
// (TestEncodeUUID); a uuid.UUID bound to a parameter of another type (a
// text one) still goes through Value, as before.

// RegisterUUID has m encode a uuid.UUID parameter from its bytes.
func RegisterUUID(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapUUID}, m.TryWrapEncodePlanFuncs...)
}

// registerTypes is the AfterConnect of Config's and ParseConfig's pools.
func registerTypes(_ context.Context, c *pgx.Conn) error {
	RegisterUUID(c.TypeMap())
	return nil
}

// tryWrapUUID wraps a uuid.UUID as uuidBytes.
func tryWrapUUID(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if u, ok := value.(uuid.UUID); ok {
		return &uuidPlan{}, uuidBytes(u), true
	}
	return nil, nil, false
}

// uuidBytes is a uuid.UUID as pgtype's UUID codec takes it.
type uuidBytes uuid.UUID

func (u uuidBytes) UUIDValue() (pgtype.UUID, error) { return pgtype.UUID{Bytes: u, Valid: true}, nil }

// uuidPlan encodes a uuid.UUID with the plan for its uuidBytes.
type uuidPlan struct{ next pgtype.EncodePlan }

func (p *uuidPlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *uuidPlan) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(uuidBytes(value.(uuid.UUID)), buf)
}
