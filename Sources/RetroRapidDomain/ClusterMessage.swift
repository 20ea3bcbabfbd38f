/// What one node tells the others over the cluster bus (LISTEN/NOTIFY on the shared
/// PostgreSQL database): small facts, never state. A receiver reads the state itself from the
/// database, so a message lost while a node was down costs a live update, never data.
public enum ClusterMessage: Sendable, Equatable {
    /// The player's settings were written (now at `version`) from `deviceID`: push them to the
    /// player's other devices connected here.
    case settingsChanged(playerID: Int64, deviceID: Int64, version: Int)
    /// The player revoked `deviceID`: close its connections here.
    case deviceRevoked(playerID: Int64, deviceID: Int64)
    /// A connection on the sending node wants the player's game `gameID`, which the receiver
    /// `owner` holds: the owner stores its log, lets go of it and answers ``gameReleased``.
    case releaseGame(gameID: String, playerID: Int64, owner: String)
    /// `gameID` is no longer held by the sending node; its last checkpoint is its whole log.
    case gameReleased(gameID: String, playerID: Int64)
    /// The sending node keeps `gameID` and will not let go of it (a race's game, whose match
    /// runs there): the asker tells the player to connect to that node (`game_elsewhere`).
    case gameStays(gameID: String, playerID: Int64)

    /// The message's part of a payload: `kind|field|field…`, well under NOTIFY's 8,000-byte limit.
    public var encoded: String {
        switch self {
        case .settingsChanged(let player, let device, let version): return "settings|\(player)|\(device)|\(version)"
        case .deviceRevoked(let player, let device): return "revoked|\(player)|\(device)"
        case .releaseGame(let game, let player, let owner): return "release|\(game)|\(player)|\(owner)"
        case .gameReleased(let game, let player): return "released|\(game)|\(player)"
        case .gameStays(let game, let player): return "stays|\(game)|\(player)"
        }
    }

    /// Parses ``encoded``; nil for anything else (a newer node's message: ignored, not fatal).
    /// Numbers are parsed failably and bounded (ids from 1, versions from 0): a payload can
    /// never trap, and a message with an impossible id reaches no handler.
    public init?(encoded: String) {
        let fields = encoded.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("settings", 4):
            guard let player = Self.id(fields[1]), let device = Self.id(fields[2]),
                  let version = Int(fields[3]), version >= 0 else { return nil }
            self = .settingsChanged(playerID: player, deviceID: device, version: version)
        case ("revoked", 3):
            guard let player = Self.id(fields[1]), let device = Self.id(fields[2]) else { return nil }
            self = .deviceRevoked(playerID: player, deviceID: device)
        case ("release", 4):
            guard !fields[1].isEmpty, let player = Self.id(fields[2]), !fields[3].isEmpty else { return nil }
            self = .releaseGame(gameID: fields[1], playerID: player, owner: fields[3])
        case ("released", 3):
            guard !fields[1].isEmpty, let player = Self.id(fields[2]) else { return nil }
            self = .gameReleased(gameID: fields[1], playerID: player)
        case ("stays", 3):
            guard !fields[1].isEmpty, let player = Self.id(fields[2]) else { return nil }
            self = .gameStays(gameID: fields[1], playerID: player)
        default:
            return nil
        }
    }

    /// A row id: a whole number from 1 (the tables' ids start there), nil otherwise.
    private static func id(_ text: String) -> Int64? {
        guard let value = Int64(text), value > 0 else { return nil }
        return value
    }
}

/// A message and the node that sent it.
public struct ClusterEnvelope: Sendable, Equatable {
    public let sender: String
    public let message: ClusterMessage

    public init(sender: String, message: ClusterMessage) {
        self.sender = sender
        self.message = message
    }

    /// `sender|kind|field…`. A node id has no `|` (`ClusterNodeName`), so the first `|` ends
    /// it. The bus never sends this bare: `ClusterSigner` puts a stamp after the sender and a
    /// signature in front.
    public var encoded: String { "\(sender)|\(message.encoded)" }

    /// Parses ``encoded``; nil for a payload without a sender or with a message this build does
    /// not know (ignored by the receiver, never fatal).
    public init?(encoded: String) {
        guard let bar = encoded.firstIndex(of: "|"), bar != encoded.startIndex,
              let message = ClusterMessage(encoded: String(encoded[encoded.index(after: bar)...])) else { return nil }
        self.init(sender: String(encoded[..<bar]), message: message)
    }
}

extension ClusterMessage {
    /// A short name per case, for metric labels and logs (`settings`, `revoked`, …): the
    /// payload's first field.
    public var kind: String {
        switch self {
        case .settingsChanged: "settings"
        case .deviceRevoked: "revoked"
        case .releaseGame: "release"
        case .gameReleased: "released"
        case .gameStays: "stays"
        }
    }

    /// Every kind, so a metric can show each one from the start.
    public static let kinds = ["settings", "revoked", "release", "released", "stays"]
}
