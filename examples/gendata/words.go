package main

// word is a piece of text with an ASCII slug for addresses built from it.
type word struct{ text, slug string }

// The word lists mix plain ASCII with accented Latin, macrons, CJK, Greek
// and Cyrillic text, leading lower-case letters (sorting is
// case-insensitive) and one emoji, as real supplier masters do.
var companyFirst = []word{
	{"Acme", "acme"}, {"Alpine", "alpine"}, {"Anchor", "anchor"}, {"Apex", "apex"},
	{"Atlas", "atlas"}, {"Aurora", "aurora"}, {"Banksia", "banksia"}, {"Beacon", "beacon"},
	{"Bluegum", "bluegum"}, {"Bright", "bright"}, {"Canterbury", "canterbury"}, {"Cedar", "cedar"},
	{"Coastal", "coastal"}, {"Copper", "copper"}, {"Crown", "crown"}, {"Delta", "delta"},
	{"Eastside", "eastside"}, {"Emerald", "emerald"}, {"Evergreen", "evergreen"}, {"Falcon", "falcon"},
	{"Fern", "fern"}, {"Frontier", "frontier"}, {"Golden", "golden"}, {"Granite", "granite"},
	{"Harbour", "harbour"}, {"Highland", "highland"}, {"Horizon", "horizon"}, {"Ironbark", "ironbark"},
	{"Jade", "jade"}, {"Kauri", "kauri"}, {"Kestrel", "kestrel"}, {"Lakeside", "lakeside"},
	{"Liberty", "liberty"}, {"Meridian", "meridian"}, {"Metro", "metro"}, {"Northern", "northern"},
	{"Oakwood", "oakwood"}, {"Pacific", "pacific"}, {"Pinnacle", "pinnacle"}, {"Pioneer", "pioneer"},
	{"Redwood", "redwood"}, {"Riverside", "riverside"}, {"Sapphire", "sapphire"}, {"Southern", "southern"},
	{"Summit", "summit"}, {"Sunrise", "sunrise"}, {"Tasman", "tasman"}, {"Titan", "titan"},
	{"Totara", "totara"}, {"Union", "union"}, {"Vertex", "vertex"}, {"Wattle", "wattle"},
	{"Westfield", "westfield"}, {"Zenith", "zenith"},
	{"Ōtautahi", "otautahi"}, {"Kōwhai", "kowhai"}, {"Café", "cafe"}, {"Zürich", "zurich"},
	{"Øresund", "oresund"}, {"São Paulo", "saopaulo"}, {"Ærø", "aero"}, {"Łódź", "lodz"},
	{"Škoda", "skoda"}, {"Église", "eglise"}, {"Ñandú", "nandu"}, {"Ångström", "angstrom"},
	{"さくら", "sakura"}, {"北京", "beijing"}, {"한빛", "hanbit"}, {"Αθηνά", "athina"},
	{"Москва", "moskva"}, {"eBay", "ebay"}, {"iFix", "ifix"}, {"d'Arcy", "darcy"},
	{"🌿 Green Leaf", "greenleaf"}, {"3M", "threem"}, {"1st Choice", "firstchoice"},
}

var companyTrade = []word{
	{"Plumbing", "plumbing"}, {"Catering", "catering"}, {"Stationery", "stationery"},
	{"Electrical", "electrical"}, {"Medical Supplies", "medical"}, {"Logistics", "logistics"},
	{"Cleaning Services", "cleaning"}, {"IT Solutions", "it"}, {"Laboratory Supplies", "lab"},
	{"Furniture", "furniture"}, {"Printing", "printing"}, {"Security", "security"},
	{"Engineering", "engineering"}, {"Consulting", "consulting"}, {"Hardware", "hardware"},
	{"Pharmaceuticals", "pharma"}, {"Travel", "travel"}, {"Landscaping", "landscaping"},
	{"Uniforms", "uniforms"}, {"Scientific", "scientific"}, {"Café & Bakery", "bakery"},
	{"Élévateurs", "elevateurs"}, {"Büromöbel", "buromobel"}, {"Kaimoana", "kaimoana"},
	{"Telecom", "telecom"}, {"Facilities", "facilities"}, {"Couriers", "couriers"},
}

var companySuffix = []string{
	"", "", "", "Ltd", "Limited", "Pty Ltd", "LLC", "Inc.", "Co.", "GmbH", "& Sons", "& Söhne", "Group",
}

var legalSuffix = []string{"Pty Ltd", "Limited", "LLC", "Incorporated", "Holdings Limited", "GmbH", "S.A.", "K.K."}

var firstNames = []word{
	{"Olivia", "olivia"}, {"Liam", "liam"}, {"Charlotte", "charlotte"}, {"Noah", "noah"},
	{"Amelia", "amelia"}, {"Jack", "jack"}, {"Isla", "isla"}, {"William", "william"},
	{"Mia", "mia"}, {"Oliver", "oliver"}, {"Ava", "ava"}, {"James", "james"},
	{"Grace", "grace"}, {"Lucas", "lucas"}, {"Emily", "emily"}, {"Henry", "henry"},
	{"Sophie", "sophie"}, {"Thomas", "thomas"}, {"Ruby", "ruby"}, {"Samuel", "samuel"},
	{"Zoë", "zoe"}, {"José", "jose"}, {"Łukasz", "lukasz"}, {"Aroha", "aroha"},
	{"Mātene", "matene"}, {"Søren", "soren"}, {"Chloé", "chloe"}, {"Björn", "bjorn"},
	{"Anaïs", "anais"}, {"Siobhán", "siobhan"}, {"Nguyễn", "nguyen"}, {"Ōkawa", "okawa"},
	{"Yūki", "yuki"}, {"陈", "chen"}, {"Priya", "priya"}, {"Mohammed", "mohammed"},
	{"Dmitri", "dmitri"}, {"Αλέξανδρος", "alexandros"}, {"Ngaio", "ngaio"}, {"Tāne", "tane"},
}

var lastNames = []word{
	{"Smith", "smith"}, {"Jones", "jones"}, {"Williams", "williams"}, {"Brown", "brown"},
	{"Wilson", "wilson"}, {"Taylor", "taylor"}, {"Anderson", "anderson"}, {"Thompson", "thompson"},
	{"Nguyen", "nguyen"}, {"Walker", "walker"}, {"Harris", "harris"}, {"Martin", "martin"},
	{"Patel", "patel"}, {"Kelly", "kelly"}, {"Clarke", "clarke"}, {"Robinson", "robinson"},
	{"Müller", "muller"}, {"García", "garcia"}, {"O'Brien", "obrien"}, {"Ngata", "ngata"},
	{"Te Whare", "tewhare"}, {"Øvergaard", "overgaard"}, {"Kowalczyk", "kowalczyk"}, {"Dubois", "dubois"},
	{"van der Berg", "vanderberg"}, {"de la Cruz", "delacruz"}, {"Σταυρόπουλος", "stavropoulos"},
	{"Иванов", "ivanov"}, {"田中", "tanaka"}, {"Kim", "kim"}, {"Wēpū", "wepu"}, {"Fa'asua", "faasua"},
}

var keywordList = []string{
	"plumbing", "catering", "stationery", "electrical", "medical", "logistics", "cleaning",
	"software", "laboratory", "furniture", "printing", "security", "engineering", "consulting",
	"hardware", "pharmacy", "travel", "landscaping", "uniforms", "scientific", "bakery",
	"telecom", "facilities", "courier", "office", "safety", "ppe", "recycling", "signage",
	"électricité", "büro", "ōrite", "食品", "vending",
}

var streets = []string{
	"Queen Street", "George Street", "Collins Street", "Lambton Quay", "Main Street",
	"High Street", "Victoria Avenue", "Rue de Rivoli", "Bahnhofstraße", "Ōrākei Road",
	"Harbour Drive", "Industrial Way", "Market Lane", "Station Road", "Elm Avenue",
}

type place struct {
	city, regionName, regionCode, country string
	postcode                              func(n int) string
}

var places = map[string][]place{
	"AU": {
		{"Sydney", "New South Wales", "NSW", "Australia", fourDigits(2000)},
		{"Melbourne", "Victoria", "VIC", "Australia", fourDigits(3000)},
		{"Brisbane", "Queensland", "QLD", "Australia", fourDigits(4000)},
		{"Perth", "Western Australia", "WA", "Australia", fourDigits(6000)},
		{"Hobart", "Tasmania", "TAS", "Australia", fourDigits(7000)},
	},
	"NZ": {
		{"Auckland", "Auckland", "AUK", "New Zealand", fourDigits(1010)},
		{"Wellington", "Wellington", "WGN", "New Zealand", fourDigits(6011)},
		{"Christchurch / Ōtautahi", "Canterbury", "CAN", "New Zealand", fourDigits(8011)},
		{"Tauranga", "Bay of Plenty", "BOP", "New Zealand", fourDigits(3110)},
	},
	"US": {
		{"Seattle", "Washington", "WA", "United States", fiveDigits(98101)},
		{"Austin", "Texas", "TX", "United States", fiveDigits(73301)},
		{"Boston", "Massachusetts", "MA", "United States", fiveDigits(2108)},
		{"Denver", "Colorado", "CO", "United States", fiveDigits(80201)},
		{"San José", "California", "CA", "United States", fiveDigits(95112)},
	},
	"DEMO": {
		{"Demo City", "", "", "Australia", fourDigits(2600)},
		{"Zürich", "Zürich", "ZH", "Switzerland", fourDigits(8001)},
		{"Montréal", "Québec", "QC", "Canada", func(int) string { return "H2X 1Y4" }},
	},
}

func fourDigits(base int) func(int) string {
	return func(n int) string { return pad(base+n%90, 4) }
}

func fiveDigits(base int) func(int) string {
	return func(n int) string { return pad(base+n%90, 5) }
}

var bankNames = []string{
	"Commonwealth Bank", "Westpac", "ANZ", "National Australia Bank", "Kiwibank", "ASB Bank",
	"Bank of America", "Chase", "Wells Fargo", "Banque Populaire", "Crédit Agricole", "Deutsche Bank",
}

// The community-wide lists that suppliers and users refer to.
var buyerGroupNames = []string{
	"All Buyers", "Facilities", "IT Purchasing", "Laboratories", "Catering Team",
	"Executive", "Fleet", "Marketing", "Capital Works", "Ōtautahi Campus",
}

var tagNames = []string{
	"Preferred", "Local", "Indigenous-owned", "Social enterprise", "Small business",
	"Diverse", "Sustainable", "Under review", "High risk", "Strategic", "Contracted", "Café-approved",
}

var orgUnits = []string{"OU-FIN", "OU-SCI", "OU-ENG", "OU-HR", "OU-IT", "OU-OPS", "OU-MKT", "OU-LAW"}
var roleCodes = []string{"EMPLOYEE", "BUYER", "APPROVER", "FINANCE", "ADMIN", "RECEIVER"}
var approverGroupCodes = []string{"APG-1000", "APG-5000", "APG-25000", "APG-CAPEX"}
var buyerGroupCodes = []string{"BG-ALL", "BG-FAC", "BG-IT", "BG-LAB", "BG-CAT", "BG-EXEC"}
var attributeNames = []string{"costCentre", "location", "grade", "delegation", "startYear"}

// communityNames name the generated communities in order; the region
// cycles AU, NZ, US, DEMO.
var communityNames = []struct{ id, name string }{
	{"tasman-health", "Tasman Health Network"},
	{"aotearoa-schools", "Aotearoa Schools Consortium / Ngā Kura"},
	{"lakeside-county", "Lakeside County"},
	{"demo", "Demo Community"},
}

var regions = []string{"AU", "NZ", "US", "DEMO"}

func pad(n, width int) string {
	const digits = "0123456789"
	b := make([]byte, width)
	for i := width - 1; i >= 0; i-- {
		b[i] = digits[n%10]
		n /= 10
	}
	return string(b)
}
