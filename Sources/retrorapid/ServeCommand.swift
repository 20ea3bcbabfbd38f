import Dispatch
import Foundation
import RetroRapidDomain
import RetroRapidServer
import RetroRapidStorage
import RetroRapidSupport

/// `retrorapid serve`: migrates the database, then runs the server until SIGINT or
/// SIGTERM and stops it gracefully. Settings: `retrorapid help serve`.
enum ServeCommand: Command {
    static let name = "serve"
    static let summary = "run the server: the browser client, the API, /healthz and /metrics"
    static var usage: String {
        """
        usage: retrorapid serve [--SETTING VALUE ...]

        Creates and migrates the database, serves the browser client and the API until
        SIGINT (Ctrl-C) or SIGTERM, then closes every connection and exits 0.

        \(ServerConfiguration.helpText)
        """
    }

    static func run(arguments: [String]) throws -> Int32 {
        let located: LocatedConfiguration
        do {
            located = try ServerConfiguration.loadFromProcess(arguments: arguments)
        } catch let error as ConfigurationError {
            throw UsageError(error.description)
        }
        let configuration = located.configuration
        let logger = Logger(label: "retrorapid.serve", logLevel: configuration.logLevel, format: configuration.logFormat)
        // Before anything is opened: a server without its client or its schema must not start.
        try located.require(InstalledFile.allCases.filter(\.isRequired))
        // Nor a cluster node that could not tell its messages from a forger's.
        var clusterSecrets: ClusterSecrets?
        if case .postgres = configuration.databaseURL {
            guard let secret = configuration.clusterSecret else { throw UsageError(ServerConfiguration.missingClusterSecretMessage) }
            do {
                clusterSecrets = try ClusterSecrets(current: secret, previous: configuration.clusterSecretPrevious)
            } catch {
                throw UsageError("\(error)")
            }
        }
        // Which copy of each file this run uses, so a surprise (an old checkout's Web/ picked
        // up from the working directory) shows in the first lines of the log.
        for location in located.files {
            if let found = location.found {
                logger.info("using \(location.file.title) \(found)",
                            metadata: ["file": location.file.settingKey, "file.path": location.path])
            } else {
                logger.info("optional: \(location.missingMessage)", metadata: ["file": location.file.settingKey])
            }
        }

        // Before the server starts, so a signal that comes early is not lost (or fatal):
        // the default actions are turned off and the signals arrive as dispatch events instead.
        let stopRequested = DispatchSemaphore(value: 0)
        let signalSources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stopRequested.signal() }
            source.resume()
            return source
        }

        // Opens and migrates the database (refusing to start on an edited or unknown
        // migration) before any connection is accepted.
        var options = GameServer.Options(configuration: configuration)
        // Nodes on one PostgreSQL database tell each other what changed over its LISTEN/NOTIFY
        // (docs/OPERATIONS.md, "Scale out"); a SQLite file serves one node and has no bus.
        if case .postgres(let database) = configuration.databaseURL, let clusterSecrets {
            options.clusterBus = try ClusterBusFactory.open(postgresURL: database.conninfo, nodeID: configuration.resolvedNodeID,
                                                            secrets: clusterSecrets, logger: logger)
        }
        let server = try GameServer(options: options, logger: logger)
        try server.start()
        if let consolePort = server.consolePort {
            let consoleHost = configuration.consoleHost.contains(":") ? "[\(configuration.consoleHost)]" : configuration.consoleHost
            logger.notice("Operator console on http://\(consoleHost):\(consolePort)",
                          metadata: ["console.root": URL(fileURLWithPath: configuration.consoleRoot).standardizedFileURL.path])
        }
        // Last of the start-up lines, so a script that waits for it has read all the others
        // (/healthz already answers before it is written: the listeners are up first).
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        let scheme = configuration.tlsCertificatePath == nil ? "http" : "https"
        let webRoot = URL(fileURLWithPath: configuration.webRoot).standardizedFileURL.path
        // A SQLite file by its path, as always; a server by its URL, redacted. The node id in
        // the first lines too: in a cluster, which node this log is.
        let database = configuration.databaseURL.sqlitePath.map { ["db.path": $0] }
            ?? ["db.url": configuration.databaseURL.redacted]
        logger.notice("RetroRapid serving \(scheme)://\(host):\(server.boundPort ?? configuration.port)",
                      metadata: database.merging(["web.root": webRoot, "cluster.node": configuration.resolvedNodeID,
                                                  "cluster.bus": server.cluster.bus == nil ? "none" : "listening"]) { $1 })

        stopRequested.wait()
        logger.notice("RetroRapid stopping: refusing new connections, ending games, saving")
        server.stop()
        signalSources.forEach { $0.cancel() }
        logger.notice("RetroRapid stopped")
        return 0
    }
}
