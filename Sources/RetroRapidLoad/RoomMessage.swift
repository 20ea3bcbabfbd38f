/// What a `room` message tells a virtual racer (docs/PROTOCOL.md, "Rooms and races"), read
/// straight from its bytes with `MessageScanner`: the room's code, the receiver's seat, the
/// lobby's state and how many of its racers are in and ready.
struct RoomMessage: Equatable {
    var code: String
    /// The receiver's seat (`you`); nil for a watcher.
    var seat: Int?
    /// `lobby`, `countdown`, `racing` or `finished`.
    var state: String
    var seats: Int
    /// Racers in the room, and how many of them are ready: one `"seat":` and one
    /// `"ready":true` per racer in the `racers` array (`hostSeat` is another key).
    var racers: Int
    var ready: Int

    init?(_ message: MessageScanner) {
        guard message.kind == .room, let code = message.string("code"), let state = message.string("state"),
              let seats = message.integer("seats") else { return nil }
        self.code = code
        self.state = state
        self.seats = seats
        seat = message.integer("you")
        racers = message.occurrences(of: "\"seat\":")
        ready = message.occurrences(of: "\"ready\":true")
    }

    /// Whether the host may start now: every seat taken, every racer ready, nothing running.
    var canStart: Bool { state == "lobby" && racers == seats && ready == seats }
}
