/// Where the server's data lives, as `--database-url` names it: a SQLite file or a PostgreSQL
/// server. `StorageFactory` (Sources/RetroRapidStorage/StorageFactory.swift) opens it.
///
/// A password may be part of a PostgreSQL URL, so nothing prints the URL as given: messages,
/// log lines and a store's `location` use ``redacted`` (or ``location``), which shows `***`
/// instead. `description` is the redacted form too, so string interpolation cannot leak it.
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// A SQLite file, relative to the working directory or absolute, used as given.
    case sqlite(path: String)
    /// A PostgreSQL server and database.
    case postgres(PostgreSQL)

    /// The parts of a `postgres://` URL. The URL itself is kept as given, to be handed to
    /// libpq as its conninfo (libpq does its own percent-decoding); the parts are for checking
    /// and for messages.
    public struct PostgreSQL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
                              CustomReflectable {
        /// The URL exactly as given: libpq's conninfo. Contains the password: never print it.
        public let conninfo: String
        public let user: String?
        public let hasPassword: Bool
        /// A name, an IPv4 address, or an IPv6 address in brackets, as written.
        public let host: String
        public let port: Int?
        public let database: String
        /// The query's `key=value` pairs in order (`sslmode=require`), as written.
        public let parameters: [Parameter]
        /// The URL with the password (after `user:`, and any `password=` parameter) as `***`.
        public let redacted: String

        public struct Parameter: Sendable, Equatable {
            public let key: String
            public let value: String
        }

        // Printing, `dump` and a test's failure message show the redacted URL, never `conninfo`.
        public var description: String { redacted }
        public var debugDescription: String { redacted }
        public var customMirror: Mirror { Mirror(self, children: ["redacted": redacted]) }
    }

    /// What ``init(parsing:)`` accepts, for error messages and help.
    public static let acceptedForms = "sqlite:PATH (a relative or absolute file path, e.g. sqlite:data/retrorapid.sqlite), "
        + "sqlite:///ABSOLUTE/PATH, or postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?KEY=VALUE&...] "
        + "(postgresql:// also)"

    /// Parses `text`, or throws a ``DatabaseURLError`` that says what is wrong; its message
    /// shows the text redacted, never a password.
    public init(parsing text: String) throws(DatabaseURLError) {
        if text.hasPrefix("sqlite:") {
            self = .sqlite(path: try Self.sqlitePath(text))
        } else if let scheme = ["postgresql://", "postgres://"].first(where: text.hasPrefix) {
            self = .postgres(try PostgreSQL(text, scheme: scheme))
        } else {
            throw DatabaseURLError(text: text, problem: Self.unknownScheme(text))
        }
    }

    /// The URL with any password replaced by `***`: what messages and logs show.
    public var redacted: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let server): server.redacted
        }
    }

    public var description: String { redacted }
    public var debugDescription: String { redacted }

    /// How a message names the store: a SQLite file by its path (as messages always have),
    /// a server by its redacted URL.
    public var location: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let server): server.redacted
        }
    }

    /// The SQLite file, or nil for a server.
    public var sqlitePath: String? {
        if case .sqlite(let path) = self { return path }
        return nil
    }

    // MARK: - SQLite

    /// `sqlite:PATH` takes PATH as given; `sqlite://` must be followed by an absolute path
    /// (`sqlite:///var/lib/x.sqlite`), since what follows `//` in a URL is a host.
    private static func sqlitePath(_ text: String) throws(DatabaseURLError) -> String {
        let rest = String(text.dropFirst("sqlite:".count))
        guard rest.hasPrefix("//") else {
            guard !rest.isEmpty else { throw DatabaseURLError(text: text, problem: "has no file path after sqlite:") }
            return rest
        }
        let path = String(rest.dropFirst(2))
        guard !path.isEmpty else { throw DatabaseURLError(text: text, problem: "has no file path after sqlite://") }
        guard path.hasPrefix("/") else {
            throw DatabaseURLError(
                text: text,
                problem: "names a host after sqlite://; write sqlite:///ABSOLUTE/PATH for an absolute path "
                    + "or sqlite:RELATIVE/PATH for one relative to the working directory")
        }
        return path
    }

    private static func unknownScheme(_ text: String) -> String {
        if text.isEmpty { return "is empty" }
        guard let colon = text.firstIndex(of: ":"),
              let first = text.first, first.isASCII, first.isLetter,
              text[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else {
            return "has no scheme; a SQLite file is written sqlite:PATH (or given with --database-path PATH)"
        }
        let scheme = text[..<colon]
        if scheme == "postgres" || scheme == "postgresql" {
            return "needs // after \(scheme):"
        }
        if ["sqlite", "postgres", "postgresql"].contains(scheme.lowercased()) {
            return "spells the scheme '\(scheme)'; write it in lower case"
        }
        return "uses '\(scheme)', which is not a database this server can use"
    }
}

extension DatabaseURL.PostgreSQL {
    /// `scheme://[userinfo@]host[:port]/database[?query]`, split the way libpq splits it:
    /// the user information ends at the first `@` before any `/`, so `@`, `/`, `?` and `#`
    /// inside a user name or password must be percent-encoded (%40, %2F, %3F, %23).
    init(_ text: String, scheme: String) throws(DatabaseURLError) {
        func fail(_ problem: String) -> DatabaseURLError { DatabaseURLError(text: text, problem: problem) }
        if let bad = text.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            throw fail(bad == " " ? "contains a space; percent-encode it (%20)" : "contains a control character")
        }
        var rest = text.dropFirst(scheme.count)
        // The authority: up to the path or the query.
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        rest = rest[authorityEnd...]
        // An `@` only after the host means a user name or password held a raw `/`, `?` or `#`,
        // which cut the authority short (libpq cuts it there too), unless the `@` is in the
        // database name or a parameter. Where the parts then fail to parse, that is the likelier
        // cause, and the message says so. No message quotes a part: it could be a password.
        let atAfterHost = !authority.contains("@") && rest.contains("@")
        let encodeHint = "has an '@' after the host: a user name or password holding '/', '?' or '#' must "
            + "percent-encode them (%2F, %3F, %23)"
        var user: String?
        var hasPassword = false
        var redactedUserInfo = ""
        if let at = authority.firstIndex(of: "@") {
            let userInfo = authority[..<at]
            redactedUserInfo = userInfo.firstIndex(of: ":").map { userInfo[...$0] + "***@" } ?? userInfo + "@"
            authority = authority[authority.index(after: at)...]
            if authority.contains("@") {
                throw fail("has more than one '@' before the host: percent-encode an '@' in a user name or password (%40)")
            }
            if let colon = userInfo.firstIndex(of: ":") {
                hasPassword = true
                user = userInfo[..<colon].isEmpty ? nil : String(userInfo[..<colon])
            } else {
                user = userInfo.isEmpty ? nil : String(userInfo)
            }
        }
        // host[:port]; an IPv6 address in brackets.
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw fail("opens '[' for an IPv6 host but never closes it") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("has something other than :PORT after the IPv6 host") }
                portText = after.dropFirst()
            }
            guard host.count > 2 else { throw fail("has an empty IPv6 host '[]'") }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        if host.contains(",") {
            throw fail("names several hosts; give one HOST[:PORT]")
        }
        guard !host.isEmpty else { throw fail("has no host; write postgres://USER@HOST/DATABASE") }
        var port: Int?
        if let portText {
            guard let number = Int(portText), portText.allSatisfy(\.isASCII), (1...65535).contains(number) else {
                throw fail(atAfterHost ? encodeHint : "has a port that is not a number from 1 to 65535")
            }
            port = number
        }
        // /database
        guard !rest.hasPrefix("#"), !rest.contains("#") else { throw fail("has a '#' fragment, which libpq does not accept") }
        let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
        let path = rest[..<queryStart]
        guard path.hasPrefix("/"), path.count > 1 else {
            throw fail("has no database name; write postgres://USER@HOST/DATABASE")
        }
        let database = String(path.dropFirst())
        if database.contains("/") { throw fail(atAfterHost ? encodeHint : "has '/' in the database name; percent-encode it (%2F)") }
        // ?key=value&key=value
        var parameters: [Parameter] = []
        if queryStart < rest.endIndex {
            let query = rest[rest.index(after: queryStart)...]
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                guard let equals = pair.firstIndex(of: "="), equals > pair.startIndex else {
                    throw fail("has a query parameter that is not KEY=VALUE")
                }
                parameters.append(Parameter(key: String(pair[..<equals]), value: String(pair[pair.index(after: equals)...])))
            }
        }
        self.conninfo = text
        self.user = user
        self.hasPassword = hasPassword || parameters.contains { $0.key == "password" }
        self.host = String(host)
        self.port = port
        self.database = database
        self.parameters = parameters
        // Built from the parts, so an `@` in a parameter's value is not taken for the password's end.
        self.redacted = scheme + redactedUserInfo + authority + DatabaseURLError.redactParameters(rest)
    }
}

/// A `--database-url` that cannot be used. The message names what is wrong and lists the
/// accepted forms; it shows the URL redacted.
public struct DatabaseURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL as given, redacted.
    public let redactedText: String
    /// What is wrong, finishing "'URL' …".
    public let problem: String

    init(text: String, problem: String) {
        redactedText = Self.redact(text)
        self.problem = problem
    }

    public var description: String {
        "'\(redactedText)' \(problem). Accepted: \(DatabaseURL.acceptedForms)"
    }

    /// `text` with anything that may be a password replaced by `***`, whether or not `text`
    /// parses. It errs on the side of hiding: the user information is everything from after
    /// `://` (or, without one, from the start) to the last `@` before any `?`, or when there is
    /// no `@` there, the last `@` at all (so a password holding a raw `/` or `?` is hidden
    /// whole), and everything in it after the first `:` is the password; the value of each
    /// `password=` parameter is hidden too.
    public static func redact(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        var rest = text[start...]
        var result = String(text[..<start])
        let beforeQuery = rest[..<(rest.firstIndex(of: "?") ?? rest.endIndex)]
        if let at = beforeQuery.lastIndex(of: "@") ?? rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                result += userInfo[...colon] + "***"
            } else {
                result += userInfo
            }
            rest = rest[at...]
        }
        return result + redactParameters(rest)
    }

    /// `text` (the part of a URL after its host) with the value of each `password=` parameter as `***`.
    static func redactParameters(_ text: Substring) -> String {
        guard let question = text.firstIndex(of: "?") else { return String(text) }
        let pairs = text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "="), pair[..<equals] == "password" else { return String(pair) }
            return "password=***"
        }
        return text[...question] + pairs.joined(separator: "&")
    }
}
