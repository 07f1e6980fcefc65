// Package supplier defines the resources of the supplier read API
// (Interface A, spec sections 2.1-2.8): suppliers, their contacts and
// remittance addresses, the queries that list them, and Store, the
// interface a backend implements to serve them.
//
// Types carry the spec's exact JSON names. Optional text fields are of type
// Text, which tells no value (left out of JSON: docs: values.md "Nulls")
// from the empty string (kept: "Round trip"). Enums are typed strings whose
// UnmarshalJSON rejects unknown values. Validate checks the spec's lengths
// (in characters), email and enum rules, written as go-playground/validator
// tags on the fields, and the rules every supplier keeps beyond them.
//
// The package owns every per-field rule of a supplier, so that the stores
// and handlers apply them alike: Validate, Normalize, Equal and
// EqualContent, Clone, and the stamping rule of writes (NextStamp,
// StampWrite).
package supplier

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/procurekit/procure"
	"github.com/procurekit/procure/internal/check"
	"github.com/procurekit/procure/paging"
)

// checker checks the validator tags of the supplier types, Text as a
// string.
var checker = check.NewChecker(Text{})

// ErrNotFound is matched by the error a Store returns for a supplier that
// does not exist in the caller's community (a supplier of another community
// is not found either: docs: tenancy.md).
var ErrNotFound = errors.New("supplier not found")

// Summary is SupplierSummary (docs: suppliers.md "SupplierSummary"): an item of the supplier list.
type Summary struct {
	ID                      uuid.UUID             `json:"id"`
	CommunitySupplierID     Text                  `json:"communitySupplierId,omitzero" validate:"max=255"`
	SupplierID              Text                  `json:"supplierId,omitzero" validate:"max=255"`
	Name                    Text                  `json:"name,omitzero" validate:"max=255"`
	ProfileType             ProfileType           `json:"profileType" validate:"enum"`
	LegalBusinessName       Text                  `json:"legalBusinessName,omitzero" validate:"max=255"`
	FirstName               Text                  `json:"firstName,omitzero" validate:"max=255"`
	LastName                Text                  `json:"lastName,omitzero" validate:"max=255"`
	TaxIdentificationType   TaxIdentificationType `json:"taxIdentificationType,omitempty" validate:"omitempty,enum"`
	TaxIdentificationNumber Text                  `json:"taxIdentificationNumber,omitzero" validate:"max=255"`
	TinVerificationStatus   TinVerificationStatus `json:"tinVerificationStatus,omitempty" validate:"omitempty,enum"`
	TinLastVerifiedDate     *time.Time            `json:"tinLastVerifiedDate,omitempty" validate:"omitempty,instant"`
	ConnectionState         ConnectionState       `json:"connectionState,omitempty" validate:"omitempty,enum"`
	BusinessNumber          Text                  `json:"businessNumber,omitzero" validate:"max=255"`
	DefaultEmailAddress     Text                  `json:"defaultEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	ModifiedDate            time.Time             `json:"modifiedDate" validate:"required,instant"`
	CreatedDate             time.Time             `json:"createdDate" validate:"required,instant"`
}

// Detail is SupplierDetail (docs: suppliers.md "SupplierDetail"): a supplier in full.
type Detail struct {
	Summary
	DefaultContact           *Contact           `json:"defaultContact,omitempty"`
	DefaultRemittanceAddress *RemittanceAddress `json:"defaultRemittanceAddress,omitempty"`
	BankAccount              *BankAccount       `json:"bankAccount,omitempty"`
	Emails                   *Emails            `json:"emails,omitempty"`
	Settings                 *Settings          `json:"settings,omitempty"`
}

// Contact is SupplierContact (docs: suppliers.md "SupplierContact").
type Contact struct {
	ID           uuid.UUID  `json:"id"`
	Name         string     `json:"name" validate:"required,max=255"`
	Phone        *Phone     `json:"phone,omitempty"`
	Email        Text       `json:"email,omitzero" validate:"omitempty,max=255,email"`
	ManagedBy    TenantType `json:"managedBy,omitempty" validate:"omitempty,enum"`
	ModifiedDate time.Time  `json:"modifiedDate" validate:"required,instant"`
	CreatedDate  time.Time  `json:"createdDate" validate:"required,instant"`
}

// Phone is a contact's phone number; every part is optional.
type Phone struct {
	Prefix    Text `json:"prefix,omitzero" validate:"max=5"`
	Number    Text `json:"number,omitzero" validate:"max=20"`
	Extension Text `json:"extension,omitzero" validate:"max=20"`
}

// RemittanceAddress is where payments to a supplier are sent (docs: suppliers.md "RemittanceAddress").
type RemittanceAddress struct {
	ID           uuid.UUID  `json:"id"`
	Code         Text       `json:"code,omitzero" validate:"max=255"`
	CompanyName  Text       `json:"companyName,omitzero" validate:"max=255"`
	Address      Address    `json:"address"`
	ManagedBy    TenantType `json:"managedBy,omitempty" validate:"omitempty,enum"`
	ModifiedDate time.Time  `json:"modifiedDate" validate:"required,instant"`
	CreatedDate  time.Time  `json:"createdDate" validate:"required,instant"`
}

// Address is a postal address (docs: suppliers.md "RemittanceAddress").
type Address struct {
	Line1    string  `json:"line1" validate:"required,max=200"`
	Line2    Text    `json:"line2,omitzero" validate:"max=200"`
	Line3    Text    `json:"line3,omitzero" validate:"max=200"`
	City     string  `json:"city" validate:"required,max=200"`
	Region   *Region `json:"region,omitempty"`
	Postcode Text    `json:"postcode,omitzero" validate:"max=20"`
	Country  string  `json:"country" validate:"required,max=255"`
}

// Region is the state, province or county of an address.
type Region struct {
	Name Text `json:"name,omitzero" validate:"max=255"`
	Code Text `json:"code,omitzero" validate:"max=100"`
}

// BankAccount is the account a supplier is paid into (docs: suppliers.md "BankAccount").
type BankAccount struct {
	ID                 uuid.UUID       `json:"id"`
	Country            string          `json:"country" validate:"required,max=255"`
	BankName           Text            `json:"bankName,omitzero" validate:"max=255"`
	AccountName        Text            `json:"accountName,omitzero" validate:"max=255"`
	Address            *Address        `json:"address,omitempty"`
	AccountNumber      Text            `json:"accountNumber,omitzero" validate:"max=255"`
	RoutingNumber      Text            `json:"routingNumber,omitzero" validate:"max=255"`
	LocalAccountNumber Text            `json:"localAccountNumber,omitzero" validate:"max=255"`
	BankAccountType    BankAccountType `json:"bankAccountType,omitempty" validate:"omitempty,enum"`
	DepositFormat      DepositFormat   `json:"depositFormat,omitempty" validate:"omitempty,enum"`
}

// Emails are the addresses a supplier receives each kind of mail at (docs: suppliers.md "Emails").
type Emails struct {
	DefaultEmailAddress          Text `json:"defaultEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	RemittanceEmailAddress       Text `json:"remittanceEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	OrdersEmailAddress           Text `json:"ordersEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	InvoicingEmailAddress        Text `json:"invoicingEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	RfqsEmailAddress             Text `json:"rfqsEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	BidRequestsEmailAddress      Text `json:"bidRequestsEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	IntegrationEmailAddress      Text `json:"integrationEmailAddress,omitzero" validate:"omitempty,max=255,email"`
	CustomerCommentsEmailAddress Text `json:"customerCommentsEmailAddress,omitzero" validate:"omitempty,max=255,email"`
}

// Settings are a supplier's commercial settings (docs: suppliers.md "SupplierSettings").
type Settings struct {
	PaymentTerm *PaymentTerm `json:"paymentTerm,omitempty"`
	BuyerGroups []BuyerGroup `json:"buyerGroups,omitempty" validate:"dive"`
	Tags        []Tag        `json:"tags,omitempty" validate:"dive"`
}

// PaymentTerm is when a supplier is paid.
type PaymentTerm struct {
	ID          uuid.UUID `json:"id"`
	Code        string    `json:"code" validate:"required,max=35"`
	Active      bool      `json:"active"`
	Days        *int      `json:"days,omitempty"`
	TermType    TermType  `json:"termType" validate:"enum"`
	Description Text      `json:"description,omitzero" validate:"max=2000"`
}

// BuyerGroup is a group of buyers with access to a supplier.
type BuyerGroup struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name" validate:"required,max=255"`
}

// Tag labels a supplier.
type Tag struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name" validate:"required,max=255"`
}

// Record is everything a store keeps for one supplier: the detail, the
// keywords that the list's query searches, and the supplier's contacts and
// remittance addresses. It is the supplier entry of a data file.
type Record struct {
	Detail
	Keywords            []string            `json:"keywords,omitempty" validate:"dive,max=255"`
	Contacts            []Contact           `json:"contacts,omitempty" validate:"dive"`
	RemittanceAddresses []RemittanceAddress `json:"remittanceAddresses,omitempty" validate:"dive"`
}

// Validate checks r against the spec's field rules: lengths in characters,
// email formats, enum values, required fields, non-nil ids and contact and
// address ids unique within the supplier, and that
// every text is storable (check.Storable: docs: values.md "Text"). It
// returns nil or a *procure.ValidationError whose field names are JSON
// paths. It is the one check of a supplier: data files and every write of
// every store go through it (ValidateWrite, ValidateContact and
// ValidateRemittanceAddress apply it to a write's parts).
func (r *Record) Validate() error {
	verr := &procure.ValidationError{Source: procure.SourceData}
	if err := checker.Struct(procure.SourceData, r); err != nil {
		var v *procure.ValidationError
		if !errors.As(err, &v) {
			return err
		}
		verr.Fields = append(verr.Fields, v.Fields...)
	}
	nilID := func(field string, id uuid.UUID) {
		if id == uuid.Nil {
			verr.Add(field, "is required (a non-nil UUID)")
		}
	}
	nilID("id", r.ID)
	if c := r.DefaultContact; c != nil {
		nilID("defaultContact.id", c.ID)
	}
	if a := r.DefaultRemittanceAddress; a != nil {
		nilID("defaultRemittanceAddress.id", a.ID)
	}
	if b := r.BankAccount; b != nil {
		nilID("bankAccount.id", b.ID)
	}
	if s := r.Settings; s != nil {
		if s.PaymentTerm != nil {
			nilID("settings.paymentTerm.id", s.PaymentTerm.ID)
		}
		for i, g := range s.BuyerGroups {
			nilID("settings.buyerGroups["+itoa(i)+"].id", g.ID)
		}
		for i, t := range s.Tags {
			nilID("settings.tags["+itoa(i)+"].id", t.ID)
		}
	}
	for i, c := range r.Contacts {
		nilID("contacts["+itoa(i)+"].id", c.ID)
		if c.ID != uuid.Nil && slices.ContainsFunc(r.Contacts[:i], func(o Contact) bool { return o.ID == c.ID }) {
			verr.Add("contacts["+itoa(i)+"].id", "duplicate contact id "+c.ID.String()+" within the supplier")
		}
	}
	for i, a := range r.RemittanceAddresses {
		nilID("remittanceAddresses["+itoa(i)+"].id", a.ID)
		if a.ID != uuid.Nil && slices.ContainsFunc(r.RemittanceAddresses[:i], func(o RemittanceAddress) bool { return o.ID == a.ID }) {
			verr.Add("remittanceAddresses["+itoa(i)+"].id", "duplicate remittance address id "+a.ID.String()+" within the supplier")
		}
	}
	checkStorable(verr, r)
	return verr.Err()
}

// Normalize puts every date-time of r in UTC, truncated to microseconds
// (what PostgreSQL keeps), so that a value read back from any store compares
// equal and encodes as RFC 3339 with a Z (docs: filters.md).
func (r *Record) Normalize() {
	norm := func(t *time.Time) { *t = NormalizeTime(*t) }
	norm(&r.ModifiedDate)
	norm(&r.CreatedDate)
	if r.TinLastVerifiedDate != nil {
		t := NormalizeTime(*r.TinLastVerifiedDate)
		r.TinLastVerifiedDate = &t
	}
	if c := r.DefaultContact; c != nil {
		norm(&c.ModifiedDate)
		norm(&c.CreatedDate)
	}
	if a := r.DefaultRemittanceAddress; a != nil {
		norm(&a.ModifiedDate)
		norm(&a.CreatedDate)
	}
	for i := range r.Contacts {
		norm(&r.Contacts[i].ModifiedDate)
		norm(&r.Contacts[i].CreatedDate)
	}
	for i := range r.RemittanceAddresses {
		norm(&r.RemittanceAddresses[i].ModifiedDate)
		norm(&r.RemittanceAddresses[i].CreatedDate)
	}
}

// NormalizeTime returns t in UTC truncated to microseconds.
func NormalizeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Sort fields and default orders of the three lists (docs: suppliers.md "Endpoints",
// docs: paging.md).
var (
	ListPaging = paging.Spec{
		SortFields:  []string{"name", "createdDate", "modifiedDate"},
		DefaultSort: paging.Sort{Field: "name"},
	}
	ContactPaging = paging.Spec{
		DefaultSort: paging.Sort{Field: "name"},
	}
	AddressPaging = paging.Spec{
		SortFields:  []string{"companyName", "modifiedDate"},
		DefaultSort: paging.Sort{Field: "companyName"},
	}
)

// MaxQueryLength is the longest query the supplier list accepts.
const MaxQueryLength = 255

// ListQuery selects a page of a community's suppliers.
type ListQuery struct {
	// Query, when not empty, keeps suppliers whose name, legal business
	// name, supplierId or any keyword starts with it, ignoring case and
	// accents (docs: filters.md: both sides in NFD without combining
	// marks, case-folded).
	Query string
	// ModifiedSince, when not zero, keeps suppliers whose modifiedDate is
	// at or after it.
	ModifiedSince time.Time
	// Page is the page, size and sort; Sort.Field is one of ListPaging's.
	Page paging.Request
}

// AddressQuery selects a page of one supplier's remittance addresses.
type AddressQuery struct {
	// ModifiedSince, when not zero, keeps addresses whose modifiedDate is
	// at or after it.
	ModifiedSince time.Time
	// Page is the page, size and sort; Sort.Field is one of AddressPaging's.
	Page paging.Request
}

// Store is the read side of the supplier API, scoped by community.
//
// Ordering (docs: paging.md), which every implementation follows
// exactly: string keys compare as people read them (the Unicode Collation
// Algorithm, root locale: case and accents ignored first, then at full
// strength, then bytes; internal/textkey computes the keys); null or
// empty values sort after all others in both directions;
// ties break on id ascending (in both directions), so paging through a list
// meets every record exactly once. Date keys compare as instants.
//
// Methods are safe for concurrent use. Values returned may share memory
// with the store: callers must treat them as read-only.
type Store interface {
	// ListSuppliers returns one page of the community's suppliers that
	// match q, with the total count of matches. A page past the end has
	// no items and the true totals.
	ListSuppliers(ctx context.Context, community string, q ListQuery) (paging.Page[Summary], error)

	// Supplier returns one supplier in full, or an error matching
	// ErrNotFound when the community has no supplier with that id.
	Supplier(ctx context.Context, community string, id uuid.UUID) (Detail, error)

	// ListContacts returns one page of the supplier's contacts, ordered by
	// name. It returns an error matching ErrNotFound when the community
	// has no such supplier.
	ListContacts(ctx context.Context, community string, supplierID uuid.UUID, p paging.Request) (paging.Page[Contact], error)

	// ListRemittanceAddresses returns one page of the supplier's
	// remittance addresses that match q. It returns an error matching
	// ErrNotFound when the community has no such supplier.
	ListRemittanceAddresses(ctx context.Context, community string, supplierID uuid.UUID, q AddressQuery) (paging.Page[RemittanceAddress], error)
}

// Appender is an optional capability of a Store, found by type assertion:
// AppendSuppliers answers exactly as ListSuppliers does, but writes the
// page's items into buf when buf has room for them, so a caller that
// reuses buf (a pooled buffer of MaxPageSize items, say) lists without
// allocating. The returned Content may then alias buf: the caller must be
// done with it before reusing buf.
type Appender interface {
	AppendSuppliers(ctx context.Context, community string, q ListQuery, buf []Summary) (paging.Page[Summary], error)
}

// Viewer is an optional capability of a Store, found by type assertion:
// ViewSupplier answers as Supplier does, but lends the detail to view for
// the duration of the call instead of returning one made for the caller,
// so that a caller that encodes it at once (an HTTP handler) reads a
// supplier without allocating. The detail and whatever it points to may
// be reused once view returns: view must not keep them (its strings it
// may: strings are immutable). view is not called when the supplier is
// not found (an error matching ErrNotFound); its error is ViewSupplier's.
type Viewer interface {
	ViewSupplier(ctx context.Context, community string, id uuid.UUID, view func(*Detail) error) error
}

func itoa(i int) string { return strconv.Itoa(i) }
