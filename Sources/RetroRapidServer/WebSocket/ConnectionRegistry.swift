import RetroRapidDomain
import RetroRapidLWS
import RetroRapidSupport

/// Every open game connection on `/ws`, found by id, counted by client address (the per-IP
/// limit) and indexed by signed-in player (settings pushes, device revocations), and the one
/// way anything on the game side sends to a connection.
///
/// It knows nothing of games: a connection's game is the `MatchHost`'s business. When a
/// client stops reading (its queue is full) the registry says so through `onQueueFull`, and
/// the owner of the watchdog decides what that means.
///
/// Threading rule: owned by the libwebsockets service thread; every method runs there (the
/// protocol callback, the timers, mailbox jobs).
final class ConnectionRegistry {
    let limits: WebSocketLimits
    let metrics: WebSocketMetrics
    /// Where messages written straight away are encoded, one for every connection.
    let sendBuffer = WebSocketSendBuffer()
    /// A send found the connection's queue full: the client has stopped reading.
    var onQueueFull: (WebSocketConnection) -> Void = { _ in }

    private var connections: [Int: WebSocketConnection] = [:]
    /// Open game connections per client address's limit key (the per-IP limit): an IPv6
    /// client counts as its /64 (`IPAddress.limitKey`), or it could open the maximum from each
    /// of its 2^64 addresses.
    private var countByAddress: [String: Int] = [:]
    /// Signed-in connections of each player, in the order they signed in: the first here, any
    /// later ones (a player on several devices at once, rare) in `laterIDsByPlayer`. Not one
    /// array per player: that would be an allocation (~48 bytes) for every connection.
    private var firstIDByPlayer: [Int64: Int] = [:]
    private var laterIDsByPlayer: [Int64: [Int]] = [:]
    private var lastID = 0

    /// In a cluster, the other nodes' game URLs, put on refusals that name a node.
    let nodeDirectory: NodeDirectory?

    init(limits: WebSocketLimits, metrics: WebSocketMetrics, nodeDirectory: NodeDirectory? = nil) {
        self.limits = limits
        self.metrics = metrics
        self.nodeDirectory = nodeDirectory
    }

    // MARK: - Membership

    /// The id for the next connection (positive, never reused while the server runs).
    func nextID() -> Int {
        lastID += 1
        return lastID
    }

    subscript(id: Int) -> WebSocketConnection? { connections[id] }

    var isEmpty: Bool { connections.isEmpty }

    /// Every open connection, in no particular order.
    var all: Dictionary<Int, WebSocketConnection>.Values { connections.values }

    /// The refusal of one more connection from `clientAddress`, if it has as many as allowed.
    func refusal(clientAddress: String) -> ProtocolError? {
        guard countByAddress[IPAddress.limitKey(clientAddress), default: 0] >= limits.maxConnectionsPerIP else { return nil }
        return ProtocolError(.tooManyConnections,
            "Your address has \(limits.maxConnectionsPerIP) game connections open, the most allowed; close one first.")
    }

    func add(_ connection: WebSocketConnection) {
        connections[connection.id] = connection
        countByAddress[IPAddress.limitKey(connection.clientAddress), default: 0] += 1
        metrics.connections.set(Double(connections.count))
    }

    /// Forgets a connection libwebsockets has closed, and its place in every index.
    func remove(_ connection: WebSocketConnection) {
        connections[connection.id] = nil
        let key = IPAddress.limitKey(connection.clientAddress)
        if let count = countByAddress[key] {
            countByAddress[key] = count > 1 ? count - 1 : nil
        }
        if let identity = connection.identity { forget(connection.id, of: identity.playerID) }
        metrics.connections.set(Double(connections.count))
    }

    /// The connection's `hello` was accepted: it now counts as one of the player's.
    func signedIn(_ connection: WebSocketConnection, as identity: WebSocketConnection.Identity) {
        connection.state = .ready(identity)
        if firstIDByPlayer[identity.playerID] == nil {
            firstIDByPlayer[identity.playerID] = connection.id
        } else {
            laterIDsByPlayer[identity.playerID, default: []].append(connection.id)
        }
    }

    /// The player's signed-in connections, in the order they signed in.
    func connections(of playerID: Int64) -> [WebSocketConnection] {
        guard let first = firstIDByPlayer[playerID] else { return [] }
        return ([first] + (laterIDsByPlayer[playerID] ?? [])).compactMap { connections[$0] }
    }

    /// Takes `id` out of the player's connections; the next in sign-in order becomes the first.
    private func forget(_ id: Int, of playerID: Int64) {
        if firstIDByPlayer[playerID] == id {
            guard var later = laterIDsByPlayer[playerID] else {
                firstIDByPlayer[playerID] = nil
                return
            }
            firstIDByPlayer[playerID] = later.removeFirst()
            laterIDsByPlayer[playerID] = later.isEmpty ? nil : later
        } else if var later = laterIDsByPlayer[playerID] {
            later.removeAll { $0 == id }
            laterIDsByPlayer[playerID] = later.isEmpty ? nil : later
        }
    }

    // MARK: - Sending

    /// Sends `message` to `connection` (at once, or queued behind what waits); a connection
    /// whose queue is full goes to `onQueueFull`.
    func send(_ message: ServerMessage, to connection: WebSocketConnection) {
        count(connection.send(message, using: sendBuffer), on: connection)
    }

    /// Sends `message` to every connection of `receivers`, encoded once: the same bytes are
    /// written or queued to each (`WebSocketSharedMessage`). One receiver takes the path of
    /// `send(_:to:)`, which encodes into the shared buffer and allocates nothing.
    func send(_ message: ServerMessage, to receivers: [WebSocketConnection]) {
        if receivers.count <= 1 {
            if let connection = receivers.first { send(message, to: connection) }
            return
        }
        let shared = WebSocketSharedMessage(message, headroom: LWSConnection.headroom)
        for connection in receivers { count(connection.send(shared), on: connection) }
    }

    private func count(_ outcome: WebSocketConnection.SendOutcome, on connection: WebSocketConnection) {
        switch outcome {
        case .written: metrics.sent += 1
        case .queued: metrics.sent += 1; metrics.queued += 1
        case .queueFull: onQueueFull(connection)
        case .ignored: break
        }
    }

    /// Sends the error and, when it ends the connection, closes after it.
    func refuse(_ connection: WebSocketConnection, _ error: ProtocolError, quota: QuotaStatus? = nil) {
        metrics.errors.increment(error.code.rawValue)
        var error = error
        if let node = error.node, error.gameURL == nil { error.gameURL = nodeDirectory?.gameURL(of: node) }
        send(.error(error, quota: quota), to: connection)
        if let close = error.close { connection.close(close) }
    }
}
