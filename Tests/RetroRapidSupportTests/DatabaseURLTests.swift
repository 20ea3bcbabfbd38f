import Testing
@testable import RetroRapidSupport

/// `--database-url`: what parses to which store, what is refused with which reason, and that
/// no message or rendering ever shows a password.
@Suite struct DatabaseURLTests {
    func parse(_ text: String) throws -> DatabaseURL { try DatabaseURL(parsing: text) }

    func failure(_ text: String) -> DatabaseURLError? {
        #expect(throws: DatabaseURLError.self) { try parse(text) }
    }

    func server(_ text: String) throws -> DatabaseURL.PostgreSQL {
        guard case .postgres(let server) = try parse(text) else {
            Issue.record("\(text) is not a PostgreSQL URL")
            throw DatabaseURLError(text: text, problem: "is not a PostgreSQL URL")
        }
        return server
    }

    // MARK: SQLite

    @Test func sqliteTakesARelativeOrAbsolutePathAsGiven() throws {
        #expect(try parse("sqlite:data/retrorapid.sqlite") == .sqlite(path: "data/retrorapid.sqlite"))
        #expect(try parse("sqlite:/var/lib/retrorapid/rr.sqlite") == .sqlite(path: "/var/lib/retrorapid/rr.sqlite"))
        #expect(try parse("sqlite:///var/lib/x.sqlite") == .sqlite(path: "/var/lib/x.sqlite"))
        // Not a URL's path: no percent-decoding, and spaces, '?' and '@' are the file's name.
        #expect(try parse("sqlite:my games/a%20b?.sqlite") == .sqlite(path: "my games/a%20b?.sqlite"))
        #expect(try parse("sqlite:data/rr.sqlite").sqlitePath == "data/rr.sqlite")
    }

    @Test func aSQLiteFileIsNamedByItsPathAndItsURL() throws {
        let url = try parse("sqlite:///var/lib/x.sqlite")
        #expect(url.location == "/var/lib/x.sqlite")
        #expect(url.redacted == "sqlite:/var/lib/x.sqlite")
        #expect(url.description == "sqlite:/var/lib/x.sqlite")
    }

    @Test func sqliteRefusesAnEmptyPathAndAHost() {
        #expect(failure("sqlite:")?.problem == "has no file path after sqlite:")
        #expect(failure("sqlite://")?.problem == "has no file path after sqlite://")
        let host = failure("sqlite://data/x.sqlite")
        #expect(host?.problem.hasPrefix("names a host after sqlite://") == true)
        #expect(host?.description.contains("sqlite:///ABSOLUTE/PATH") == true)
    }

    // MARK: PostgreSQL

    @Test func postgresKeepsTheURLAsConninfoAndSplitsItsParts() throws {
        let text = "postgres://rr:s3cret@db.example.com:6432/retrorapid?sslmode=require&application_name=rr"
        let server = try server(text)
        #expect(server.conninfo == text)
        #expect(server.user == "rr")
        #expect(server.hasPassword)
        #expect(server.host == "db.example.com")
        #expect(server.port == 6432)
        #expect(server.database == "retrorapid")
        #expect(server.parameters == [.init(key: "sslmode", value: "require"), .init(key: "application_name", value: "rr")])
        #expect(try parse(text).sqlitePath == nil)
    }

    @Test func postgresqlIsTheSameAndUserPasswordAndPortAreOptional() throws {
        let plain = try server("postgresql://localhost/rr")
        #expect(plain.user == nil && !plain.hasPassword && plain.port == nil && plain.parameters.isEmpty)
        #expect(plain.host == "localhost" && plain.database == "rr")
        let userOnly = try server("postgres://rr@127.0.0.1/rr")
        #expect(userOnly.user == "rr" && !userOnly.hasPassword)
        let ipv6 = try server("postgres://rr@[::1]:5433/rr")
        #expect(ipv6.host == "[::1]" && ipv6.port == 5433)
        // Percent-encoding is libpq's to undo; the parts are kept as written.
        let encoded = try server("postgres://r%40r:p%2Fw@h/my%20db")
        #expect(encoded.user == "r%40r" && encoded.database == "my%20db")
        #expect(encoded.conninfo == "postgres://r%40r:p%2Fw@h/my%20db")
    }

    @Test func postgresRefusesAMissingHostOrDatabase() {
        #expect(failure("postgres://rr:pw@/retrorapid")?.problem.hasPrefix("has no host") == true)
        #expect(failure("postgres:///retrorapid")?.problem.hasPrefix("has no host") == true)
        #expect(failure("postgres://rr@localhost")?.problem.hasPrefix("has no database name") == true)
        #expect(failure("postgres://rr@localhost/")?.problem.hasPrefix("has no database name") == true)
        #expect(failure("postgres://rr@localhost?sslmode=require")?.problem.hasPrefix("has no database name") == true)
    }

    @Test func postgresRefusesWhatLibpqWouldReadOtherwise() {
        #expect(failure("postgres://h:0/rr")?.problem == "has a port that is not a number from 1 to 65535")
        #expect(failure("postgres://h:65536/rr")?.problem == "has a port that is not a number from 1 to 65535")
        #expect(failure("postgres://h:54x/rr")?.problem == "has a port that is not a number from 1 to 65535")
        #expect(failure("postgres://a,b/rr")?.problem == "names several hosts; give one HOST[:PORT]")
        #expect(failure("postgres://h/rr?sslmode")?.problem == "has a query parameter that is not KEY=VALUE")
        #expect(failure("postgres://h/rr?=x")?.problem == "has a query parameter that is not KEY=VALUE")
        #expect(failure("postgres://h/rr#top")?.problem == "has a '#' fragment, which libpq does not accept")
        #expect(failure("postgres://h/my db")?.problem == "contains a space; percent-encode it (%20)")
        #expect(failure("postgres://[::1/rr")?.problem == "opens '[' for an IPv6 host but never closes it")
        #expect(failure("postgres://u@a@h/rr")?.problem.hasPrefix("has more than one '@' before the host") == true)
    }

    @Test func otherSchemesAndBarePathsAreRefusedNamingWhy() {
        let mysql = failure("mysql://rr@h/rr")
        #expect(mysql?.problem == "uses 'mysql', which is not a database this server can use")
        #expect(mysql?.description.hasSuffix("Accepted: \(DatabaseURL.acceptedForms)") == true)
        #expect(failure("data/retrorapid.sqlite")?.problem.hasPrefix("has no scheme") == true)
        #expect(failure("/var/lib/rr.sqlite")?.problem.hasPrefix("has no scheme") == true)
        #expect(failure("")?.problem == "is empty")
        #expect(failure("SQLite:data/x.sqlite")?.problem == "spells the scheme 'SQLite'; write it in lower case")
        #expect(failure("postgres:rr")?.problem == "needs // after postgres:")
    }

    // MARK: Redaction

    @Test func theRedactedFormHidesThePasswordAndNothingElse() throws {
        let url = try parse("postgres://rr:s3cret@db:5432/retrorapid?sslmode=require")
        #expect(url.redacted == "postgres://rr:***@db:5432/retrorapid?sslmode=require")
        #expect(url.description == url.redacted)
        #expect(url.location == url.redacted)
        #expect(try parse("postgres://rr@db/rr").redacted == "postgres://rr@db/rr")
        #expect(try parse("postgres://:s3cret@db/rr").redacted == "postgres://:***@db/rr")
        #expect(try parse("postgres://rr@db/rr?password=s3cret&sslmode=require").redacted
            == "postgres://rr@db/rr?password=***&sslmode=require")
        // An '@' in a parameter is not the end of a password.
        #expect(try parse("postgres://rr:s3cret@db/rr?application_name=a@b").redacted
            == "postgres://rr:***@db/rr?application_name=a@b")
        #expect("\(try parse("postgres://rr:s3cret@db/rr"))" == "postgres://rr:***@db/rr")
    }

    @Test func printingDumpingOrReflectingNeverShowsThePassword() throws {
        let url = try parse("postgres://rr:s3cret@db/rr?password=s3cret")
        let server = try server("postgres://rr:s3cret@db/rr?password=s3cret")
        var dumped = ""
        dump(url, to: &dumped)
        dump(server, to: &dumped)
        var configuration = ServerConfiguration()
        configuration.databaseURL = url
        dump(configuration, to: &dumped)
        for text in [dumped, "\(url)", String(reflecting: url), "\(server)", String(reflecting: server),
                     String(reflecting: configuration)] {
            #expect(!text.contains("s3cret"), "\(text)")
        }
        #expect(dumped.contains("postgres://rr:***@db/rr?password=***"))
    }

    @Test func noRefusalShowsThePassword() {
        let refused = [
            "mysql://rr:s3cret@db/rr", "postgres://rr:s3cret@/rr", "postgres://rr:s3cret@db",
            "postgres://rr:s3cret@db:99999/rr", "postgres://rr:s3c/ret@db/rr", "postgres://rr:s3c?ret@db/rr",
            "postgres://rr:s3c#ret@db/rr", "postgres://rr:s3c@ret@db/rr", "postgres:rr:s3cret@db/rr",
            "Postgres://rr:s3cret@db/rr", "postgres://rr@db/rr?password=s3cret&x", "rr:s3cret@db/rr",
            "postgres://rr:s3cret@db/rr?x#y", "postgres://rr:s3c ret@db/rr",
        ]
        for text in refused {
            let error = failure(text)
            #expect(error != nil, "\(text)")
            #expect(error.map { !$0.description.contains("s3c") } == true, "\(text): \(error.map(\.description) ?? "")")
        }
    }

    @Test func aPasswordHoldingARawSlashOrQuestionMarkIsRefusedWithTheFix() {
        for text in ["postgres://rr:pa/ss@db/rr", "postgres://rr:pa?ss@db/rr", "postgres://rr:5/x@db/rr"] {
            #expect(failure(text)?.problem.hasPrefix("has an '@' after the host") == true, "\(text)")
        }
    }

    @Test func redactHidesWhatMayBeAPasswordInAnyText() {
        #expect(DatabaseURLError.redact("postgres://u:pw@h/d") == "postgres://u:***@h/d")
        #expect(DatabaseURLError.redact("postgres://u:p/w@h/d") == "postgres://u:***@h/d")
        #expect(DatabaseURLError.redact("postgres://u:p?w@h/d") == "postgres://u:***@h/d")
        #expect(DatabaseURLError.redact("u:pw@h") == "u:***@h")
        #expect(DatabaseURLError.redact("sqlite:data/x.sqlite") == "sqlite:data/x.sqlite")
        #expect(DatabaseURLError.redact("postgres://h/d?password=pw") == "postgres://h/d?password=***")
    }
}
