package supplier

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ProfileType says whether a supplier is a company or a person (docs: suppliers.md "SupplierSummary").
type ProfileType string

// The profile types.
const (
	ProfileCompany    ProfileType = "COMPANY"
	ProfileIndividual ProfileType = "INDIVIDUAL"
)

// TaxIdentificationType is the kind of a supplier's tax identifier.
type TaxIdentificationType string

// The tax identification types.
const (
	TaxSSN        TaxIdentificationType = "SSN"
	TaxEIN        TaxIdentificationType = "EIN"
	TaxITIN       TaxIdentificationType = "ITIN"
	TaxGIIN       TaxIdentificationType = "GIIN"
	TaxForeignTIN TaxIdentificationType = "FOREIGN_TIN"
)

// TinVerificationStatus is the outcome of the last tax-id check.
type TinVerificationStatus string

// The TIN verification statuses (docs: suppliers.md "Enumerations").
const (
	TinMatched    TinVerificationStatus = "MATCHED"
	TinNotMatched TinVerificationStatus = "NOT_MATCHED"
	TinNoResult   TinVerificationStatus = "NO_RESULT"
	TinPending    TinVerificationStatus = "PENDING"
)

// ConnectionState is the state of the community's link with a supplier.
type ConnectionState string

// The connection states (docs: suppliers.md "Enumerations").
const (
	Connected    ConnectionState = "CONNECTED"
	Pending      ConnectionState = "PENDING"
	Disconnected ConnectionState = "DISCONNECTED"
)

// TenantType says who manages a contact or remittance address.
type TenantType string

// The tenant types.
const (
	ManagedByCommunity TenantType = "COMMUNITY"
	ManagedBySupplier  TenantType = "SUPPLIER"
)

// BankAccountType is the kind of a bank account.
type BankAccountType string

// The bank account types.
const (
	Checking BankAccountType = "CHECKING"
	Savings  BankAccountType = "SAVINGS"
)

// DepositFormat is the payment file format of a bank account.
type DepositFormat string

// The deposit formats.
const (
	DepositUnspecified DepositFormat = "UNSPECIFIED"
	DepositCCD         DepositFormat = "CCD"
	DepositCTX         DepositFormat = "CTX"
)

// TermType is how a payment term counts its days.
type TermType string

// The payment term types.
const (
	DaysAfterInvoiceDate TermType = "DAYS_AFTER_THE_INVOICE_DATE"
	OfCurrentMonth       TermType = "OF_THE_CURRENT_MONTH"
	OfFollowingMonth     TermType = "OF_THE_FOLLOWING_MONTH"
	Immediately          TermType = "IMMEDIATELY"
)

var (
	profileTypes    = []string{"COMPANY", "INDIVIDUAL"}
	taxTypes        = []string{"SSN", "EIN", "ITIN", "GIIN", "FOREIGN_TIN"}
	tinStatuses     = []string{"MATCHED", "NOT_MATCHED", "NO_RESULT", "PENDING"}
	connStates      = []string{"CONNECTED", "PENDING", "DISCONNECTED"}
	tenantTypes     = []string{"COMMUNITY", "SUPPLIER"}
	bankTypes       = []string{"CHECKING", "SAVINGS"}
	depositFormats  = []string{"UNSPECIFIED", "CCD", "CTX"}
	termTypes       = []string{"DAYS_AFTER_THE_INVOICE_DATE", "OF_THE_CURRENT_MONTH", "OF_THE_FOLLOWING_MONTH", "IMMEDIATELY"}
	errEnumNotAText = fmt.Errorf("must be a JSON string")
)

// Allowed lists the values of the enum, in the order the spec gives them.
func (ProfileType) Allowed() []string { return profileTypes }

// Allowed lists the values of the enum, in the order the spec gives them.
func (TaxIdentificationType) Allowed() []string { return taxTypes }

// Allowed lists the values of the enum, in the order the spec gives them.
func (TinVerificationStatus) Allowed() []string { return tinStatuses }

// Allowed lists the values of the enum, in the order the spec gives them.
func (ConnectionState) Allowed() []string { return connStates }

// Allowed lists the values of the enum, in the order the spec gives them.
func (TenantType) Allowed() []string { return tenantTypes }

// Allowed lists the values of the enum, in the order the spec gives them.
func (BankAccountType) Allowed() []string { return bankTypes }

// Allowed lists the values of the enum, in the order the spec gives them.
func (DepositFormat) Allowed() []string { return depositFormats }

// Allowed lists the values of the enum, in the order the spec gives them.
func (TermType) Allowed() []string { return termTypes }

// Valid reports whether v is one of the allowed values.
func (v ProfileType) Valid() bool { return slices.Contains(profileTypes, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v TaxIdentificationType) Valid() bool { return slices.Contains(taxTypes, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v TinVerificationStatus) Valid() bool { return slices.Contains(tinStatuses, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v ConnectionState) Valid() bool { return slices.Contains(connStates, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v TenantType) Valid() bool { return slices.Contains(tenantTypes, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v BankAccountType) Valid() bool { return slices.Contains(bankTypes, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v DepositFormat) Valid() bool { return slices.Contains(depositFormats, string(v)) }

// Valid reports whether v is one of the allowed values.
func (v TermType) Valid() bool { return slices.Contains(termTypes, string(v)) }

// UnmarshalJSON rejects values outside the enum.
func (v *ProfileType) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "profileType", profileTypes, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum.
func (v *TaxIdentificationType) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "taxIdentificationType", taxTypes, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum.
func (v *TinVerificationStatus) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "tinVerificationStatus", tinStatuses, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum.
func (v *ConnectionState) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "connectionState", connStates, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum.
func (v *TenantType) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "managedBy", tenantTypes, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum. JSON null is the empty value.
func (v *BankAccountType) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "bankAccountType", bankTypes, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum. JSON null is the empty value.
func (v *DepositFormat) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "depositFormat", depositFormats, (*string)(v))
}

// UnmarshalJSON rejects values outside the enum.
func (v *TermType) UnmarshalJSON(b []byte) error {
	return decodeEnum(b, "termType", termTypes, (*string)(v))
}

// decodeEnum decodes a JSON string that must be one of allowed. JSON null
// leaves the value empty (absent), as for any optional field.
func decodeEnum(b []byte, field string, allowed []string, dst *string) error {
	if string(b) == "null" {
		*dst = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: %w", field, errEnumNotAText)
	}
	i := slices.Index(allowed, s)
	if i < 0 {
		return fmt.Errorf("%s: must be one of %s (got %q)", field, strings.Join(allowed, ", "), s)
	}
	// The package's copy: the many values a store keeps share it.
	*dst = allowed[i]
	return nil
}
