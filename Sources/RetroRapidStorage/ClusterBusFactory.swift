import RetroRapidDomain
import RetroRapidPostgreSQL
import RetroRapidSupport

/// Opens the bus between the nodes of a cluster, beside `StorageFactory`: the nodes sharing one
/// PostgreSQL database talk over its LISTEN/NOTIFY (`PostgresClusterBus`). SQLite has no bus:
/// a SQLite file serves one node, which has nobody to tell.
public enum ClusterBusFactory {
    /// A bus for node `nodeID` on the PostgreSQL database at `postgresURL`, signing and checking
    /// every message with `secrets` (`--cluster-secret`, and `--cluster-secret-previous` during
    /// a rotation), not yet started (`ClusterBus.start` connects). What happens to its
    /// connection (lost, reconnecting, back) and every notification it drops are logged
    /// through `logger`.
    ///
    /// Throws when `nodeID` is not a node name (`ClusterNodeName`: 1 to 64 letters, digits,
    /// `.`, `_`, `-`) or the URL is not a `postgres://` or `postgresql://` URL.
    public static func open(postgresURL: String, nodeID: String, secrets: ClusterSecrets,
                            logger: Logger = Logger(label: "retrorapid.cluster")) throws -> any ClusterBus {
        guard !nodeID.isEmpty, nodeID.utf8.count <= 64, nodeID.utf8.allSatisfy(ClusterNodeName.isAllowed) else {
            throw ClusterBusFactoryError.invalidNodeID(nodeID)
        }
        guard postgresURL.hasPrefix("postgres://") || postgresURL.hasPrefix("postgresql://") else {
            throw ClusterBusFactoryError.notPostgres
        }
        var logger = logger
        logger.metadata["cluster.node"] = nodeID
        return try PostgresClusterBus(conninfo: postgresURL, nodeID: nodeID, secrets: secrets, onEvent: { [logger] event in
            log(event, to: logger)
        })
    }

    /// One line per event, on the bus thread (the logger only writes).
    static func log(_ event: PostgresClusterBus.Event, to logger: Logger) {
        switch event {
        case .connectionLost(let reason, let dropped):
            logger.warning("cluster bus lost its database connection; reconnecting (live updates between nodes wait until then)",
                           metadata: ["error": reason, "cluster.dropped_messages": String(dropped)])
        case .reconnectFailed(let reason, let retry):
            logger.warning("cluster bus could not reconnect",
                           metadata: ["error": reason, "cluster.retry_in_s": String(format: "%.1f", retry)])
        case .reconnected(let attempts):
            logger.notice("cluster bus reconnected", metadata: ["cluster.attempts": String(attempts)])
        case .ignoredPayload(let payload):
            logger.info("cluster bus ignored a signed notification that is not a message this build knows",
                        metadata: ["cluster.payload": payload])
        case .rejected(let reason, let payload, let suppressed):
            // The payload is the stranger's text: metadata, which the logger escapes.
            logger.warning("cluster bus dropped a notification: \(reason.explanation)",
                           metadata: ["cluster.rejected": reason.rawValue, "cluster.payload": payload,
                                      "cluster.rejected_unlogged": String(suppressed)])
        case .sendFailed(let reason):
            logger.warning("cluster bus could not send a message; it is dropped", metadata: ["error": reason])
        }
    }
}

/// Why ``ClusterBusFactory`` opened no bus.
public enum ClusterBusFactoryError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidNodeID(String)
    /// Only a PostgreSQL database has a bus.
    case notPostgres

    public var description: String {
        switch self {
        case .invalidNodeID(let name):
            return "'\(name.prefix(80))' is not a node id: 1 to 64 letters, digits, '.', '_' or '-'"
        case .notPostgres:
            return "the cluster bus needs a PostgreSQL database (a postgres:// URL); a SQLite file serves one node and has no bus"
        }
    }
}
