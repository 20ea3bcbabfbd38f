import Foundation
import RetroRapidRules

/// One game being played on one seed: its sessions, its seed, when it starts and who hears
/// it. A solo game is a match of one: one `GameSession`, started the moment it is created, its
/// messages going to its player's connection while they are there.
///
/// Why a type of its own and not just the session: a race room (several players on one seed,
/// one start deadline, spectators) is a match of several. It would hold one session per
/// player, answer `wakeAt` with its start deadline until it starts, and add watchers to
/// `receivers`; the `MatchHost` already schedules, steps and fans out by match, not by
/// session.
///
/// Threading rule: owned by the `MatchHost` on the libwebsockets service thread; never
/// touched anywhere else.
final class Match {
    /// The step timer's key (positive, unique while the server runs). A solo match's session
    /// has the same id, which is what `WebSocketConnection.sessionID` holds.
    let id: Int
    /// The road every session of the match drives (its `running_games` row holds it).
    let seed: UInt64
    /// The one player's game. A race room would hold one per player.
    let session: GameSession
    /// Connections that get the match's messages: the player's while they are connected, none
    /// while they are away. Spectators would be added here.
    private(set) var receivers: [WebSocketConnection] = []

    init(id: Int, gameID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, practice: Bool,
         graceLimitMilliseconds: Int, startedAt: Date, now: Int64) {
        self.id = id
        self.seed = seed
        session = GameSession(
            id: id, gameID: gameID, playerID: playerID, level: level, seed: seed, practice: practice,
            graceLimitMilliseconds: graceLimitMilliseconds, startedAt: startedAt, now: now)
    }

    /// A match around a session built elsewhere (a game rebuilt from another node's checkpoint).
    init(id: Int, seed: UInt64, session: GameSession) {
        self.id = id
        self.seed = seed
        self.session = session
    }

    /// When the match next needs a tick: a solo match starts at once, so its session's.
    var wakeAt: Int64? { session.wakeAt }

    /// The connection the player plays on, if they are connected.
    var playerConnection: WebSocketConnection? { receivers.first }

    /// `connection` now plays the match: it gets its messages (in place of any before it).
    func attach(_ connection: WebSocketConnection) {
        receivers = [connection]
    }

    /// The player's connection no longer gets the match's messages.
    func detach(_ connection: WebSocketConnection) {
        receivers.removeAll { $0 === connection }
    }

    /// Sends every message to every receiver, in order: the match's one fan-out.
    func fanOut(_ messages: [ServerMessage], through connections: ConnectionRegistry) {
        for connection in receivers {
            for message in messages { connections.send(message, to: connection) }
        }
    }

    /// A game's public id: 16 random hex digits, unguessable enough to name it in messages and logs.
    static func newGameID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// A game's seed: any of the 2^64 roads. Chosen before it starts: its `running_games` row,
    /// written with the play it consumes, holds it.
    static func newSeed() -> UInt64 {
        UInt64.random(in: .min ... .max)
    }
}
