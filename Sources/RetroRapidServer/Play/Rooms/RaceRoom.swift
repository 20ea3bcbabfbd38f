import RetroRapidRules

/// A race room's lobby: who sits where, who is ready, who hosts, and what the room is doing.
/// It outlives its races (a rematch is the same room, `race` one more); the races themselves
/// are matches the `RoomHost` asks the `MatchHost` for. Pure: no clock, no connections, no
/// storage; every rule of docs/PROTOCOL.md "Race rooms" about joining, leaving, readiness and
/// starting is checked here, and a refusal changes nothing.
///
/// Threading rule: owned by the `RoomRegistry` on the libwebsockets service thread.
final class RaceRoom {
    enum State: String, Sendable {
        /// Waiting for racers to be ready and the host to start.
        case lobby
        /// Plays are consumed and the racers' games wait for one start deadline.
        case countdown
        case racing
        /// Every racer's game has ended; the race's results are being saved.
        case finished
    }

    struct Racer: Equatable, Sendable {
        let seat: Int
        let playerID: Int64
        let name: String
        var ready: Bool
        /// False while the racer's connection is gone (the room keeps their seat).
        var connected: Bool
    }

    static let seatRange = 2...8
    static let defaultSeats = 4

    let code: RoomCode
    let level: SpeedLevel
    /// How many seats the room has (2–8).
    let seats: Int
    /// A practice room's races consume no plays and count on no board.
    let practice: Bool
    /// Formed by the quick-race queue.
    let quick: Bool
    private(set) var state = State.lobby
    /// By seat, lowest first.
    private(set) var racers: [Racer] = []
    /// The racer who may start the race: the opener, then the lowest seat left.
    private(set) var hostSeat: Int?
    /// The race this room is at: 1 until the first race is over, then one more per rematch.
    private(set) var race = 1
    /// The seats racing the current race (set at the countdown); empty in the lobby.
    private(set) var raceSeats: [Int] = []
    /// The host started and the racers' plays are being consumed: still the lobby on the
    /// wire, but nobody joins, readies or starts until it is settled.
    private(set) var starting = false

    /// Not taking joins, readiness or starts: a race is starting, running or being saved.
    var isBusy: Bool { state != .lobby || starting }

    /// A room with its host in seat 0.
    init(code: RoomCode, level: SpeedLevel, seats: Int, practice: Bool, quick: Bool, hostID: Int64, hostName: String) {
        precondition(Self.seatRange.contains(seats), "seats are checked by the reader")
        self.code = code
        self.level = level
        self.seats = seats
        self.practice = practice
        self.quick = quick
        racers = [Racer(seat: 0, playerID: hostID, name: hostName, ready: false, connected: true)]
        hostSeat = 0
    }

    var isEmpty: Bool { racers.isEmpty }
    var isFull: Bool { racers.count >= seats }

    func racer(_ playerID: Int64) -> Racer? { racers.first { $0.playerID == playerID } }
    func racer(seat: Int) -> Racer? { racers.first { $0.seat == seat } }
    func seat(of playerID: Int64) -> Int? { racer(playerID)?.seat }
    var hostRacer: Racer? { hostSeat.flatMap { racer(seat: $0) } }

    /// Seats the player at the lowest free seat. Only in the lobby: a running race takes nobody
    /// new (they may watch it).
    @discardableResult
    func join(playerID: Int64, name: String) throws(RoomRefusal) -> Int {
        if racer(playerID) != nil { throw .alreadyInRoom(code, same: true) }
        guard !isBusy else { throw .raceRunning(code) }
        guard !isFull else { throw .roomFull(code, seats: seats) }
        let taken = Set(racers.map(\.seat))
        let seat = (0..<seats).first { !taken.contains($0) }!
        racers.append(Racer(seat: seat, playerID: playerID, name: name, ready: false, connected: true))
        racers.sort { $0.seat < $1.seat }
        return seat
    }

    struct Departure: Equatable {
        let seat: Int
        /// The player was racing the current race (their game ends as `quit` ends it).
        let wasRacing: Bool
        /// The host passed to another seat.
        let newHostSeat: Int?
    }

    /// Takes the player out of the room, at any state. The host passes to the lowest seat left.
    func leave(playerID: Int64) throws(RoomRefusal) -> Departure {
        guard let seat = seat(of: playerID) else { throw .notInRoom }
        racers.removeAll { $0.seat == seat }
        let wasRacing = raceSeats.contains(seat)
        raceSeats.removeAll { $0 == seat }
        var newHost: Int?
        if hostSeat == seat {
            hostSeat = racers.first?.seat
            newHost = hostSeat
        }
        return Departure(seat: seat, wasRacing: wasRacing, newHostSeat: newHost)
    }

    /// `ready` in the lobby; a running race is refused (its racers are all in it already).
    func setReady(playerID: Int64, _ ready: Bool) throws(RoomRefusal) {
        guard let index = racers.firstIndex(where: { $0.playerID == playerID }) else { throw .notInRoom }
        guard !isBusy else { throw .raceRunning(code) }
        racers[index].ready = ready
    }

    func setConnected(playerID: Int64, _ connected: Bool) {
        guard let index = racers.firstIndex(where: { $0.playerID == playerID }) else { return }
        racers[index].connected = connected
    }

    /// Whether `playerID` may start the race now, and who would race: every racer, 2 or more,
    /// all ready. The host's own `startRace` counts as the host being ready. Changes nothing.
    func checkStart(by playerID: Int64) throws(RoomRefusal) -> [Racer] {
        guard let starter = racer(playerID) else { throw .notInRoom }
        guard !isBusy else { throw .raceRunning(code) }
        guard starter.seat == hostSeat else { throw .notHost }
        guard racers.count >= 2 else {
            throw .notReady("A race needs 2 racers or more; room \(code) has \(racers.count). Share the code \(code).")
        }
        let waiting = racers.filter { !$0.ready && $0.seat != hostSeat }
        guard waiting.isEmpty else {
            let names = waiting.map(\.name).joined(separator: ", ")
            throw .notReady("Not ready yet: \(names).")
        }
        return racers
    }

    /// The host's start is checked: the plays are being consumed.
    func beginStart() {
        precondition(!isBusy)
        starting = true
    }

    /// Fewer than 2 racers' plays could be consumed: back to the lobby, no race run, nobody
    /// whose play failed ready.
    func cancelStart() {
        starting = false
    }

    /// A racer whose play could not be consumed sits out this race, not ready.
    func unready(playerID: Int64) {
        guard let index = racers.firstIndex(where: { $0.playerID == playerID }) else { return }
        racers[index].ready = false
    }

    /// The plays are consumed: these seats race, from the countdown on.
    func beginCountdown(seats: [Int]) {
        precondition(state == .lobby)
        starting = false
        raceSeats = seats.sorted()
        state = .countdown
    }

    /// A room the quick-race queue made goes straight to its countdown, everyone ready.
    func readyEveryone() {
        for index in racers.indices { racers[index].ready = true }
    }

    func beginRacing() {
        precondition(state == .countdown)
        state = .racing
    }

    /// Every racer's game has ended; the results are being saved.
    func finish() {
        precondition(state == .countdown || state == .racing)
        state = .finished
    }

    /// Back to the lobby for a rematch: the next race, nobody ready.
    func backToLobby() {
        race += 1
        state = .lobby
        raceSeats = []
        for index in racers.indices { racers[index].ready = false }
    }
}
