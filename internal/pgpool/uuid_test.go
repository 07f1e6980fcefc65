package pgpool

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/procurekit/procure/internal/pgtest"
)

// A registered map sends a uuid.UUID as the default one does, in both
// formats, without its Value: the bytes for a uuid parameter, the text
// for a text one.
func TestEncodeUUID(t *testing.T) {
	id := uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	def, reg := pgtype.NewMap(), pgtype.NewMap()
	RegisterUUID(reg)
	for _, c := range []struct {
		name   string
		oid    uint32
		format int16
		want   []byte
	}{
		{"uuid, binary", pgtype.UUIDOID, pgtype.BinaryFormatCode, id[:]},
		{"uuid, text", pgtype.UUIDOID, pgtype.TextFormatCode, []byte(id.String())},
		{"text, text", pgtype.TextOID, pgtype.TextFormatCode, []byte(id.String())},
		{"text, binary", pgtype.TextOID, pgtype.BinaryFormatCode, []byte(id.String())},
		// The simple protocol's: no parameter type known.
		{"unknown, text", 0, pgtype.TextFormatCode, []byte(id.String())},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := reg.Encode(c.oid, c.format, id, nil)
			if err != nil {
				t.Fatal(err)
			}
			was, err := def.Encode(c.oid, c.format, id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.want) || !bytes.Equal(was, c.want) {
				t.Errorf("sent %q (the default map: %q); want %q", got, was, c.want)
			}
		})
	}
	plan := reg.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id)
	if _, ok := plan.(*uuidPlan); !ok {
		t.Errorf("a uuid parameter's plan is %T; want the bytes' (*uuidPlan)", plan)
	}
	if _, ok := def.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id).(*uuidPlan); ok {
		t.Error("the default map has the plan too")
	}
}

// The pools Config and ParseConfig make register it on each connection.
func TestConfigRegistersUUID(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	cfg, _, err := Config(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]*pgxpool.Config{"Config": cfg, "ParseConfig": parsed} {
		t.Run(name, func(t *testing.T) {
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			c, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Release()
			id := uuid.New()
			if _, ok := c.Conn().TypeMap().PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id).(*uuidPlan); !ok {
				t.Fatal("the connection's map does not encode a uuid.UUID from its bytes")
			}
			var back uuid.UUID
			var text string
			if err := c.QueryRow(ctx, "SELECT $1::uuid, $1::uuid::text", id).Scan(&back, &text); err != nil {
				t.Fatal(err)
			}
			if back != id || text != id.String() {
				t.Errorf("the database got %v (%s); want %v", back, text, id)
			}
		})
	}
}

// BenchmarkEncodeUUID: a uuid.UUID parameter through pgx's driver.Valuer
// path (default) and from its bytes (registered).
func BenchmarkEncodeUUID(b *testing.B) {
	id := uuid.New()
	reg := pgtype.NewMap()
	RegisterUUID(reg)
	for name, m := range map[string]*pgtype.Map{"default": pgtype.NewMap(), "registered": reg} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 64)
			for b.Loop() {
				if _, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
