package scim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/procurekit/procure/httpapi/internal/httpx"
)

// The discovery documents of the SCIM endpoint (RFC 7644 4): what it
// supports, its one resource type, and the schemas of the attributes a
// user holds. They are built once; only meta.location depends on the
// request (the placeholder scimBaseMark).

const scimBaseMark = "\x00base\x00"

type scimAttr struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	MultiValued bool   `json:"multiValued"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	CaseExact   bool   `json:"caseExact"`
	Mutability  string `json:"mutability"`
	Returned    string `json:"returned"`
	Uniqueness  string `json:"uniqueness"`
	// CanonicalValues are the values RFC 7643 suggests for a type
	// sub-attribute; identity providers read them when mapping.
	CanonicalValues []string   `json:"canonicalValues,omitempty"`
	SubAttributes   []scimAttr `json:"subAttributes,omitempty"`
}

func attr(name, typ, description string, opts ...func(*scimAttr)) scimAttr {
	a := scimAttr{Name: name, Type: typ, Description: description, Mutability: "readWrite", Returned: "default", Uniqueness: "none"}
	for _, o := range opts {
		o(&a)
	}
	return a
}

func multi(a *scimAttr) { a.MultiValued = true }
func canonical(values ...string) func(*scimAttr) {
	return func(a *scimAttr) { a.CanonicalValues = values }
}
func exact(a *scimAttr) { a.CaseExact = true }
func sub(subs ...scimAttr) func(*scimAttr) {
	return func(a *scimAttr) { a.SubAttributes = subs }
}

var (
	codeAttrs = sub(attr("code", "string", "The code (at most 255 characters), unique within the list.", exact))
	scimCore  = []scimAttr{
		attr("userName", "string", "The username (Interface B's username): unique in the community, compared case-insensitively; at most 255 characters.",
			func(a *scimAttr) { a.Required, a.Uniqueness = true, "server" }),
		attr("externalId", "string", "The identity provider's id of the user (Interface B's externalId).", exact),
		attr("name", "complex", "The user's name; only givenName and familyName are held.", sub(
			attr("givenName", "string", "First name (Interface B's firstName)."),
			attr("familyName", "string", "Last name (Interface B's lastName)."))),
		attr("displayName", "string", "Display name (Interface B's displayName)."),
		attr("emails", "complex", "The user holds one e-mail address (Interface B's email): on input the primary one, else the first of type work, else the first; on output one entry of type work, primary.",
			multi, sub(
				attr("value", "string", "The address."),
				attr("type", "string", "Always work on output.", canonical("work", "home", "other")),
				attr("primary", "boolean", "Always true on output."))),
		attr("phoneNumbers", "complex", "The user holds one phone number (Interface B's phone): on input the primary one, else the first; on output one entry of type work.",
			multi, sub(
				attr("value", "string", "The number."),
				attr("type", "string", "Always work on output.", canonical("work", "home", "mobile", "fax", "pager", "other")))),
		attr("active", "boolean", "Whether the user can log in (Interface B's enabled). Defaults to true on create; the strings \"True\" and \"False\" are accepted."),
	}
	scimExtensionAttrs = []scimAttr{
		attr("organisationUnits", "complex", "Organisation units of the user.", multi, codeAttrs),
		attr("roleCodes", "complex", "Role codes of the user; the community's auto-roles are added on every create and update. "+
			"Named so as not to redefine the core attribute roles (RFC 7643 3.3); input under the former name roles is still accepted.", multi, codeAttrs),
		attr("buyerGroups", "complex", "Buyer groups of the user.", multi, codeAttrs),
		attr("approverGroups", "complex", "Approver groups of the user.", multi, codeAttrs),
		attr("attributes", "complex", "Custom attributes, unique by name.", multi, sub(
			attr("name", "string", "At most 20 characters.", exact),
			attr("value", "string", "At most 20 characters.", exact))),
	}
)

type scimDocMeta struct {
	ResourceType string `json:"resourceType"`
	Location     string `json:"location"`
}

type scimSchemaDoc struct {
	Schemas     []string    `json:"schemas"`
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Attributes  []scimAttr  `json:"attributes"`
	Meta        scimDocMeta `json:"meta"`
}

var scimSchemaDocs = []scimSchemaDoc{
	{Schemas: []string{scimSchemaSchema}, ID: scimUserSchema, Name: "User", Description: "User account (the attributes a procure user holds)",
		Attributes: scimCore, Meta: scimDocMeta{ResourceType: "Schema", Location: scimBaseMark + "/Schemas/" + scimUserSchema}},
	{Schemas: []string{scimSchemaSchema}, ID: ExtensionSchema, Name: "ProcureUser", Description: "The procurement attributes of a user",
		Attributes: scimExtensionAttrs, Meta: scimDocMeta{ResourceType: "Schema", Location: scimBaseMark + "/Schemas/" + ExtensionSchema}},
}

type scimResourceTypeDoc struct {
	Schemas          []string `json:"schemas"`
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Endpoint         string   `json:"endpoint"`
	Description      string   `json:"description"`
	Schema           string   `json:"schema"`
	SchemaExtensions []struct {
		Schema   string `json:"schema"`
		Required bool   `json:"required"`
	} `json:"schemaExtensions"`
	Meta scimDocMeta `json:"meta"`
}

var scimUserResourceType = func() scimResourceTypeDoc {
	d := scimResourceTypeDoc{Schemas: []string{scimResourceTypeURN}, ID: "User", Name: "User", Endpoint: "/Users",
		Description: "A buyer of the community", Schema: scimUserSchema,
		Meta: scimDocMeta{ResourceType: "ResourceType", Location: scimBaseMark + "/ResourceTypes/User"}}
	d.SchemaExtensions = append(d.SchemaExtensions, struct {
		Schema   string `json:"schema"`
		Required bool   `json:"required"`
	}{ExtensionSchema, false})
	return d
}()

type scimSupported struct {
	Supported bool `json:"supported"`
}

var scimSPC = struct {
	Schemas          []string      `json:"schemas"`
	DocumentationURI string        `json:"documentationUri"`
	Patch            scimSupported `json:"patch"`
	Bulk             struct {
		Supported      bool `json:"supported"`
		MaxOperations  int  `json:"maxOperations"`
		MaxPayloadSize int  `json:"maxPayloadSize"`
	} `json:"bulk"`
	Filter struct {
		Supported  bool `json:"supported"`
		MaxResults int  `json:"maxResults"`
	} `json:"filter"`
	ChangePassword        scimSupported `json:"changePassword"`
	Sort                  scimSupported `json:"sort"`
	ETag                  scimSupported `json:"etag"`
	AuthenticationSchemes []struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Primary     bool   `json:"primary"`
	} `json:"authenticationSchemes"`
	Meta scimDocMeta `json:"meta"`
}{
	Schemas:          []string{scimSPCSchema},
	DocumentationURI: scimDocumentationLink,
	Patch:            scimSupported{true},
	Filter: struct {
		Supported  bool `json:"supported"`
		MaxResults int  `json:"maxResults"`
	}{true, scimMaxResults},
	ETag: scimSupported{true},
	AuthenticationSchemes: []struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Primary     bool   `json:"primary"`
	}{{
		Type: "oauthbearertoken", Name: "Service account API key", Primary: true,
		Description: "Authorization: Bearer <API key of a service account of the community>. " +
			"DELETE /Users/{id} disables the user and answers 204: buyers are never deleted, since requisitions and approvals refer to them.",
	}},
	Meta: scimDocMeta{ResourceType: "ServiceProviderConfig", Location: scimBaseMark + "/ServiceProviderConfig"},
}

// scimDoc is a discovery document encoded once, with the base URL mark.
type scimDoc []byte

func mustSCIMDoc(v any) scimDoc {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	// The mark is encoded as \u0000base\u0000.
	return bytes.ReplaceAll(buf.Bytes(), []byte(`\u0000base\u0000`), []byte(scimBaseMark))
}

var (
	scimSPCDoc           = mustSCIMDoc(scimSPC)
	scimResourceTypeDoc1 = mustSCIMDoc(scimUserResourceType)
	scimResourceTypesDoc = mustSCIMDoc(struct {
		Schemas      []string              `json:"schemas"`
		TotalResults int                   `json:"totalResults"`
		StartIndex   int                   `json:"startIndex"`
		ItemsPerPage int                   `json:"itemsPerPage"`
		Resources    []scimResourceTypeDoc `json:"Resources"`
	}{scimListSchemas, 1, 1, 1, []scimResourceTypeDoc{scimUserResourceType}})
	scimSchemasDoc = mustSCIMDoc(struct {
		Schemas      []string        `json:"schemas"`
		TotalResults int             `json:"totalResults"`
		StartIndex   int             `json:"startIndex"`
		ItemsPerPage int             `json:"itemsPerPage"`
		Resources    []scimSchemaDoc `json:"Resources"`
	}{scimListSchemas, len(scimSchemaDocs), 1, len(scimSchemaDocs), scimSchemaDocs})
	scimSchemaDocByID = map[string]scimDoc{
		strings.ToLower(scimUserSchema):  mustSCIMDoc(scimSchemaDocs[0]),
		strings.ToLower(ExtensionSchema): mustSCIMDoc(scimSchemaDocs[1]),
	}
)

// serveDoc answers with doc, its base URL mark replaced by the request's.
func (a *scimAPI) serveDoc(w http.ResponseWriter, r *http.Request, doc scimDoc) {
	base, _ := json.Marshal(a.base(r))
	body := bytes.ReplaceAll(doc, []byte(scimBaseMark), base[1:len(base)-1])
	h := w.Header()
	h["Content-Type"] = hdrSCIM
	h["Content-Length"] = httpx.ContentLength(len(body))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func (a *scimAPI) serviceProviderConfig(w http.ResponseWriter, r *http.Request) error {
	a.serveDoc(w, r, scimSPCDoc)
	return nil
}

func (a *scimAPI) resourceTypes(w http.ResponseWriter, r *http.Request) error {
	a.serveDoc(w, r, scimResourceTypesDoc)
	return nil
}

func (a *scimAPI) resourceType(w http.ResponseWriter, r *http.Request) error {
	if !strings.EqualFold(r.PathValue("name"), "User") {
		return newSCIMError(http.StatusNotFound, "", "no resource type "+r.PathValue("name")+" (this endpoint has User only)")
	}
	a.serveDoc(w, r, scimResourceTypeDoc1)
	return nil
}

func (a *scimAPI) schemas(w http.ResponseWriter, r *http.Request) error {
	a.serveDoc(w, r, scimSchemasDoc)
	return nil
}

func (a *scimAPI) schema(w http.ResponseWriter, r *http.Request) error {
	doc, ok := scimSchemaDocByID[strings.ToLower(r.PathValue("id"))]
	if !ok {
		return newSCIMError(http.StatusNotFound, "", "no schema "+r.PathValue("id"))
	}
	a.serveDoc(w, r, doc)
	return nil
}
