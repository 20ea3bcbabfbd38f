import Foundation
import RetroRapidDomain
import RetroRapidRules

/// One or more seats on one seed, with one start time and one fan-out. A solo game is a match
/// of one seat (the player's `GameSession`) started the moment it is created; a race is a
/// match of several seats started at a deadline; a ghost race is the player's seat beside a
/// re-simulated stored game; a replay is one re-simulated seat nobody plays, only watched.
///
/// What goes where: a seat's messages go to that seat's player and its watchers
/// (`MatchSeat.send`); match-wide messages (`sendToAll`: standings, a countdown, a ghost's
/// position) go to every receiver of every seat. Each message is encoded once for all its
/// receivers. The `MatchHost` schedules the match at the earliest `wakeAt` of its seats and
/// ticks the seats that are due; it knows nothing of what kind of match it runs.
///
/// Threading rule: owned by the `MatchHost` on the libwebsockets service thread; never
/// touched anywhere else.
final class Match {
    enum Kind: String {
        case solo, race, ghost, replay
    }

    /// The step timer's key (positive, unique while the server runs; `MatchHost.nextID`).
    let id: Int
    /// The road every seat of the match drives (a ranked game's `running_games` row holds it).
    let seed: UInt64
    /// When the match starts (monotonic µs): its creation for a solo game, the deadline every
    /// seat starts from for a race. The seats' own `wakeAt` already say when they step; this
    /// is for whoever tells the receivers how long is left.
    let startsAt: Int64
    let seats: [MatchSeat]

    /// The race room the match was started from, if any (set by the rooms' owner), for its
    /// watchers.
    var roomCode: String?

    /// Called by the `MatchHost` when a seat's game ended (after its record was handed to the
    /// `GameRecorder`, before `onEnded` if it was the last), with why it ended.
    var onSeatEnded: ((MatchSeat, GameEndReason) -> Void)? {
        get { hooks?.onSeatEnded }
        set { madeHooks.onSeatEnded = newValue }
    }
    /// Called by the `MatchHost` once every seat is over and the match is gone from it.
    var onEnded: (() -> Void)? {
        get { hooks?.onEnded }
        set { madeHooks.onEnded = newValue }
    }
    /// Called by the `MatchHost` when a player seat's game paused (its player asked, or
    /// dropped: true) or resumed (false), so a seat that keeps its pace (a ghost) can too.
    var onPlayerPaused: ((MatchSeat, _ paused: Bool) -> Void)? {
        get { hooks?.onPlayerPaused }
        set { madeHooks.onPlayerPaused = newValue }
    }

    /// The three callbacks above, made when the first is set: only races and ghost races
    /// set any, so a solo game's match (one per game) holds one nil pointer instead of three
    /// optional closures (48 bytes, paid by every running game).
    private var hooks: Hooks?
    /// The last stored field: a one-byte one anywhere before would be padded to eight.
    let kind: Kind

    private final class Hooks {
        var onSeatEnded: ((MatchSeat, GameEndReason) -> Void)?
        var onEnded: (() -> Void)?
        var onPlayerPaused: ((MatchSeat, _ paused: Bool) -> Void)?
    }

    private var madeHooks: Hooks {
        if let hooks { return hooks }
        let made = Hooks()
        hooks = made
        return made
    }

    /// A match of one seat per driver, in order (a player's `GameSession` makes a seat that
    /// player plays).
    init(id: Int, kind: Kind, seed: UInt64, startsAt: Int64, drivers: [any MatchSeatDriver]) {
        precondition(!drivers.isEmpty, "a match has at least one seat")
        self.id = id
        self.kind = kind
        self.seed = seed
        self.startsAt = startsAt
        seats = drivers.enumerated().map { index, driver in
            MatchSeat(address: MatchSeat.Address(match: id, seat: index), driver: driver)
        }
    }

    /// A solo match: the player's new game, running from `now`.
    convenience init(id: Int, gameID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, practice: Bool,
                     graceLimitMilliseconds: Int, startedAt: Date, now: Int64) {
        let session = GameSession(
            id: id, gameID: gameID, playerID: playerID, level: level, seed: seed, practice: practice,
            graceLimitMilliseconds: graceLimitMilliseconds, startedAt: startedAt, now: now)
        self.init(id: id, seed: seed, session: session, startsAt: now)
    }

    /// A solo match around a session built elsewhere (a game rebuilt from another node's
    /// checkpoint).
    convenience init(id: Int, seed: UInt64, session: GameSession, startsAt: Int64) {
        self.init(id: id, kind: .solo, seed: seed, startsAt: startsAt, drivers: [session])
    }

    /// When the match next needs a tick: the earliest of its seats'.
    var wakeAt: Int64? {
        if seats.count == 1 { return seats[0].driver.wakeAt }
        return seats.lazy.compactMap(\.driver.wakeAt).min()
    }

    /// Every seat's game is over.
    var isOver: Bool { seats.allSatisfy(\.driver.isOver) }

    /// The seat at `address`, if it is one of this match's.
    func seat(at address: MatchSeat.Address) -> MatchSeat? {
        guard address.match == id, seats.indices.contains(address.seat) else { return nil }
        return seats[address.seat]
    }

    /// The one seat a player's game drives in a match that can move between nodes whole:
    /// a solo match (any other has seats that stay where the match runs).
    var movableSeat: MatchSeat? {
        kind == .solo && seats.count == 1 ? seats[0] : nil
    }

    /// Every connection that gets match-wide messages: each seat's player and watchers.
    var receivers: [WebSocketConnection] { seats.flatMap(\.receivers) }

    /// Sends match-wide messages to every receiver, each encoded once.
    func sendToAll(_ messages: [ServerMessage], through connections: ConnectionRegistry) {
        let receivers = self.receivers
        for message in messages { connections.send(message, to: receivers) }
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
