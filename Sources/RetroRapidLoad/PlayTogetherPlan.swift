/// Who sits where in a race or watch test: which room a virtual racer belongs to, which of them
/// opens it, and whose game each virtual watcher follows. Pure, so it can be checked alone.
///
/// Players are indices 0..<players (racers, or solo players), watchers the indices after them.
/// Racers fill rooms in order (0–7 the first room of 8, its host 0); watchers go round the
/// rooms first and then round the seats (with 250 rooms of 8 and 1,000 watchers, every room
/// gets four, on four different racers), or round the players in a solo test.
struct PlayTogetherPlan: Equatable {
    let mode: LoadTestOptions.Mode
    let players: Int
    let roomSeats: Int
    let watchers: Int

    init(mode: LoadTestOptions.Mode, players: Int, roomSeats: Int, watchers: Int) {
        self.mode = mode
        self.players = players
        self.roomSeats = roomSeats
        self.watchers = watchers
    }

    init(_ options: LoadTestOptions) {
        self.init(mode: options.mode, players: options.connections, roomSeats: options.roomSeats, watchers: options.watchers)
    }

    var rooms: Int { mode == .race ? players / roomSeats : 0 }

    func isWatcher(_ index: Int) -> Bool { index >= players }

    func room(of player: Int) -> Int { player / roomSeats }

    /// The racer who opens the room; the others join with the code its `room` answer brings.
    func isHost(_ player: Int) -> Bool { player % roomSeats == 0 }

    func members(ofRoom room: Int) -> Range<Int> { (room * roomSeats)..<((room + 1) * roomSeats) }

    /// The player whose game watcher `index` (a connection index, after the players) follows.
    func target(ofWatcher index: Int) -> Int {
        let watcher = index - players
        switch mode {
        case .solo:
            return watcher % players
        case .race:
            let room = watcher % rooms
            let member = (watcher / rooms) % roomSeats
            return room * roomSeats + member
        }
    }

    /// Every watcher's connection index, listed under the player it follows.
    func watchersByTarget() -> [[Int]] {
        var lists = [[Int]](repeating: [], count: players)
        for index in players..<(players + watchers) { lists[target(ofWatcher: index)].append(index) }
        return lists
    }
}
