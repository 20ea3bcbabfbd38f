import Foundation

/// Every setting the server reads, with the defaults a developer gets on a fresh checkout.
/// Sources overlay in order, later winning: these defaults, the env file, the environment, flags.
/// The four file paths' defaults are where a checkout keeps them; `loadFromProcess` replaces
/// each one no source set by where `InstalledFileLocator` finds it.
public struct ServerConfiguration: Sendable, Equatable {
    public var host = "0.0.0.0"
    public var port = 8080
    /// This process's name among the nodes on one database (cluster mode); empty means the
    /// machine's host name (``resolvedNodeID``).
    public var nodeID = ""
    /// The secret every node of a cluster signs its bus messages with (`--cluster-secret`);
    /// `serve` on PostgreSQL refuses to start without it. Nil on a single node (SQLite).
    public var clusterSecret: String? = nil
    /// Accepted from other nodes but never used to sign: the other secret of a rotation.
    public var clusterSecretPrevious: String? = nil
    /// Seconds between a node's heartbeats in a cluster.
    public var clusterHeartbeatSeconds = 2
    /// A node not seen for this long is taken for dead (at least three heartbeats); the same on
    /// every node, which a node checks when it joins.
    public var clusterLeaseSeconds = 6
    /// Where players reach this node's game connections straight (``GameURL``), when not
    /// through the site's front; nil: `/ws` on the site, as every page asks first.
    public var gameURL: String? = nil
    /// `connect-src` sources for the other nodes' game URLs (``GameURL/connectSource(_:)``).
    public var gameURLSources: [String] = []
    /// Where the data lives (`--database-url`); the one setting `StorageFactory` reads.
    public var databaseURL = DatabaseURL.sqlite(path: "data/retrorapid.sqlite")
    /// The SQLite file `databaseURL` names, empty when it names a PostgreSQL server. Setting it
    /// (as `--database-path` does) makes `databaseURL` `sqlite:` that path.
    public var databasePath: String {
        get { databaseURL.sqlitePath ?? "" }
        set { databaseURL = .sqlite(path: newValue) }
    }
    public var webRoot = "Web"
    /// Filled by scripts/install-fonts.sh from Debian's fonts-dseg and fonts-inter; optional.
    public var fontsPath = "data/fonts"
    public var migrationsPath = "Migrations"
    /// Served at /api/v1/openapi.json; optional (without it that path answers 404).
    public var openAPIPath = "docs/openapi.json"
    public var tlsCertificatePath: String? = nil
    public var tlsKeyPath: String? = nil
    public var logLevel = Logger.Level.info
    public var logFormat = LogFormat.text
    public var dailyFreePlays = 5
    /// In the currency's minor units (pence for GBP), so prices never touch floating point.
    public var unlimitedPriceMinorUnits = 299
    public var currency = "GBP"
    public var latencyGraceMilliseconds = 150
    public var disconnectGraceSeconds = 60
    /// Connections that may watch one seat of a match at once; 0 turns watching off.
    public var watchersPerGame = 50
    /// How often running games' input logs are saved: what a crash of the server can lose.
    public var checkpointIntervalMilliseconds = 1000
    /// About how many games one checkpoint transaction holds: a round over more games is
    /// written in up to ten slices spread over the interval (`CheckpointWriter`).
    public var checkpointGamesPerSlice = 1000
    /// Storage threads, each with its own connection (docs/ARCHITECTURE.md, "Threads"). SQLite
    /// has one writer at a time, so it gains nothing from more than 1; a database server does.
    public var storageThreads = 1
    /// How many nice levels below the service thread the storage threads run: the game's
    /// steps and moves come first on a shared core, the disk work fills the time between.
    public var storageThreadNiceness = 10
    public var maxMessageBytes = 4096
    public var maxConnectionsPerIP = 64
    public var maxHTTPConnectionsPerIP = 128
    public var httpRequestTimeoutSeconds = 30
    public var helloTimeoutSeconds = 10
    public var websocketIdleTimeoutSeconds = 900
    public var websocketMaxQueuedMessages = 100
    public var keepalivePingSeconds = 20
    public var keepaliveHangupSeconds = 45
    /// Canonical numeric addresses (`IPAddress.canonical`), in the order given.
    public var trustedProxies: [String] = []
    /// Web origins besides the server's own whose pages may open game connections, as
    /// `WebOrigin` writes them (`https://game.example.com`), in the order given.
    public var allowedOrigins: [String] = []
    /// Where players report an accessibility barrier (the statement's "Tell us"): an https: page
    /// or form, or a mailto: address. Nil: the statement says none is published.
    public var accessibilityContact: String? = nil
    // Limits on creating players and on guessing secrets (docs/API.md, "Limits"). Failed
    // guesses are what count, so honest use is never blocked; per address they are generous
    // (a classroom behind one NAT address), per player tight.
    // New players per address: a class or a conference booth behind one address fits; the
    // server-wide bound is what stops a script spread over many addresses filling the database.
    public var newPlayersPerAddress = RateLimit(60, per: .seconds(600))
    public var newPlayersPerServer = RateLimit(600, per: .seconds(600))
    public var failedLinkClaimsPerAddress = RateLimit(20, per: .seconds(600))
    public var failedCodesPerPlayer = RateLimit(5, per: .seconds(600))
    public var failedCodesPerAddress = RateLimit(30, per: .seconds(600))
    public var failedSignInsPerAddress = RateLimit(100, per: .seconds(600))
    /// Checkout sessions a player may open at the payment provider, every one counted.
    public var checkoutSessionsPerPlayer = RateLimit(10, per: .seconds(3600))
    public var webhookSecret: String? = nil
    /// The payment provider (Stripe's API shape, docs/API.md "Paying through a hosted
    /// checkout"): where its API is, the secret key that opens checkout sessions (nil: this
    /// server sells nothing), how long a call may take, and the public address of this site
    /// the provider sends players back to.
    public var paymentProviderURL = "https://api.stripe.com"
    public var paymentSecretKey: String? = nil
    public var paymentTimeoutSeconds = 10
    public var publicBaseURL: String? = nil
    // Race rooms and quick races (docs/PROTOCOL.md "Race rooms").
    /// The least time between two `standings` messages of one race.
    public var standingsIntervalMilliseconds = 500
    public var raceCountdownSeconds = 3
    /// A race ends at this; the racers still racing end (`time_limit`).
    public var raceTimeLimitSeconds = 600
    /// The quick-race queue's wait after the second racer at a level joins it.
    public var quickRaceWaitSeconds = 10
    public var maxRooms = 5000
    public var metricsEnabled = true
    public var eventLoop = EventLoop.libev
    // The operator console (docs/OPERATIONS.md, "The console"): its own listener, never the
    // players' address. No port, no console.
    public var consoleHost = "127.0.0.1"
    public var consolePort: Int? = nil
    public var consoleRoot = "Console"
    /// Operator sign-ins from one client address, every attempt counted: a password is 100
    /// random bits, so this bounds the work (each check is 100,000 rounds of a hash), not a
    /// chance of guessing.
    public var operatorSignInsPerAddress = RateLimit(10, per: .seconds(900))

    public init() {}
}

/// How the libwebsockets service thread waits for sockets. libev (Debian's
/// libwebsockets-evlib-ev plugin) uses epoll; libwebsockets' own loop calls poll() over every
/// socket on each wakeup, which used a whole core at 5,000 connections (docs/LIBWEBSOCKETS-4.1.6.md).
public enum EventLoop: String, Sendable, CaseIterable {
    case libev, poll
}

/// A setting that can't be used. The message starts with where the mistake is (a flag, an
/// environment variable, or a line of the env file) so it can be fixed without guessing; the
/// source is also kept as data so callers can tell a typo on the command line from a bad deployment.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Source: Sendable, Equatable {
        /// A command-line argument as typed, e.g. `--port`.
        case flag(String)
        /// A process environment variable, e.g. `RETRORAPID_PORT`.
        case environment(String)
        /// Line 0 means the file as a whole, e.g. when it can't be read.
        case envFile(path: String, line: Int)

        /// How a message names the culprit; `variable` is only needed for env-file lines.
        func subject(_ variable: String) -> String {
            switch self {
            case .flag(let flag): flag
            case .environment(let name): "environment variable \(name)"
            case .envFile(let path, let line): "\(path) line \(line): \(variable)"
            }
        }
    }

    public let source: Source
    /// The setting's key (`port`, `database-path`), or nil when the name itself was not recognised.
    public let setting: String?
    public let message: String

    public var description: String { message }
}

extension ServerConfiguration {
    /// The file read when `RETRORAPID_ENV_FILE` is not set; a missing default file is not an error.
    public static let defaultEnvFilePath = "retrorapid.env"
    public static let envFileVariable = "RETRORAPID_ENV_FILE"

    /// Pure so tests can drive every source without touching the process or the disk.
    /// `arguments` excludes the program and command names.
    public static func load(
        arguments: [String],
        environment: [String: String],
        envFileContents: String?
    ) throws -> ServerConfiguration {
        try load(arguments: arguments, environment: environment, envFile: envFileContents.map { ("env file", $0) })
    }

    /// Like `load(arguments:environment:envFileContents:)`, then settles the file paths: each
    /// one a source set is kept as given, each other is looked up by `locator`.
    public static func load(
        arguments: [String],
        environment: [String: String],
        envFileContents: String?,
        locator: InstalledFileLocator
    ) throws -> LocatedConfiguration {
        let (configuration, origins) = try loadWithOrigins(
            arguments: arguments, environment: environment, envFile: envFileContents.map { ("env file", $0) })
        return LocatedConfiguration(configuration, origins: origins, locator: locator)
    }

    /// Reads the real environment and env file, and looks up the file paths no source set
    /// (`InstalledFileLocator.forProcess()`). An env file named explicitly must exist.
    public static func loadFromProcess(
        arguments: [String], locator: InstalledFileLocator = .forProcess()
    ) throws -> LocatedConfiguration {
        let environment = ProcessInfo.processInfo.environment
        let explicitPath = environment[envFileVariable].flatMap { $0.isEmpty ? nil : $0 }
        let path = explicitPath ?? defaultEnvFilePath
        var envFile: (path: String, contents: String)?
        if explicitPath != nil || FileManager.default.fileExists(atPath: path) {
            do throws(TextFile.ReadError) {
                envFile = (path, try TextFile.read(path))
            } catch {
                let reason = error.reason
                throw explicitPath != nil
                    ? ConfigurationError(
                        source: .environment(envFileVariable), setting: nil,
                        message: "environment variable \(envFileVariable) names '\(path)', which \(reason)")
                    : ConfigurationError(source: .envFile(path: path, line: 0), setting: nil, message: "\(path) \(reason)")
            }
        }
        let (configuration, origins) = try loadWithOrigins(arguments: arguments, environment: environment, envFile: envFile)
        return LocatedConfiguration(configuration, origins: origins, locator: locator)
    }

    /// Generated from the same table the loader uses, so it can't list a setting that doesn't exist.
    public static var helpText: String {
        let defaults = ServerConfiguration()
        var text = """
            Settings come from, later winning: built-in defaults, the env file (\(defaultEnvFilePath), \
            or the file named by \(envFileVariable)), the environment, then flags.

            A file path that is set is used as given. One that is not is looked for in the working \
            directory (a source checkout: \(InstalledFile.allCases.map(\.checkoutPath).joined(separator: ", "))), \
            then in share/retrorapid next to the executable (<prefix>/bin/retrorapid finds \
            <prefix>/share/retrorapid/{\(InstalledFile.allCases.map(\.installedName).joined(separator: ","))}), \
            then in \(InstalledFileLocator.defaultSystemShare); the first that exists wins. Without the Web \
            client or the migrations the server refuses to start; fonts and the OpenAPI document are optional.

            """
        for setting in settings {
            // A path that is looked up says where, after the checkout default.
            let lookup = InstalledFile.allCases.first { $0.settingKey == setting.key }.map {
                "\n      When unset: the first that exists of \($0.checkoutPath), "
                    + "<prefix>/share/retrorapid/\($0.installedName), \(InstalledFileLocator.defaultSystemShare)/\($0.installedName)."
            } ?? ""
            text += """

                  \(setting.flag) \(setting.valueName)   (env \(setting.environmentName))
                      \(setting.help)
                      Allowed: \(setting.allowed). Default: \(setting.render(defaults) ?? "not set").\(lookup)

                """
        }
        return text
    }

    static func load(
        arguments: [String],
        environment: [String: String],
        envFile: (path: String, contents: String)?
    ) throws -> ServerConfiguration {
        try loadWithOrigins(arguments: arguments, environment: environment, envFile: envFile).configuration
    }

    /// Also returns where each setting that some source set came from (by key).
    static func loadWithOrigins(
        arguments: [String],
        environment: [String: String],
        envFile: (path: String, contents: String)?
    ) throws -> (configuration: ServerConfiguration, origins: [String: ConfigurationError.Source]) {
        var configuration = ServerConfiguration()
        // Where each setting's final value came from, so a cross-setting error can point at it.
        var origins: [String: ConfigurationError.Source] = [:]

        // The two spellings of the database (`database-path`, `database-url`) as the sources gave
        // them, each checked against the other as it is applied (`checkDatabase`).
        var databaseGiven: [String: (url: DatabaseURL, source: ConfigurationError.Source)] = [:]

        func apply(_ setting: Setting, _ value: String, from source: ConfigurationError.Source) throws {
            guard setting.apply(&configuration, value) else {
                let rejection = setting.explainRejection?(value) ?? "expects \(setting.allowed), got '\(value)'"
                throw ConfigurationError(
                    source: source,
                    setting: setting.key,
                    message: "\(source.subject(setting.environmentName)) \(rejection)"
                )
            }
            origins[setting.key] = source
            if databaseKeys.contains(setting.key) {
                try checkDatabase(setting.key, configuration.databaseURL, from: source, against: &databaseGiven)
            }
        }

        if let envFile {
            for entry in try parseEnvFile(envFile.contents, path: envFile.path) {
                let source = ConfigurationError.Source.envFile(path: envFile.path, line: entry.line)
                guard let setting = settingsByEnvironmentName[entry.name] else {
                    if entry.name == envFileVariable {
                        throw ConfigurationError(
                            source: source, setting: nil,
                            message: "\(source.subject(entry.name)) only works in the process environment, not inside an env file"
                        )
                    }
                    if entry.name.hasPrefix(environmentPrefix) {
                        throw ConfigurationError(
                            source: source, setting: nil,
                            message: "\(source.subject(entry.name)) is not a setting; run with --help to list them"
                        )
                    }
                    continue  // Not ours: the file may be shared with other tools.
                }
                try apply(setting, entry.value, from: source)
            }
        }

        for setting in settings {
            if let value = environment[setting.environmentName] {
                try apply(setting, value, from: .environment(setting.environmentName))
            }
        }

        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments(arguments, valueOptions: Set(settings.map(\.key)))
        } catch let error as ArgumentError {
            throw ConfigurationError(flagError: error)
        }
        if let extra = parsed.positionals.first {
            throw ConfigurationError(
                source: .flag(extra), setting: nil,
                message: "unexpected argument '\(extra)'; every setting is given as --name value"
            )
        }
        for setting in settings {
            if let value = parsed.value(setting.key) {
                try apply(setting, value, from: .flag(setting.flag))
            }
        }

        try checkTLSPair(configuration, origins: origins)
        try checkKeepalive(configuration, origins: origins)
        try checkClusterLease(configuration, origins: origins)
        try checkPayments(configuration, origins: origins)
        try checkClusterSecrets(configuration, origins: origins)
        return (configuration, origins)
    }

    /// The two settings that name the database: `--database-path PATH` is `--database-url sqlite:PATH`.
    static let databaseKeys: Set<String> = ["database-path", "database-url"]

    /// Sources apply in order (the env file, the environment, flags), so of the two spellings
    /// the later source's already holds, as for any setting. Given by the same source, though,
    /// they must name the same database: neither can be said to win.
    private static func checkDatabase(
        _ key: String, _ url: DatabaseURL, from source: ConfigurationError.Source,
        against given: inout [String: (url: DatabaseURL, source: ConfigurationError.Source)]
    ) throws {
        func level(_ source: ConfigurationError.Source) -> Int {
            switch source {
            case .envFile: 0
            case .environment: 1
            case .flag: 2
            }
        }
        given[key] = (url, source)
        let otherKey = key == "database-url" ? "database-path" : "database-url"
        guard let other = given[otherKey], level(other.source) == level(source), other.url != url else { return }
        typealias Given = (url: DatabaseURL, source: ConfigurationError.Source)
        let mine: Given = (url, source)
        let urlGiven: Given = key == "database-url" ? mine : other
        let pathGiven: Given = key == "database-url" ? other : mine
        let urlSetting = setting("database-url")
        let pathSetting = setting("database-path")
        throw ConfigurationError(
            source: source, setting: key,
            message: "\(urlGiven.source.subject(urlSetting.environmentName)) (\(urlGiven.url.redacted)) and "
                + "\(pathGiven.source.subject(pathSetting.environmentName)) (\(pathGiven.url.location)) name different "
                + "databases; give one of them (\(pathSetting.flag) PATH is \(urlSetting.flag) sqlite:PATH)")
    }

    /// `http://` or `https://`, a host, no trailing slash, no query: what paths are appended to.
    public static func isBaseURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, !text.hasSuffix("/")
        else { return false }
        return true
    }

    /// A base URL the secret key may be sent to: https, or http to this machine only.
    public static func isProviderURL(_ text: String) -> Bool {
        guard isBaseURL(text), let components = URLComponents(string: text) else { return false }
        if components.scheme?.lowercased() == "https" { return true }
        return ["localhost", "127.0.0.1", "[::1]", "::1"].contains(components.host?.lowercased() ?? "")
    }

    /// Selling needs all of it: a key without the webhook secret would take money it can never
    /// credit, and without the public address the provider has nowhere to send players back.
    private static func checkPayments(_ configuration: ServerConfiguration, origins: [String: ConfigurationError.Source]) throws {
        guard configuration.paymentSecretKey != nil else { return }
        let key = setting("payment-secret-key")
        let source = origins[key.key] ?? .flag(key.flag)
        if configuration.webhookSecret == nil {
            throw ConfigurationError(source: source, setting: "webhook-secret",
                                     message: "\(source.subject(key.environmentName)) is set but webhook-secret is not; "
                                        + "without it no payment can be credited")
        }
        guard let base = configuration.publicBaseURL else {
            throw ConfigurationError(source: source, setting: "public-base-url",
                                     message: "\(source.subject(key.environmentName)) is set but public-base-url is not; "
                                        + "the provider needs it to send players back")
        }
        if !isBaseURL(base) {
            let given = setting("public-base-url")
            let baseSource = origins[given.key] ?? .flag(given.flag)
            throw ConfigurationError(source: baseSource, setting: given.key,
                                     message: "\(baseSource.subject(given.environmentName)) expects an http:// or https:// URL "
                                        + "without a trailing slash, got '\(base)'")
        }
    }

    /// The previous secret is only ever a second one: alone, or equal to the current, it is a
    /// mistake in a rotation.
    private static func checkClusterSecrets(_ configuration: ServerConfiguration,
                                            origins: [String: ConfigurationError.Source]) throws {
        guard let previous = configuration.clusterSecretPrevious else { return }
        let given = setting("cluster-secret-previous")
        let source = origins[given.key] ?? .flag(given.flag)
        guard let current = configuration.clusterSecret else {
            throw ConfigurationError(source: source, setting: "cluster-secret",
                                     message: "\(source.subject(given.environmentName)) is set but cluster-secret is not; "
                                        + "the previous secret is accepted beside the current one, never alone")
        }
        if previous == current {
            throw ConfigurationError(source: source, setting: given.key,
                                     message: "\(source.subject(given.environmentName)) is the same as cluster-secret; "
                                        + "unset it, or set it to the other secret of a rotation")
        }
    }

    /// What `serve` tells an operator who started a cluster node (a PostgreSQL database)
    /// without `--cluster-secret`.
    public static var missingClusterSecretMessage: String {
        let secret = setting("cluster-secret")
        return "\(secret.key) is not set: a server on a PostgreSQL database is a node of a cluster, and every message "
            + "between nodes is signed with a secret they share. Set \(secret.environmentName) (or \(secret.flag)) to "
            + "the same secret of at least \(clusterSecretMinimumLength) characters on every node; make one with "
            + "`openssl rand -base64 48` (docs/OPERATIONS.md, \"Signing the cluster bus\")"
    }

    /// A shorter cluster secret is refused (RetroRapidDomain's `ClusterSecrets` checks the same).
    public static let clusterSecretMinimumLength = 32
    static let clusterSecretMaximumLength = 1024

    /// Why `text` cannot be a cluster secret, without repeating it; nil when it can.
    static func clusterSecretProblem(_ text: String) -> String? {
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            return "expects a cluster secret without spaces or control characters"
        }
        let length = text.utf8.count
        if length < clusterSecretMinimumLength {
            return "expects a cluster secret of at least \(clusterSecretMinimumLength) characters, got \(length); "
                + "make one with `openssl rand -base64 48`"
        }
        if length > clusterSecretMaximumLength {
            return "expects a cluster secret of at most \(clusterSecretMaximumLength) characters, got \(length)"
        }
        return nil
    }

    /// A hang-up that comes before the PING would close live connections that merely listen.
    private static func checkKeepalive(_ configuration: ServerConfiguration, origins: [String: ConfigurationError.Source]) throws {
        guard configuration.keepaliveHangupSeconds <= configuration.keepalivePingSeconds else { return }
        let hangup = setting("keepalive-hangup-seconds")
        let ping = setting("keepalive-ping-seconds")
        let culprit = origins[hangup.key] != nil ? hangup : ping
        let source = origins[culprit.key] ?? .flag(culprit.flag)
        throw ConfigurationError(
            source: source, setting: culprit.key,
            message: "\(source.subject(culprit.environmentName)): keepalive-hangup-seconds "
                + "(\(configuration.keepaliveHangupSeconds)) must be more than keepalive-ping-seconds "
                + "(\(configuration.keepalivePingSeconds)), or a client gets no time to answer the PING")
    }

    /// A lease of fewer than three heartbeats takes a node that missed one or two (a slow
    /// database, a pause) for dead while it still runs its games.
    private static func checkClusterLease(_ configuration: ServerConfiguration, origins: [String: ConfigurationError.Source]) throws {
        guard configuration.clusterLeaseSeconds < 3 * configuration.clusterHeartbeatSeconds else { return }
        let lease = setting("cluster-lease-seconds")
        let heartbeat = setting("cluster-heartbeat-seconds")
        let culprit = origins[lease.key] != nil ? lease : heartbeat
        let source = origins[culprit.key] ?? .flag(culprit.flag)
        throw ConfigurationError(
            source: source, setting: culprit.key,
            message: "\(source.subject(culprit.environmentName)): cluster-lease-seconds (\(configuration.clusterLeaseSeconds)) "
                + "must be at least three cluster-heartbeat-seconds (\(configuration.clusterHeartbeatSeconds)), or a node "
                + "that missed a heartbeat or two is taken for dead while it still runs its games")
    }

    /// A certificate without its key (or the reverse) would fail only at the first TLS handshake.
    private static func checkTLSPair(_ configuration: ServerConfiguration, origins: [String: ConfigurationError.Source]) throws {
        let certificate = setting("tls-certificate-path")
        let key = setting("tls-key-path")
        let pairs = [(certificate, key, configuration.tlsCertificatePath != nil && configuration.tlsKeyPath == nil),
                     (key, certificate, configuration.tlsKeyPath != nil && configuration.tlsCertificatePath == nil)]
        for (given, missing, isBroken) in pairs where isBroken {
            let source = origins[given.key]!
            throw ConfigurationError(
                source: source,
                setting: missing.key,
                message: "\(source.subject(given.environmentName)) is set but \(missing.key) is not; set both "
                    + "(\(missing.flag) or \(missing.environmentName)) to serve TLS, or neither to serve plain HTTP"
            )
        }
    }
}

extension ConfigurationError {
    init(flagError error: ArgumentError) {
        let name: String
        let hint: String
        switch error {
        case .unknownOption(let option):
            name = option
            hint = "; run with --help to list the settings"
        case .missingValue(let option), .repeated(let option), .invalidValue(let option, _, _):
            name = option
            hint = ""
        }
        let known = ServerConfiguration.settings.first { $0.key == name }
        self.init(source: .flag(ArgumentError.spelling(name)), setting: known?.key, message: error.description + hint)
    }
}

// MARK: - The settings table

extension ServerConfiguration {
    /// One row per setting. The env var and flag are both derived from `key`, and help, parsing and
    /// error messages all read the same row, so the three sources and `--help` can't drift apart.
    struct Setting: Sendable {
        /// The Swift property the row fills; lets a test prove every property has a row.
        let property: String
        /// kebab-case; `--key` on the command line, `RETRORAPID_KEY` in the environment.
        let key: String
        let valueName: String
        let help: String
        /// Finishes the sentence "expects …" in error messages.
        let allowed: String
        /// Returns false when the text is not an allowed value.
        let apply: @Sendable (inout ServerConfiguration, String) -> Bool
        /// The value as it would be written in a flag; nil when unset. Used for defaults in `--help`.
        let render: @Sendable (ServerConfiguration) -> String?
        /// What finishes "FLAG …" when `apply` refused the text, for a setting that knows better
        /// than "expects ALLOWED, got 'TEXT'" (or must not repeat the text: a password).
        var explainRejection: (@Sendable (String) -> String)? = nil

        var flag: String { "--\(key)" }
        var environmentName: String { environmentPrefix + key.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    static let environmentPrefix = "RETRORAPID_"

    static let settings: [Setting] = [
        .text("host", "host", \.host, valueName: "ADDRESS", help: "Address to listen on; 0.0.0.0 means every interface.",
              allowed: "a host name or IP address without spaces", isValid: { !$0.contains(where: \.isWhitespace) }),
        .integer("port", "port", \.port, range: 0...65535, help: "TCP port for HTTP and WebSocket connections; 0 picks a free one."),
        .text("nodeID", "node-id", \.nodeID, valueName: "NAME",
              help: "This node's name among the nodes sharing one PostgreSQL database; unique per node and the same "
                  + "after a restart (its games are found by it). Empty means the host name.",
              allowed: "up to 64 letters, digits, '.', '_' or '-'",
              isValid: { $0.count <= 64 && $0.utf8.allSatisfy { ClusterNodeName.isAllowed($0) } }),
        .integer("clusterHeartbeatSeconds", "cluster-heartbeat-seconds", \.clusterHeartbeatSeconds, range: 1...30,
                 help: "Seconds between a node's heartbeats in its database row (cluster mode). The same on every node."),
        .integer("clusterLeaseSeconds", "cluster-lease-seconds", \.clusterLeaseSeconds, range: 3...120,
                 help: "A node whose heartbeat is this old is taken for dead, and its games are taken back elsewhere; "
                     + "at least three heartbeats. Shorter takes games back sooner after a crash; longer rides out "
                     + "longer stalls of a node or the database. The same on every node: a node whose lease differs "
                     + "from a live node's is refused at start."),
        .gameURL("gameURL", "game-url",
                 help: "Where players reach this node's game connections straight, e.g. wss://a.play.example.com/ws: "
                     + "pages first connect through the site and then here, so no proxy relays the game's frames. "
                     + "Needs the node reachable there, with TLS when the site uses it (docs/OPERATIONS.md, \"Game "
                     + "connections straight to the node\"). Empty: every game connection comes through the site."),
        .gameURLSources("gameURLSources", "game-url-sources",
                        help: "The other nodes' game URLs a page may follow a refusal to, for the pages' "
                            + "Content-Security-Policy (connect-src): wss://b.play.example.com, or wss://*.play.example.com "
                            + "for every node. This node's own game-url is always allowed."),
        .clusterSecret("clusterSecret", "cluster-secret", \.clusterSecret,
                       help: "The secret every node of a cluster signs its messages to the other nodes with (HMAC-SHA256 "
                           + "over LISTEN/NOTIFY, which any database role could otherwise forge). Required on a "
                           + "PostgreSQL database; the same on every node; make one with `openssl rand -base64 48`. "
                           + "Unused on SQLite (a single node)."),
        .clusterSecret("clusterSecretPrevious", "cluster-secret-previous", \.clusterSecretPrevious,
                       help: "A second secret accepted from other nodes but never used to sign, so a rotation drops "
                           + "no message: first the new secret here on every node, then it becomes cluster-secret "
                           + "with the old one here, then this is unset (docs/OPERATIONS.md, \"Signing the cluster bus\")."),
        .databaseURL("databaseURL", "database-url",
                     help: "Where the data lives: sqlite:PATH, a SQLite file used as given (relative to the "
                         + "working directory, never looked up; created with its folder when missing), or "
                         + "postgres://..., a PostgreSQL server's database (its migrations in the postgresql folder "
                         + "inside --migrations-path). A password in it is never printed: messages and logs show "
                         + "***. --database-path PATH is the same as sqlite:PATH; if one source (the flags, the "
                         + "environment or the env file) gives both, they must agree, else the later source wins "
                         + "as for any setting."),
        // Fills databaseURL: the one setting has two rows.
        .databasePath("databaseURL", "database-path",
                      help: "SQLite database file: the same as --database-url sqlite:PATH."),
        .text("webRoot", "web-root", \.webRoot, valueName: "DIR", help: "Directory of static files served to browsers."),
        .text("fontsPath", "fonts-path", \.fontsPath, valueName: "DIR",
              help: "Directory of font files served at /fonts (scripts/install-fonts.sh fills it from Debian's "
                  + "fonts-dseg and fonts-inter). When it does not exist a warning is logged at start and "
                  + "browsers use their fallback fonts."),
        .text("migrationsPath", "migrations-path", \.migrationsPath, valueName: "DIR",
              help: "Directory of numbered SQL migrations, applied at start."),
        .text("openAPIPath", "openapi-path", \.openAPIPath, valueName: "FILE",
              help: "The API's OpenAPI document, served at /api/v1/openapi.json. When it does not exist a "
                  + "warning is logged at start and that path answers 404."),
        .optionalText("tlsCertificatePath", "tls-certificate-path", \.tlsCertificatePath, valueName: "PATH",
                      help: "PEM certificate chain; serve HTTPS and WSS when set. Needs --tls-key-path."),
        .optionalText("tlsKeyPath", "tls-key-path", \.tlsKeyPath, valueName: "PATH",
                      help: "PEM private key for --tls-certificate-path."),
        .choice("logLevel", "log-level", \.logLevel, valueName: "LEVEL", help: "Least severe log level written."),
        .choice("logFormat", "log-format", \.logFormat, valueName: "FORMAT", help: "text for people at a terminal, json for log collectors."),
        .integer("dailyFreePlays", "daily-free-plays", \.dailyFreePlays, range: 0...1000,
                 help: "Games a player without the unlimited pass may start each day."),
        .integer("unlimitedPriceMinorUnits", "unlimited-price-minor-units", \.unlimitedPriceMinorUnits, range: 1...1_000_000,
                 help: "Price of the unlimited pass in the currency's minor units (299 with GBP is £2.99)."),
        .text("currency", "currency", \.currency, valueName: "CODE", help: "ISO 4217 currency of the price.",
              allowed: "a three-letter ISO 4217 code such as GBP",
              isValid: { $0.count == 3 && $0.allSatisfy { $0.isASCII && $0.isUppercase } }),
        .integer("latencyGraceMilliseconds", "latency-grace-milliseconds", \.latencyGraceMilliseconds, range: 0...2000,
                 help: "How late a move may arrive and still count, to forgive network delay."),
        .integer("disconnectGraceSeconds", "disconnect-grace-seconds", \.disconnectGraceSeconds, range: 0...3600,
                 help: "How long a dropped player's game waits for them to reconnect."),
        .integer("watchersPerGame", "watchers-per-game", \.watchersPerGame, range: 0...10_000,
                 help: "How many connections may watch one running game at once (0 turns watching off)."),
        .integer("checkpointIntervalMilliseconds", "checkpoint-interval-milliseconds", \.checkpointIntervalMilliseconds,
                 range: 100...60_000,
                 help: "How often what changed in running games (steps, moves) is saved, one transaction for "
                     + "up to --checkpoint-games-per-slice games. A crash of the server loses at most this much of each game; at the next start "
                     + "every game it left running is saved as server_crash from its last checkpoint."),
        .integer("checkpointGamesPerSlice", "checkpoint-games-per-slice", \.checkpointGamesPerSlice, range: 1...1_000_000,
                 help: "About how many games one checkpoint transaction holds. More running games than this are "
                     + "checkpointed in up to ten slices spread over the interval, so that no one moment of the game "
                     + "loop gathers them all; fewer keep one transaction an interval."),
        .integer("storageThreads", "storage-threads", \.storageThreads, range: 1...32,
                 help: "Threads that run database work, each with its own connection. A game's start, "
                     + "checkpoints and record stay in order on one of them (chosen by its player); other work "
                     + "keeps one thread. Keep 1 with SQLite, which writes one transaction at a time."),
        .integer("storageThreadNiceness", "storage-thread-niceness", \.storageThreadNiceness, range: 0...19,
                 help: "How many nice levels below the game loop the storage threads run, so that on a busy core "
                     + "steps and moves go out first and database work takes the time between (0 keeps one "
                     + "priority). Nothing is acknowledged before it is stored either way."),
        .integer("maxMessageBytes", "max-message-bytes", \.maxMessageBytes, range: 256...1_048_576,
                 help: "Largest WebSocket message accepted from a client."),
        .integer("maxConnectionsPerIP", "max-connections-per-ip", \.maxConnectionsPerIP, range: 1...100_000,
                 help: "Open game connections (/ws) allowed from one client IP address."),
        .integer("maxHTTPConnectionsPerIP", "max-http-connections-per-ip", \.maxHTTPConnectionsPerIP, range: 1...100_000,
                 help: "Open HTTP connections (files and API, not game connections) allowed from one client IP "
                     + "address; a request on one more is answered 429. Behind --trusted-proxies the client is "
                     + "the one X-Forwarded-For names, not the proxy. Room for a classroom behind one address."),
        .integer("httpRequestTimeoutSeconds", "http-request-timeout-seconds", \.httpRequestTimeoutSeconds, range: 1...3600,
                 help: "A request's head and body must both be in this long after the request began (its "
                     + "connection opened, or the previous answer on it went out), or it is answered 408 and "
                     + "closed; its head alone gets the smaller of this and 10 seconds."),
        .integer("helloTimeoutSeconds", "hello-timeout-seconds", \.helloTimeoutSeconds, range: 1...300,
                 help: "How long a new game connection has to send hello; then it is closed (4408)."),
        .integer("websocketIdleTimeoutSeconds", "websocket-idle-timeout-seconds", \.websocketIdleTimeoutSeconds,
                 range: 1...86_400,
                 help: "A signed-in game connection with no game running (none yet, paused or over) that sends "
                     + "no message for this long is closed (4408). A running game is never timed out: its "
                     + "player may only be listening. The browser client pings every third of it (no more often "
                     + "than every 5 s), so keep it at 15 or more."),
        .integer("websocketMaxQueuedMessages", "websocket-max-queued-messages", \.websocketMaxQueuedMessages,
                 range: 8...10_000,
                 help: "Messages that may wait for one game client. A client that stops reading is dropped "
                     + "(1008) when this many are unread; its game waits as after a dropped connection."),
        .integer("keepalivePingSeconds", "keepalive-ping-seconds", \.keepalivePingSeconds, range: 1...3600,
                 help: "A game connection that sends nothing (no message, no PONG) for this long gets a WebSocket "
                     + "PING. Keep it below any reverse proxy's read timeout."),
        .integer("keepaliveHangupSeconds", "keepalive-hangup-seconds", \.keepaliveHangupSeconds, range: 2...7200,
                 help: "A game connection that sends nothing for this long, PINGs unanswered, is a dead peer: it is "
                     + "closed (1001) and its game waits for the player. Must be more than --keepalive-ping-seconds."),
        .addressList("trustedProxies", "trusted-proxies", \.trustedProxies,
                     help: "Reverse proxies in front of the server. Only a connection from one of them has its "
                         + "X-Forwarded-For believed: per-IP limits then count the rightmost address in it that "
                         + "is not a trusted proxy. Empty trusts none."),
        .contactAddress("accessibilityContact", "accessibility-contact", \.accessibilityContact,
                        help: "Where players report an accessibility barrier: the accessibility statement's \"Tell "
                            + "us\" links here. An https:// page or form, or a mailto: address. Empty publishes none."),
        .originList("allowedOrigins", "allowed-origins", \.allowedOrigins,
                    help: "Web origins besides the server's own whose pages may open game connections (/ws), e.g. "
                        + "the public name of a site whose reverse proxy sends another Host. An upgrade with an "
                        + "Origin that is neither the request's Host nor listed here is refused (403); one with "
                        + "no Origin (not a browser) is let in. Empty allows the server's own origin only."),
        .rate("newPlayersPerAddress", "new-players-per-address", \.newPlayersPerAddress,
              help: "Players one client address may create (POST /api/v1/players), every one counted; "
                  + "over it: 429 with Retry-After. Generous, since a classroom, a conference booth or a "
                  + "mobile carrier's NAT puts many first-time players behind one address."),
        .rate("newPlayersPerServer", "new-players-per-server", \.newPlayersPerServer,
              help: "Players the whole server creates, from every address together: what bounds a script "
                  + "spread over many addresses; over it: 429 with Retry-After."),
        .rate("failedLinkClaimsPerAddress", "failed-link-claims-per-address", \.failedLinkClaimsPerAddress,
              help: "Link-code claims from one client address that claim nothing (unknown, used, expired or "
                  + "malformed code); then every claim from it answers 429 until the oldest failure is a window old. "
                  + "Claims that join a device cost nothing."),
        .rate("failedCodesPerPlayer", "failed-codes-per-player", \.failedCodesPerPlayer,
              help: "Code redemptions by one player that redeem nothing (unknown, expired or malformed code); then "
                  + "their redemptions answer 429. A code redeemed (or redeemed again) costs nothing."),
        .rate("failedCodesPerAddress", "failed-codes-per-address", \.failedCodesPerAddress,
              help: "The same, for every player at one client address together: generous, since a classroom "
                  + "may share one address, but what stops one client guessing with many players."),
        .rate("failedSignInsPerAddress", "failed-sign-ins-per-address", \.failedSignInsPerAddress,
              help: "Device tokens from one client address that sign nobody in (unknown, malformed or revoked), "
                  + "over HTTP and in the WebSocket hello together; then every signed-in request from it answers "
                  + "429 and every hello is refused (4429) until the oldest failure is a window old."),
        .rate("checkoutSessionsPerPlayer", "checkout-sessions-per-player", \.checkoutSessionsPerPlayer,
              help: "Checkout sessions one player may open at the payment provider (POST /api/v1/orders that "
                  + "opens a new one), every one counted; over it: 429 with Retry-After. Coming back to an open "
                  + "order costs nothing."),
        .optionalText("webhookSecret", "webhook-secret", \.webhookSecret, valueName: "SECRET", isSecret: true,
                      help: "The webhook signing secret (Stripe's whsec_…) that payment webhooks (Stripe-Signature) "
                          + "are signed with. Needed to sell unlimited play."),
        .text("paymentProviderURL", "payment-provider-url", \.paymentProviderURL, valueName: "URL",
              help: "Base URL of the payment provider's API, Stripe's shape (POST <URL>/v1/checkout/sessions). "
                  + "The secret key travels to it, so plain http:// is taken only for this machine (a local stand-in).",
              allowed: "an https:// URL (http:// only to localhost, 127.0.0.1 or [::1]) without a trailing slash",
              isValid: ServerConfiguration.isProviderURL),
        .optionalText("paymentSecretKey", "payment-secret-key", \.paymentSecretKey, valueName: "KEY", isSecret: true,
                      help: "The provider's secret API key (sk_live_… / sk_test_…) that opens checkout sessions. "
                          + "Not set: this server sells nothing (buying answers 503 payments_unavailable). "
                          + "Needs webhook-secret and public-base-url."),
        .integer("paymentTimeoutSeconds", "payment-timeout-seconds", \.paymentTimeoutSeconds, range: 1...60,
                 help: "How long a call to the payment provider may take before the purchase answers 502."),
        .optionalText("publicBaseURL", "public-base-url", \.publicBaseURL, valueName: "URL",
                      help: "This site's public address as players reach it (https://game.example.com): the "
                          + "provider sends them back to <URL>/unlock.html after paying or cancelling."),
        .integer("standingsIntervalMilliseconds", "standings-interval-ms", \.standingsIntervalMilliseconds,
                 range: 50...10_000,
                 help: "The least time between two standings messages of one race (sent only when something "
                     + "changed; the first and the last are always sent)."),
        .integer("raceCountdownSeconds", "race-countdown-seconds", \.raceCountdownSeconds, range: 0...60,
                 help: "The countdown between a race's start and its first step, the same for every racer."),
        .integer("raceTimeLimitSeconds", "race-time-limit-seconds", \.raceTimeLimitSeconds, range: 10...86_400,
                 help: "A race ends this long after its start deadline: the racers still racing end then (their "
                     + "games are stored abandoned with their scores; the race says time_limit)."),
        .integer("quickRaceWaitSeconds", "quick-race-wait-seconds", \.quickRaceWaitSeconds, range: 0...600,
                 help: "How long the quick-race queue of a level waits, from its second racer's arrival, before it "
                     + "forms a room of whoever waits (at once when 8 wait)."),
        .integer("maxRooms", "max-rooms", \.maxRooms, range: 1...1_000_000,
                 help: "Race rooms open on this node at once; one more is refused (too_many_rooms)."),
        .boolean("metricsEnabled", "metrics-enabled", \.metricsEnabled, help: "Whether the server exposes its metrics."),
        .text("consoleHost", "console-host", \.consoleHost, valueName: "ADDRESS",
              help: "Address the operator console listens on. Keep it on loopback (reach it over an SSH tunnel) "
                  + "or a private address behind a proxy with an allow list (docs/OPERATIONS.md, \"The console\").",
              allowed: "an IP address without spaces", isValid: { !$0.isEmpty && !$0.contains(where: \.isWhitespace) }),
        .optionalInteger("consolePort", "console-port", \.consolePort, range: 0...65535,
                         help: "TCP port of the operator console, apart from the players' port; 0 picks a free one. "
                             + "Not set: no console."),
        .text("consoleRoot", "console-root", \.consoleRoot, valueName: "DIR",
              help: "Directory of the operator console's pages, served only on the console's listener."),
        .rate("operatorSignInsPerAddress", "operator-sign-ins-per-address", \.operatorSignInsPerAddress,
              help: "Operator console sign-ins from one client address, every attempt counted; over it: 429 with "
                  + "Retry-After. Counted in the database, so every node and restart share one budget."),
        .choice("eventLoop", "event-loop", \.eventLoop, valueName: "LOOP",
                help: "libev (epoll, for many connections; needs Debian's libwebsockets-evlib-ev) or poll "
                    + "(libwebsockets' own loop, which scans every socket on each wakeup)."),
    ]

    static let settingsByEnvironmentName = Dictionary(uniqueKeysWithValues: settings.map { ($0.environmentName, $0) })

    static func setting(_ key: String) -> Setting {
        guard let setting = settings.first(where: { $0.key == key }) else { preconditionFailure("no setting '\(key)'") }
        return setting
    }
}

extension ServerConfiguration.Setting {
    typealias Property<Value> = WritableKeyPath<ServerConfiguration, Value> & Sendable

    static func integer(_ property: String, _ key: String, _ keyPath: Property<Int>, range: ClosedRange<Int>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "N", help: help,
            allowed: "a whole number from \(range.lowerBound) to \(range.upperBound)",
            apply: { configuration, text in
                guard let number = Int(text), range.contains(number) else { return false }
                configuration[keyPath: keyPath] = number
                return true
            },
            render: { String($0[keyPath: keyPath]) }
        )
    }

    static func text(
        _ property: String, _ key: String, _ keyPath: Property<String>, valueName: String, help: String,
        allowed: String = "any non-empty text", isValid: @escaping @Sendable (String) -> Bool = { _ in true }
    ) -> Self {
        Self(
            property: property, key: key, valueName: valueName, help: help, allowed: allowed,
            apply: { configuration, text in
                guard !text.isEmpty, isValid(text) else { return false }
                configuration[keyPath: keyPath] = text
                return true
            },
            render: { $0[keyPath: keyPath] }
        )
    }

    /// An address people are sent to from a page: https://host/… or mailto:name@host, nothing
    /// else (no javascript:, no http:, no spaces or control characters); empty unsets it.
    static func contactAddress(_ property: String, _ key: String, _ keyPath: Property<String?>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "URL", help: help,
            allowed: "an https:// address or a mailto: address, or empty to unset",
            apply: { configuration, text in
                if text.isEmpty {
                    configuration[keyPath: keyPath] = nil
                    return true
                }
                guard isContactAddress(text) else { return false }
                configuration[keyPath: keyPath] = text
                return true
            },
            render: { $0[keyPath: keyPath] }
        )
    }

    static func isContactAddress(_ text: String) -> Bool {
        guard text.utf8.count <= 2048,
              text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"<>\"\\".unicodeScalars.contains($0) })
        else { return false }
        let lower = text.lowercased()
        if lower.hasPrefix("https://") {
            let host = text.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            return !host.isEmpty && !host.contains("@")
        }
        if lower.hasPrefix("mailto:") {
            let address = text.dropFirst("mailto:".count).prefix { $0 != "?" }
            let parts = address.split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".")
        }
        return false
    }

    /// A whole number in `range`, or empty to unset.
    static func optionalInteger(_ property: String, _ key: String, _ keyPath: Property<Int?>, range: ClosedRange<Int>,
                                help: String) -> Self {
        Self(
            property: property, key: key, valueName: "N", help: help,
            allowed: "a whole number from \(range.lowerBound) to \(range.upperBound), or empty to unset",
            apply: { configuration, text in
                if text.isEmpty {
                    configuration[keyPath: keyPath] = nil
                    return true
                }
                guard let number = Int(text), range.contains(number) else { return false }
                configuration[keyPath: keyPath] = number
                return true
            },
            render: { $0[keyPath: keyPath].map(String.init) }
        )
    }

    /// An empty value unsets the setting, so a later source can switch off what an earlier one set.
    static func optionalText(
        _ property: String, _ key: String, _ keyPath: Property<String?>, valueName: String, isSecret: Bool = false, help: String
    ) -> Self {
        Self(
            property: property, key: key, valueName: valueName, help: help,
            allowed: "any text, or empty to unset",
            apply: { configuration, text in
                configuration[keyPath: keyPath] = text.isEmpty ? nil : text
                return true
            },
            render: { configuration in configuration[keyPath: keyPath].map { isSecret ? "(secret)" : $0 } }
        )
    }

    /// A cluster secret (``ServerConfiguration/clusterSecretProblem(_:)``): shown as `(secret)`,
    /// never repeated in an error; empty unsets it.
    static func clusterSecret(_ property: String, _ key: String, _ keyPath: Property<String?>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "SECRET", help: help,
            allowed: "\(ServerConfiguration.clusterSecretMinimumLength) to \(ServerConfiguration.clusterSecretMaximumLength) "
                + "characters without spaces, or empty to unset",
            apply: { configuration, text in
                if text.isEmpty {
                    configuration[keyPath: keyPath] = nil
                    return true
                }
                guard ServerConfiguration.clusterSecretProblem(text) == nil else { return false }
                configuration[keyPath: keyPath] = text
                return true
            },
            render: { configuration in configuration[keyPath: keyPath].map { _ in "(secret)" } },
            explainRejection: { text in ServerConfiguration.clusterSecretProblem(text) ?? "expects a cluster secret" }
        )
    }

    static func choice<Value: RawRepresentable<String> & CaseIterable & Sendable>(
        _ property: String, _ key: String, _ keyPath: Property<Value>, valueName: String, help: String
    ) -> Self {
        let names = Value.allCases.map(\.rawValue)
        return Self(
            property: property, key: key, valueName: valueName, help: help,
            allowed: "one of \(names.joined(separator: ", "))",
            apply: { configuration, text in
                guard let value = Value(rawValue: text.lowercased()) else { return false }
                configuration[keyPath: keyPath] = value
                return true
            },
            render: { $0[keyPath: keyPath].rawValue }
        )
    }

    /// Comma-separated numeric IP addresses, kept in canonical form so they compare equal to
    /// the addresses sockets report. An empty value is the empty list.
    static func addressList(_ property: String, _ key: String, _ keyPath: Property<[String]>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "ADDRESS,...", help: help,
            allowed: "comma-separated numeric IPv4 or IPv6 addresses (no ranges), or empty for none",
            apply: { configuration, text in
                var addresses: [String] = []
                if !text.allSatisfy(\.isWhitespace) {
                    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                        guard let address = IPAddress.canonical(part.trimmingCharacters(in: .whitespaces)) else { return false }
                        if !addresses.contains(address) { addresses.append(address) }
                    }
                }
                configuration[keyPath: keyPath] = addresses
                return true
            },
            render: { configuration in
                let addresses = configuration[keyPath: keyPath]
                return addresses.isEmpty ? nil : addresses.joined(separator: ",")
            }
        )
    }

    /// Comma-separated web origins (`WebOrigin`), kept as browsers write them so they compare
    /// equal to an `Origin` header. An empty value is the empty list.
    static func originList(_ property: String, _ key: String, _ keyPath: Property<[String]>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "ORIGIN,...", help: help,
            allowed: "comma-separated origins such as https://game.example.com or http://localhost:8080 "
                + "(http or https, a host, an optional port, no path), or empty for none",
            apply: { configuration, text in
                var origins: [String] = []
                if !text.allSatisfy(\.isWhitespace) {
                    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                        guard let origin = WebOrigin(part.trimmingCharacters(in: .whitespaces)) else { return false }
                        if !origins.contains(origin.description) { origins.append(origin.description) }
                    }
                }
                configuration[keyPath: keyPath] = origins
                return true
            },
            render: { configuration in
                let origins = configuration[keyPath: keyPath]
                return origins.isEmpty ? nil : origins.joined(separator: ",")
            }
        )
    }

    /// A node's game URL (``GameURL``), stored as it writes it; empty unsets it.
    static func gameURL(_ property: String, _ key: String, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "URL", help: help,
            allowed: "a ws:// or wss:// URL with a host, an optional port and a plain path, at most "
                + "\(GameURL.maximumLength) characters, or empty to unset",
            apply: { configuration, text in
                guard !text.isEmpty else {
                    configuration.gameURL = nil
                    return true
                }
                guard let url = GameURL(text) else { return false }
                configuration.gameURL = url.description
                return true
            },
            render: { configuration in configuration.gameURL }
        )
    }

    /// Comma-separated `connect-src` sources for game URLs.
    static func gameURLSources(_ property: String, _ key: String, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "SOURCE,...", help: help,
            allowed: "comma-separated ws:// or wss:// sources with a host (which may start with *.) and an optional "
                + "port, nothing after, or empty for none",
            apply: { configuration, text in
                var sources: [String] = []
                if !text.allSatisfy(\.isWhitespace) {
                    for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                        guard part.utf8.count <= GameURL.maximumLength,
                              let source = GameURL.connectSource(part.trimmingCharacters(in: .whitespaces)) else { return false }
                        if !sources.contains(source) { sources.append(source) }
                    }
                }
                configuration.gameURLSources = sources
                return true
            },
            render: { configuration in
                configuration.gameURLSources.isEmpty ? nil : configuration.gameURLSources.joined(separator: ",")
            }
        )
    }

    /// `COUNT/SECONDS`: at most COUNT in any SECONDS (`RateLimit`).
    static func rate(_ property: String, _ key: String, _ keyPath: Property<RateLimit>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "COUNT/SECONDS", help: help,
            allowed: "COUNT/SECONDS, at most COUNT in any SECONDS (e.g. 10/600), COUNT from "
                + "\(RateLimit.countRange.lowerBound) to \(RateLimit.countRange.upperBound), SECONDS from "
                + "\(RateLimit.windowSecondsRange.lowerBound) to \(RateLimit.windowSecondsRange.upperBound)",
            apply: { configuration, text in
                guard let limit = RateLimit(parsing: text.trimmingCharacters(in: .whitespaces)) else { return false }
                configuration[keyPath: keyPath] = limit
                return true
            },
            render: { $0[keyPath: keyPath].description }
        )
    }

    /// `--database-url`: a `DatabaseURL`, shown and rejected redacted.
    static func databaseURL(_ property: String, _ key: String, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "URL", help: help,
            allowed: DatabaseURL.acceptedForms,
            apply: { configuration, text in
                guard let url = try? DatabaseURL(parsing: text) else { return false }
                configuration.databaseURL = url
                return true
            },
            render: { $0.databaseURL.redacted },
            explainRejection: { text in
                do {
                    _ = try DatabaseURL(parsing: text)
                    return "expects a database URL"
                } catch {
                    return "expects a database URL: \(error)"
                }
            }
        )
    }

    /// `--database-path`: sets `databaseURL` to `sqlite:PATH`; unset (nil) when that names a server.
    static func databasePath(_ property: String, _ key: String, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "PATH", help: help,
            allowed: "any non-empty text",
            apply: { configuration, text in
                guard !text.isEmpty else { return false }
                configuration.databasePath = text
                return true
            },
            render: { $0.databaseURL.sqlitePath }
        )
    }

    static func boolean(_ property: String, _ key: String, _ keyPath: Property<Bool>, help: String) -> Self {
        Self(
            property: property, key: key, valueName: "true|false", help: help,
            allowed: "true or false (also yes/no, on/off, 1/0)",
            apply: { configuration, text in
                switch text.lowercased() {
                case "true", "yes", "on", "1": configuration[keyPath: keyPath] = true
                case "false", "no", "off", "0": configuration[keyPath: keyPath] = false
                default: return false
                }
                return true
            },
            render: { String($0[keyPath: keyPath]) }
        )
    }
}

extension ServerConfiguration: CustomStringConvertible {
    /// Safe to log at startup: the secrets and a database URL's password are masked.
    public var description: String {
        Self.settings.map { "\($0.key)=\($0.render(self) ?? "(not set)")" }.joined(separator: " ")
    }
}

// MARK: - Env file syntax

extension ServerConfiguration {
    struct EnvFileEntry: Equatable {
        let line: Int
        let name: String
        let value: String
    }

    /// `KEY=VALUE` lines with `#` comments, blank lines, an optional `export ` prefix, and optional
    /// quotes: single quotes are literal, double quotes understand `\"`, `\\`, `\n` and `\t`.
    /// An unquoted value ends at ` #`, so a comment can follow it.
    static func parseEnvFile(_ contents: String, path: String) throws -> [EnvFileEntry] {
        var entries: [EnvFileEntry] = []
        var firstLine: [String: Int] = [:]
        let lines = contents.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, rawLine) in lines.enumerated() {
            let lineNumber = index + 1
            func failure(_ message: String) -> ConfigurationError {
                ConfigurationError(source: .envFile(path: path, line: lineNumber), setting: nil, message: "\(path) line \(lineNumber): \(message)")
            }

            var line = rawLine.trimmingCharacters(in: .whitespaces)[...]
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") {
                line = line.dropFirst("export ".count).drop(while: \.isWhitespace)
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw failure("expected KEY=VALUE, got '\(line)'")
            }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard let first = name.first, first == "_" || (first.isASCII && first.isLetter),
                  name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) })
            else {
                throw failure("'\(name)' is not a variable name; use letters, digits and underscores")
            }
            let value = try parseEnvValue(line[line.index(after: equals)...].drop(while: \.isWhitespace), failure: failure)

            if let earlier = firstLine[name] {
                throw failure("\(name) is already set on line \(earlier); keep one of them")
            }
            firstLine[name] = lineNumber
            entries.append(EnvFileEntry(line: lineNumber, name: name, value: value))
        }
        return entries
    }

    private static func parseEnvValue(
        _ text: Substring,
        failure: (String) -> ConfigurationError
    ) throws -> String {
        guard let quote = text.first, quote == "\"" || quote == "'" else {
            let commentStart = text.indices.first { text[$0] == "#" && $0 > text.startIndex && text[text.index(before: $0)].isWhitespace }
            return text[..<(commentStart ?? text.endIndex)].trimmingCharacters(in: .whitespaces)
        }
        var value = ""
        var index = text.index(after: text.startIndex)
        var closed = false
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if character == quote {
                closed = true
                break
            }
            if quote == "\"", character == "\\", index < text.endIndex {
                let escaped = text[index]
                index = text.index(after: index)
                switch escaped {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "\"", "\\": value.append(escaped)
                default: value += "\\\(escaped)"  // Unknown escapes stay as written, e.g. Windows paths.
                }
                continue
            }
            value.append(character)
        }
        guard closed else {
            throw failure("the value opens a \(quote) quote but never closes it on this line")
        }
        let rest = text[index...].trimmingCharacters(in: .whitespaces)
        guard rest.isEmpty || rest.hasPrefix("#") else {
            throw failure("unexpected '\(rest)' after the closing \(quote) quote")
        }
        return value
    }
}
