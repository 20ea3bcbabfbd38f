/// One seat of a match: what drives it (the player's `GameSession`, or a stored game
/// re-simulated), the connection its player plays on while they are there, and the
/// connections watching it. A seat's messages go to its player and its watchers, the same
/// bytes to each (`ConnectionRegistry.send(_:to:)` with several receivers).
///
/// Threading rule: owned by its `Match` on the libwebsockets service thread.
final class MatchSeat {
    /// Where a seat is: what a connection that plays or watches one holds.
    struct Address: Equatable, Hashable {
        /// The match's id (`Match.id`).
        let match: Int
        /// The seat's place in `Match.seats`.
        let seat: Int
    }

    let address: Address
    let driver: any MatchSeatDriver
    /// The player's game when a player drives the seat; nil for a seat nobody plays.
    let session: GameSession?
    /// The connection the seat's player plays on, while they are connected.
    private(set) var player: WebSocketConnection?
    /// Connections watching the seat, in the order they came (`WatchHost`).
    private(set) var watchers: [WebSocketConnection] = []
    /// The name its watchers are told: its player's, or the stored game's player's.
    var playerName: String?

    /// A seat `driver` drives: a player's `GameSession` makes a seat that player plays.
    init(address: Address, driver: any MatchSeatDriver) {
        self.address = address
        self.driver = driver
        session = driver as? GameSession
    }

    var playerID: Int64? { session?.playerID }

    /// Every connection that gets the seat's messages: its player's first, then its watchers.
    var receivers: [WebSocketConnection] {
        guard let player else { return watchers }
        return watchers.isEmpty ? [player] : [player] + watchers
    }

    /// `connection` now plays the seat (in place of any before it).
    func attachPlayer(_ connection: WebSocketConnection) {
        player = connection
    }

    /// The player's connection no longer gets the seat's messages.
    func detachPlayer(_ connection: WebSocketConnection) {
        if player === connection { player = nil }
    }

    func addWatcher(_ connection: WebSocketConnection) {
        watchers.append(connection)
    }

    func removeWatcher(_ connection: WebSocketConnection) {
        watchers.removeAll { $0 === connection }
    }

    /// Forgets every watcher (the seat's game ended), returning them.
    func removeAllWatchers() -> [WebSocketConnection] {
        defer { watchers = [] }
        return watchers
    }

    /// Sends `messages` to the seat's receivers, in order. One receiver (a solo game nobody
    /// watches) costs what it always did: each message encoded straight into the shared
    /// buffer. Several get each message encoded once, the same bytes queued to each.
    func send(_ messages: [ServerMessage], through connections: ConnectionRegistry) {
        if watchers.isEmpty {
            guard let player else { return }
            for message in messages { connections.send(message, to: player) }
            return
        }
        // A copy: a send that drops a slow reader detaches it from this seat meanwhile.
        let receivers = self.receivers
        for message in messages { connections.send(message, to: receivers) }
    }
}
