import Foundation
import RetroRapidDomain
import RetroRapidStorage
import RetroRapidSupport

/// The database an operator command (`migrate`, `codes`, `players`, `orders`, `games`,
/// `backup`, `verify`, `seed-players`) works on.
///
/// It is the server's database: the database URL (or path) and the migrations folder come from
/// the same sources as `retrorapid serve` (built-in defaults < the env file <
/// `RETRORAPID_DATABASE_URL` / `RETRORAPID_DATABASE_PATH` and `RETRORAPID_MIGRATIONS_PATH`), and
/// then `--database-url` / `--database-path` / `--migrations-path` on the command line win,
/// under the same names as serve's. An unset migrations folder is looked up as serve looks it up
/// (`InstalledFileLocator`). So on a deployed machine `retrorapid codes list` reads what the
/// running server uses, through the same `StorageFactory`.
///
/// The CLI opens a connection of its own while the server runs: WAL lets it read alongside the
/// server, and its writes wait for the server's (the busy timeout), each in its own short
/// IMMEDIATE transaction, exactly like the server's.
struct OperatorDatabase {
    /// The options every operator command accepts; add them to the command's own.
    static let valueOptions: Set<String> = ["database-url", "database-path", "migrations-path"]
    /// The names these options had before they took serve's, still accepted so no script breaks.
    static let aliases = ["database": "database-path", "migrations": "migrations-path"]

    /// Their lines for a command's usage text.
    static let optionsUsage = """
          --database-url URL     the database: sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE
                                 (default: the server's setting: RETRORAPID_DATABASE_URL or _PATH, the env
                                 file, or sqlite:data/retrorapid.sqlite; see 'retrorapid help serve')
          --database-path PATH   the SQLite database file: the same as --database-url sqlite:PATH
          --migrations-path DIR  the folder of NNNN_name.sql files (default: RETRORAPID_MIGRATIONS_PATH,
                                 the env file, or looked up as serve does)
          (--database and --migrations are older names for --database-path and --migrations-path,
          still accepted)
        """

    /// The server's settings as they stand for this process (daily plays, price, paths).
    let configuration: ServerConfiguration
    /// Where the migrations folder was found, or every place it was looked for.
    let migrations: InstalledFileLocation

    var url: DatabaseURL { configuration.databaseURL }
    /// How messages name the database: a SQLite file's path, a server's URL redacted.
    var location: String { configuration.databaseURL.location }
    var migrationsPath: String { configuration.migrationsPath }

    /// Resolves the database and migrations paths. A bad env file or variable is a usage error,
    /// as it is for `serve`, so it is fixed before anything is opened.
    init(_ parsed: ParsedArguments) throws {
        let located = try Self.load(parsed, keys: Self.valueOptions.sorted())
        configuration = located.configuration
        migrations = located.location(of: .migrations)
    }

    /// The server's configuration with the command's own `--database-url` / `--database-path` / `--migrations-path`
    /// (those of `keys` it declares) laid over it as flags, the last and winning source.
    static func load(_ parsed: ParsedArguments, keys: [String]) throws -> LocatedConfiguration {
        let flags = keys.flatMap { key in parsed.value(key).map { ["--\(key)", $0] } ?? [] }
        do {
            return try ServerConfiguration.loadFromProcess(arguments: flags)
        } catch let error as ConfigurationError {
            throw UsageError("configuration: \(error)")
        }
    }

    /// The migrations folder for a command that opens a database of its own (`crash-writer`,
    /// `bench-storage`): `--migrations-path`, else the server's setting, else looked up;
    /// refused, naming where it looked, when it is not there.
    static func migrationsFolder(_ parsed: ParsedArguments) throws -> String {
        let location = try load(parsed, keys: ["migrations-path"]).location(of: .migrations)
        guard location.found != nil else { throw OperatorFailure(location.missingMessage) }
        return location.path
    }

    /// Opens the database and applies pending migrations (as the server does at start), so a
    /// command never meets an older schema than the code it runs.
    ///
    /// A missing file is refused rather than created: it usually means a mistyped path or
    /// setting, which an empty new database would hide. `retrorapid migrate` (or `serve`)
    /// creates the database on a fresh install.
    func open(durability: StorageFactory.Durability = .everyCommit) throws -> StorageRepositories {
        guard migrations.found != nil else { throw OperatorFailure(migrations.missingMessage) }
        let connection = try openWithoutMigrating(durability: durability)
        for applied in try connection.migrate() {
            OperatorOutput.note("applied migration \(applied.identifier) to \(location)")
        }
        return connection.repositories(settings)
    }

    /// ``open(durability:)`` with its connection, for a change that appends its audit entry in
    /// its own transaction (`StorageConnection.audited`).
    func openForChange() throws -> (connection: any StorageConnection, repositories: StorageRepositories) {
        guard migrations.found != nil else { throw OperatorFailure(migrations.missingMessage) }
        let connection = try openWithoutMigrating()
        for applied in try connection.migrate() {
            OperatorOutput.note("applied migration \(applied.identifier) to \(location)")
        }
        return (connection, connection.repositories(settings))
    }

    /// Who the audit log names for a command's change: the system user running it (and, under
    /// sudo, who ran sudo), as `cli:USER`.
    static var actor: String {
        var user = ProcessInfo.processInfo.environment["USER"] ?? ""
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name {
            user = String(cString: name)
        }
        if let sudo = ProcessInfo.processInfo.environment["SUDO_USER"], !sudo.isEmpty, sudo != user {
            user += " (sudo from \(sudo))"
        }
        return "cli:" + (user.isEmpty ? "uid \(geteuid())" : user)
    }

    /// Opens the database as it is, migrating nothing (a backup copies what is there), through
    /// the same `StorageFactory` as the server.
    func openWithoutMigrating(durability: StorageFactory.Durability = .everyCommit) throws -> any StorageConnection {
        do {
            return try StorageFactory.open(configuration, ifMissing: .refuse, durability: durability)
        } catch StorageFactoryError.missing {
            throw OperatorFailure("no database at \(location). Pass --database-url URL (or --database-path PATH) or set RETRORAPID_DATABASE_URL; on a fresh install 'retrorapid migrate --database-url URL' creates it.")
        }
    }

    /// The repositories' settings as the server is configured (daily plays, the base price).
    var settings: RepositorySettings {
        RepositorySettings(dailyFreePlays: configuration.dailyFreePlays,
                           basePrice: Money(minorUnits: Int64(configuration.unlimitedPriceMinorUnits), currency: configuration.currency))
    }

    /// The operator's changes, made by and audited as `actor` (this system user).
    static func actions(_ connection: any StorageConnection, _ storage: StorageRepositories) -> OperatorActions {
        OperatorActions(actor: actor, connection: connection, repositories: storage)
    }

    /// Runs `body` and turns what the repositories refuse into what the operator reads:
    /// `.invalid` is a mistake in the command line (exit 64, with the usage), any other refusal
    /// (unknown player, code already exists, …) exits 1 with its message. Nothing changed in
    /// either case: repositories refuse before or inside the transaction that would write.
    static func reportingRefusals<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError where error.code == .invalid {
            throw UsageError(error.message)
        } catch let error as StoreError where error.isRefusal {
            throw OperatorFailure(error.message)
        } catch let error as ArgumentError {
            throw UsageError(error.description)
        }
    }
}

/// A refusal or failure the operator should read as one sentence: `RetroRapidMain` prints it
/// after `retrorapid:` and exits 1.
struct OperatorFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Where operator commands write: results to standard output (what a script reads), notes and
/// warnings to standard error.
enum OperatorOutput {
    static func note(_ message: String) {
        var standardError = StandardError()
        print("retrorapid: \(message)", to: &standardError)
    }

    /// Writes `line` and a newline straight to file descriptor 1 with write(2), bypassing
    /// stdio's buffer: when this returns the line is in the pipe, whatever happens next.
    static func writeUnbuffered(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return  // The reader is gone; nobody is left to tell.
            }
            offset += written
        }
    }
}

// MARK: - The clock

/// "Now" for operator commands: the system clock, or the time in `RETRORAPID_NOW` when set.
///
/// The override is for rehearsals and tests (the launch example creates a code expiring on
/// 28 Feb 2026, which the repository refuses once that date has passed). A note on standard
/// error says so whenever it is in effect, so it is never on by accident unnoticed.
enum OperatorClock {
    static let variable = "RETRORAPID_NOW"

    static func now() throws -> Date {
        guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else { return Date() }
        guard let date = OperatorTime.parse(text) else {
            throw UsageError("environment variable \(variable) expects an ISO 8601 time such as 2026-01-15T10:00:00Z, got '\(text)'")
        }
        OperatorOutput.note("\(variable) is set: the clock reads \(OperatorTime.text(date))")
        return date
    }
}

// MARK: - Times as the operator types and reads them

/// ISO 8601 / RFC 3339 times: `2026-02-28T23:59:59Z`, or with an offset, `2026-03-01T00:59:59+01:00`.
enum OperatorTime {
    /// What usage texts and errors call the accepted form.
    static let expected = "an ISO 8601 time such as 2026-02-28T23:59:59Z (UTC) or 2026-03-01T00:59:59+01:00"

    /// `2026-01-15T10:23:45Z`: UTC, whole seconds (how the database stores times).
    static func text(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` strictly: every field in range
    /// (no 30 February, no hour 24), a time zone required (a time without one would silently
    /// mean the machine's zone). The fraction is dropped: times are stored to the second.
    /// Nil for anything else, including a bare date, which would leave open whether it means
    /// the start or the end of that day.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40 else { return nil }
        func digits(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
              let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19),
              (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > start else { return nil }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                  let hours = digits((index + 1)..<(index + 3)), let minutes = digits((index + 4)..<(index + 6)),
                  hours < 24, minutes < 60
            else { return nil }
            offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm);
    /// years here are 0000–9999, so the era arithmetic never sees a negative year.
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

// MARK: - Tables

/// Columns of text for a terminal: a header line, then one line per row, columns two spaces
/// apart, each as wide as its widest cell. Plain text, so it reads line by line in a screen
/// reader and greps well.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: [String]) {
        self.header = header
    }

    mutating func append(_ row: [String]) {
        precondition(row.count == header.count, "a row has \(row.count) cells for \(header.count) columns")
        rows.append(row)
    }

    func render(indent: String = "") -> String {
        let lines = [header] + rows
        let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
        return lines.map { cells in
            var line = indent
            for (column, cell) in cells.enumerated() {
                let isLast = column == cells.count - 1
                line += isLast ? cell : cell + String(repeating: " ", count: widths[column] - cell.count + 2)
            }
            return line
        }.joined(separator: "\n")
    }
}
