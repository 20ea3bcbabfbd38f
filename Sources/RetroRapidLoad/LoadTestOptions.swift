/// What one load test does: whom it connects to, how many players, how they play, for how long.
public struct LoadTestOptions: Sendable, Equatable {
    /// A loopback address (127.0.0.0/8 or ::1): the load generator refuses any other target.
    public var host = "127.0.0.1"
    public var port = 8080
    /// Concurrent player connections to open and hold.
    public var connections = 100
    /// Device tokens to sign in with, one per connection (from `retrorapid seed-players`).
    public var tokens: [String] = []
    /// `cruise`, `fast` or `rapid`.
    public var level = "fast"
    /// Connected players only: sign in and stay, never start a game (memory per idle player).
    public var idle = false
    /// New connections per second during the ramp.
    public var rampPerSecond = 1000
    /// Seconds between the last connection and the start of the measured window.
    public var settleSeconds = 5
    /// Length of the measured window, seconds.
    public var holdSeconds = 20
    /// Local addresses to connect from, round robin (127.0.0.x), so that no address needs more
    /// than ~10,000 ephemeral ports (docs/LIBWEBSOCKETS-4.1.6.md). Empty: let the kernel choose.
    public var sourceAddresses: [String] = []
    /// Move each connection to the game URL its `welcome` names (`gameUrl`), as the browser
    /// does: a node reached straight rather than through a front (plain `ws://` on loopback).
    public var followGameURL = false
    /// Open a new connection 0.5 s after one drops (1 s after one fails to open) and take the
    /// game back, as the browser does: what a node's failover is measured with.
    public var reconnect = false
    /// The server's pid, to sample its CPU and memory (Linux /proc); nil skips that.
    public var serverPID: Int32? = nil
    /// A fixed, bounded workload (scripts/bench-cost.sh counts its cost): every player plays
    /// one game, quits it after this many steps (0: as soon as it starts) and starts no other;
    /// the run ends when every game has ended and the whole run is measured (no settle, no
    /// window). `holdSeconds` is then the most the games may take after the ramp. nil: play
    /// on, game after game, through the settle and the window.
    public var steps: Int? = nil
    public var behaviour = LoadBot.Behaviour()
    public var seed: UInt64 = 1
    /// `solo`: every player plays games of its own. `race`: the players meet in rooms of
    /// `roomSeats` (the first of each room opens it, the rest join by its code), get ready,
    /// and race; after a race they get ready again for the rematch (docs/PROTOCOL.md, rooms).
    public var mode = Mode.solo
    /// Racers per room in a race test, 2 to 8; `connections` is a whole number of rooms.
    public var roomSeats = 8
    /// Extra signed-in connections that watch the players' games, spread evenly over them
    /// (a room's seats in a race test, each player's current game in a solo one).
    public var watchers = 0

    public enum Mode: String, Sendable, Equatable, CaseIterable {
        case solo, race
    }

    /// Rooms in a race test (none in a solo one).
    public var rooms: Int { mode == .race ? connections / roomSeats : 0 }

    /// Limits that keep a mistake from turning into a flood: sockets fit under this machine's
    /// hard open-file limit (20,000, one process) and a run ends within the hour.
    public static let maximumConnections = 19_900
    public static let maximumSeconds = 3600

    public init() {}

    /// Refuses options that would aim anywhere but loopback or run without bounds.
    public func validate() throws(LoadTestError) {
        guard Self.isLoopback(host) else {
            throw LoadTestError("--host must be a loopback address (127.x.x.x or ::1), not '\(host)': the load generator only targets this machine")
        }
        for address in sourceAddresses where !Self.isLoopback(address) {
            throw LoadTestError("--source-addresses must be loopback addresses, not '\(address)'")
        }
        guard (1...Self.maximumConnections).contains(connections) else {
            throw LoadTestError("--connections must be between 1 and \(Self.maximumConnections) (one process may hold ~19,990 sockets here)")
        }
        guard (0...Self.maximumConnections).contains(watchers), connections + watchers <= Self.maximumConnections else {
            throw LoadTestError("--connections plus --watchers must be at most \(Self.maximumConnections) (one process may hold ~19,990 sockets here)")
        }
        guard tokens.count >= connections + watchers else {
            let wanted = watchers > 0 ? "\(connections) connections and \(watchers) watchers" : "\(connections) connections"
            throw LoadTestError("\(wanted) need \(connections + watchers) device tokens; the tokens file has \(tokens.count) (make more with retrorapid seed-players)")
        }
        if mode == .race {
            guard (2...8).contains(roomSeats) else {
                throw LoadTestError("--room-seats must be between 2 and 8 (a room's seats), not \(roomSeats)")
            }
            guard connections % roomSeats == 0 else {
                throw LoadTestError("--connections \(connections) is not a whole number of rooms of \(roomSeats) (--room-seats): every room must fill to start")
            }
        }
        if idle, mode == .race || watchers > 0 {
            throw LoadTestError("--idle players never start a game: it does not go with --mode race or --watchers")
        }
        guard ["cruise", "fast", "rapid"].contains(level) else {
            throw LoadTestError("--level must be cruise, fast or rapid, not '\(level)'")
        }
        guard (1...100_000).contains(rampPerSecond) else { throw LoadTestError("--ramp-per-second must be between 1 and 100000") }
        guard (0...Self.maximumSeconds).contains(settleSeconds), (1...Self.maximumSeconds).contains(holdSeconds) else {
            throw LoadTestError("--settle-seconds (0…3600) and --hold-seconds (1…3600) bound the run")
        }
        if let steps {
            guard (0...100_000).contains(steps) else { throw LoadTestError("--steps must be between 0 and 100000") }
            guard !idle else { throw LoadTestError("--steps plays one game per player; --idle plays none: choose one") }
        }
        guard (1...65535).contains(port) else { throw LoadTestError("--port must be between 1 and 65535") }
    }

    static func isLoopback(_ address: String) -> Bool {
        if address == "::1" || address == "localhost" { return true }
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in Int(part).map { (0...255).contains($0) } ?? false }
    }
}

/// A load test that cannot run as asked; the message says why.
public struct LoadTestError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ message: String) { description = message }
}
