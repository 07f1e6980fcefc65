-- 0001: the whole schema of pgstore.
--
-- Tenancy: every row carries community_id and every query filters on it.
--
-- Ordering (docs: paging.md): string sort keys are lower-cased by the
-- application (Go's strings.ToLower, as memstore does, independent of the
-- database's locale), compared in byte order (COLLATE "C"), NULL when the
-- value is empty so that NULLS LAST puts them after all others in both
-- directions; ties break on id ascending.
--
-- Suppliers are written only by the data-file import, which replaces a
-- community's suppliers whole. So the import stores, for each of the six
-- orders of the supplier list (name, createdDate, modifiedDate; asc and
-- desc), each supplier's 0-based position in that order: a page of the
-- unfiltered list is then a range scan on (community_id, pos_*), however
-- deep, and filtered lists are sorted by the same columns.

CREATE TABLE communities (
    id             text PRIMARY KEY,
    name           text NOT NULL DEFAULT '',
    region         text NOT NULL,
    auto_roles     text[] NOT NULL DEFAULT '{}',
    supplier_count bigint NOT NULL DEFAULT 0,
    -- SHA-256 of the community's entry of the last imported data file:
    -- re-importing an unchanged community is skipped.
    content_hash   bytea,
    imported_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE suppliers (
    community_id              text NOT NULL,
    id                        uuid NOT NULL,
    community_supplier_id     text NOT NULL DEFAULT '',
    supplier_id               text NOT NULL DEFAULT '',
    name                      text NOT NULL DEFAULT '',
    profile_type              text NOT NULL,
    legal_business_name       text NOT NULL DEFAULT '',
    first_name                text NOT NULL DEFAULT '',
    last_name                 text NOT NULL DEFAULT '',
    tax_identification_type   text NOT NULL DEFAULT '',
    tax_identification_number text NOT NULL DEFAULT '',
    tin_verification_status   text NOT NULL DEFAULT '',
    tin_last_verified_date    timestamptz,
    connection_state          text NOT NULL DEFAULT '',
    business_number           text NOT NULL DEFAULT '',
    default_email_address     text NOT NULL DEFAULT '',
    modified_date             timestamptz NOT NULL,
    created_date              timestamptz NOT NULL,
    keywords                  text[] NOT NULL DEFAULT '{}',
    -- defaultContact, defaultRemittanceAddress, bankAccount, emails and
    -- settings of SupplierDetail, as one JSON object (NULL when none).
    details                   json,
    pos_name_asc              integer NOT NULL,
    pos_name_desc             integer NOT NULL,
    pos_created_asc           integer NOT NULL,
    pos_created_desc          integer NOT NULL,
    pos_modified_asc          integer NOT NULL,
    pos_modified_desc         integer NOT NULL,
    PRIMARY KEY (community_id, id)
);

CREATE UNIQUE INDEX suppliers_pos_name_asc ON suppliers (community_id, pos_name_asc);
CREATE UNIQUE INDEX suppliers_pos_name_desc ON suppliers (community_id, pos_name_desc);
CREATE UNIQUE INDEX suppliers_pos_created_asc ON suppliers (community_id, pos_created_asc);
CREATE UNIQUE INDEX suppliers_pos_created_desc ON suppliers (community_id, pos_created_desc);
CREATE UNIQUE INDEX suppliers_pos_modified_asc ON suppliers (community_id, pos_modified_asc);
CREATE UNIQUE INDEX suppliers_pos_modified_desc ON suppliers (community_id, pos_modified_desc);
-- modifiedSince: a range on modified_date; the position in modified order is
-- included so that the count of a modifiedSince filter is one index probe.
CREATE INDEX suppliers_modified ON suppliers (community_id, modified_date, id) INCLUDE (pos_modified_asc);

-- The words the list's query matches by prefix: the lower-cased name, legal
-- business name, supplierId and keywords of each supplier. One index serves
-- all four fields. Each term carries its supplier's modified_date and
-- positions, so that a query (with or without modifiedSince) is counted and
-- paged from this index alone; only the suppliers of the page are then
-- read, by position.
--
-- A supplier matching on several terms is counted once without DISTINCT:
-- lcp_prev is the length in bytes of the longest common prefix of the term
-- and the supplier's previous term in byte order (0 for its first). Of a
-- supplier's terms that start with a prefix p, exactly the first has
-- lcp_prev < length(p). (A term that is a prefix of another term of the
-- same supplier is not stored: the longer one matches whatever it does.)
CREATE TABLE supplier_terms (
    community_id      text NOT NULL,
    term              text COLLATE "C" NOT NULL,
    supplier_id       uuid NOT NULL,
    modified_date     timestamptz NOT NULL,
    lcp_prev          integer NOT NULL,
    pos_name_asc      integer NOT NULL,
    pos_name_desc     integer NOT NULL,
    pos_created_asc   integer NOT NULL,
    pos_created_desc  integer NOT NULL,
    pos_modified_asc  integer NOT NULL,
    pos_modified_desc integer NOT NULL,
    PRIMARY KEY (community_id, term, supplier_id)
        INCLUDE (lcp_prev, modified_date, pos_name_asc, pos_name_desc, pos_created_asc, pos_created_desc, pos_modified_asc, pos_modified_desc)
);

CREATE TABLE supplier_contacts (
    community_id  text NOT NULL,
    supplier_id   uuid NOT NULL,
    id            uuid NOT NULL,
    name_key      text COLLATE "C",
    doc           json NOT NULL,
    PRIMARY KEY (community_id, supplier_id, id)
);
CREATE INDEX supplier_contacts_name ON supplier_contacts (community_id, supplier_id, name_key NULLS LAST, id);

CREATE TABLE remittance_addresses (
    community_id     text NOT NULL,
    supplier_id      uuid NOT NULL,
    id               uuid NOT NULL,
    company_name_key text COLLATE "C",
    modified_date    timestamptz NOT NULL,
    doc              json NOT NULL,
    PRIMARY KEY (community_id, supplier_id, id)
);
CREATE INDEX remittance_addresses_company ON remittance_addresses (community_id, supplier_id, company_name_key NULLS LAST, id);

-- Bearer tokens of the supplier API, by the SHA-256 of the token (the
-- token itself is never stored).
CREATE TABLE tokens (
    hash         bytea PRIMARY KEY CHECK (length(hash) = 32),
    community_id text NOT NULL,
    scopes       text[] NOT NULL DEFAULT '{}',
    expires      timestamptz,
    revoked      boolean NOT NULL DEFAULT false
);
CREATE INDEX tokens_community ON tokens (community_id);

-- Service accounts of the user API and their keys (SHA-256 hashes).
CREATE TABLE service_accounts (
    id           text PRIMARY KEY,
    community_id text NOT NULL,
    allowed_ips  cidr[] NOT NULL DEFAULT '{}'
);
CREATE INDEX service_accounts_community ON service_accounts (community_id);

CREATE TABLE service_account_keys (
    account_id text NOT NULL REFERENCES service_accounts (id) ON DELETE CASCADE,
    ord        integer NOT NULL,
    hash       bytea NOT NULL CHECK (length(hash) = 32),
    active     boolean NOT NULL,
    PRIMARY KEY (account_id, ord)
);

-- Users of the user API. Ids are unique across the service, usernames per
-- community case-insensitively (username_key is the lower-cased username,
-- computed by the application as memstore does); both are enforced here,
-- so concurrent creates on any number of nodes cannot duplicate either.
CREATE TABLE users (
    id                 text NOT NULL,
    community_id       text NOT NULL,
    username           text NOT NULL,
    username_key       text COLLATE "C" NOT NULL,
    external_id        text NOT NULL DEFAULT '',
    first_name         text NOT NULL DEFAULT '',
    last_name          text NOT NULL DEFAULT '',
    display_name       text NOT NULL DEFAULT '',
    email              text NOT NULL DEFAULT '',
    phone              text NOT NULL DEFAULT '',
    enabled            boolean NOT NULL DEFAULT true,
    organisation_units jsonb NOT NULL DEFAULT '[]',
    roles              jsonb NOT NULL DEFAULT '[]',
    buyer_groups       jsonb NOT NULL DEFAULT '[]',
    attributes         jsonb NOT NULL DEFAULT '[]',
    approver_groups    jsonb NOT NULL DEFAULT '[]',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX users_community_username ON users (community_id, username_key);

-- The budget table of Interface C's table option, per community.
CREATE TABLE budgets (
    community_id text NOT NULL,
    account      text NOT NULL,
    budget       numeric NOT NULL,
    PRIMARY KEY (community_id, account)
);
